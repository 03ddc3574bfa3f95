/**
 * The `plan --merge` target in the suite: 100 seeded shard folders (valid,
 * and with shards dropped, duplicated, renamed, cut short, linked, given
 * hostile values or an injected device name, and outputs linked outside).
 * None may crash, print a workflow command, write outside its folder or
 * exit 2 without naming a file or flag.
 */
import assert from "node:assert/strict";
import { rng } from "../fuzz.ts";
import { PLAN_MERGE_TARGET } from "./merge.ts";

Deno.test("100 generated shard folders: plan --merge writes a plan of the search's own values or names the bad file", async () => {
  const findings: string[] = [];
  const seen = { ok: 0, located: 0 };
  for (let n = 0; n < 100; n++) {
    const dir = Deno.makeTempDirSync({ prefix: "servingcast-merge-fuzz-" });
    try {
      const r = await PLAN_MERGE_TARGET.run(rng(25_000 + n), dir);
      if (r.outcome === "finding") findings.push(`case ${n}: ${r.detail} ${JSON.stringify(r.files).slice(0, 300)}`);
      else seen[r.outcome]++;
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  }
  assert.deepEqual(findings, []);
  // Both kinds of folder occur: some merge, some are refused with the file named.
  assert.ok(seen.ok >= 20 && seen.located >= 30, JSON.stringify(seen));
});
