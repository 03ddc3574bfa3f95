/**
 * docs/fidelity.md is what `deno task validate` writes from a fresh run of
 * the validation scenarios, and the published targets hold.
 */
import assert from "node:assert/strict";
import {
  FIDELITY_GATE,
  fidelityReport,
  formatFidelityMarkdown,
  loadScenario,
  runScenario,
} from "../core/scenario/mod.ts";
import { PENDING_CASES, validationFiles } from "../scenarios/_files.ts";

Deno.test("docs/fidelity.md matches a fresh run of scenarios/validation/", () => {
  const report = fidelityReport(validationFiles().map((f) => runScenario(loadScenario(f))));
  const doc = Deno.readTextFileSync(new URL("../docs/fidelity.md", import.meta.url));
  assert.equal(doc, formatFidelityMarkdown(report, PENDING_CASES), "stale: run `deno task validate`");
  assert.ok(report.medianAbsError <= FIDELITY_GATE.medianAbsError, `median |error| ${report.medianAbsError}`);
  assert.ok(Math.abs(report.medianBias) <= FIDELITY_GATE.absBias, `median signed error ${report.medianBias}`);
  assert.ok(report.rows.length >= FIDELITY_GATE.minCases, `${report.rows.length} cases`);
  assert.ok(report.perChip.length >= 3, "cases on at least three chips");
});
