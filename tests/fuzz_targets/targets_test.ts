/**
 * Every fuzz target beside the simulator's (tests/fuzz_test.ts) in the
 * suite: 100 seeded cases each (80 consumer trees), each case in a fresh
 * temporary folder through `fuzzCase`, as `deno task fuzz --target NAME`
 * runs them. None may be a finding: an uncaught exception, an internal
 * error, an exit 2 naming no file or flag, NaN or Infinity, a workflow
 * command on stdout, a write outside the case's folder, or (for
 * `scenarioTests`) a scenario file a glob names that is not a test or that
 * passes when it should fail. Both outcomes occur for each: the mutations
 * neither only break the input nor only leave it valid.
 */
import assert from "node:assert/strict";
import { fuzzCase } from "../fuzz.ts";

/** Each target's cases, seed, and the fewest of each outcome its campaign must reach. */
const CAMPAIGNS: { target: string; cases: number; seed: number; ok: number; located: number }[] = [
  { target: "plan --merge", cases: 100, seed: 25, ok: 20, located: 30 },
  { target: "compare", cases: 100, seed: 25, ok: 20, located: 20 },
  { target: "calibrate", cases: 100, seed: 25, ok: 10, located: 30 },
  { target: "scenarioTests", cases: 80, seed: 7, ok: 15, located: 15 },
];

for (const c of CAMPAIGNS) {
  Deno.test(`fuzz target ${c.target}: ${c.cases} cases, no finding, both outcomes`, async () => {
    const findings: string[] = [];
    const seen = { ok: 0, located: 0 };
    for (let n = 0; n < c.cases; n++) {
      const r = await fuzzCase(c.seed, n, c.target);
      if (r.outcome === "finding") {
        findings.push(`case ${n}: ${r.detail} ${JSON.stringify(r.files ?? {}).slice(0, 400)}`);
      } else seen[r.outcome]++;
    }
    assert.deepEqual(findings, []);
    assert.ok(seen.ok >= c.ok && seen.located >= c.located, JSON.stringify(seen));
  });
}
