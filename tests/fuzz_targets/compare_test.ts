/**
 * The `compare` fuzz target in the suite: 100 seeded cases, each in a
 * fresh temporary folder. None may be a finding, and both outcomes occur
 * (the mutations reach documents that compare and ones that are refused).
 */
import assert from "node:assert/strict";
import { rng } from "../fuzz.ts";
import { COMPARE_TARGET } from "./compare.ts";

Deno.test("compare fuzz target: 100 cases, no finding, both compared and located refusals", async () => {
  const findings: string[] = [];
  const seen = { ok: 0, located: 0 };
  for (let n = 0; n < 100; n++) {
    const dir = Deno.makeTempDirSync({ prefix: "servingcast-fuzz-compare-" });
    try {
      const r = await COMPARE_TARGET.run(rng(25_000 + n), dir);
      if (r.outcome === "finding") findings.push(`case ${n}: ${r.detail}`);
      else seen[r.outcome]++;
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  }
  assert.deepEqual(findings, []);
  assert.ok(seen.ok >= 20 && seen.located >= 20, JSON.stringify(seen));
});
