/**
 * The scenarioTests tree target in the suite: 80 seeded consumer trees
 * (symbolic links to files and folders, dangling links, link cycles,
 * broken and failing scenarios). None may be skipped, pass when it should
 * fail, or change a file outside its tree.
 */
import assert from "node:assert/strict";
import { fuzzCase } from "../fuzz.ts";

Deno.test("80 generated consumer trees: every scenario a glob names is a test, and fails or passes as it should", async () => {
  const findings: string[] = [];
  const seen = { ok: 0, located: 0 };
  for (let n = 0; n < 80; n++) {
    const r = await fuzzCase(7, n, "scenarioTests");
    if (r.outcome === "finding") findings.push(`case ${n}: ${r.detail}`);
    else seen[r.outcome]++;
  }
  assert.deepEqual(findings, []);
  // Both kinds of tree occur: some with a passing scenario, some with only failing or broken ones.
  assert.ok(seen.ok >= 15 && seen.located >= 15, JSON.stringify(seen));
});
