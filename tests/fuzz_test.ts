/**
 * The mutation fuzzer in the suite: 300 seeded cases over the bundled
 * configurations and trace (tests/fuzz.ts), in-process. Each must run, or
 * fail as an InputError located at a file (the CLI's exit 2); none may
 * print NaN. `deno task fuzz --cases N --seed S` runs longer campaigns, a
 * process per case.
 */
import assert from "node:assert/strict";
import { fuzzCase } from "./fuzz.ts";

Deno.test("300 mutated configurations: each runs or is a located error, and none prints NaN", async () => {
  const findings: string[] = [];
  const seen = { ok: 0, located: 0 };
  for (let n = 0; n < 300; n++) {
    const r = await fuzzCase(1, n, "sim");
    if (r.outcome === "finding") findings.push(`case ${n}: ${r.detail}`);
    else seen[r.outcome]++;
  }
  assert.deepEqual(findings, []);
  // The mutations reach both outcomes: the fuzzer is not only producing parse errors.
  assert.ok(seen.ok >= 30 && seen.located >= 150, JSON.stringify(seen));
});
