/**
 * The `calibrate` fuzz target in the suite: 100 seeded cases, each in a
 * fresh folder; none may be a finding, and both outcomes occur (the
 * mutations neither only break the input nor only leave it valid).
 */
import assert from "node:assert/strict";
import { rng } from "../fuzz.ts";
import { CALIBRATE_TARGET } from "./calibrate.ts";

Deno.test("fuzz target calibrate: 100 cases, each a run or a located error, nothing written outside", async () => {
  const findings: string[] = [];
  const seen = { ok: 0, located: 0 };
  for (let n = 0; n < 100; n++) {
    const dir = Deno.makeTempDirSync({ prefix: "servingcast-fuzz-calibrate-" });
    try {
      const r = await CALIBRATE_TARGET.run(rng(25_000 + n), dir);
      if (r.outcome === "finding") findings.push(`case ${n}: ${r.detail}\n${JSON.stringify(r.files)}`);
      else seen[r.outcome]++;
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  }
  assert.deepEqual(findings, []);
  assert.ok(seen.ok >= 10 && seen.located >= 30, JSON.stringify(seen));
});
