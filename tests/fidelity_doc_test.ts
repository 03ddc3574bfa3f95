/**
 * docs/fidelity.md is what `deno task validate` writes from a fresh run of
 * the validation scenarios, and the published targets hold.
 */
import assert from "node:assert/strict";
import { fidelityReport, formatFidelityMarkdown, loadScenario, runScenario } from "../core/scenario/mod.ts";
import { PENDING_CASES, validationFiles } from "../scenarios/_files.ts";

Deno.test("docs/fidelity.md matches a fresh run of scenarios/validation/", () => {
  const report = fidelityReport(validationFiles().map((f) => runScenario(loadScenario(f))));
  const doc = Deno.readTextFileSync(new URL("../docs/fidelity.md", import.meta.url));
  assert.equal(doc, formatFidelityMarkdown(report, PENDING_CASES), "stale: run `deno task validate`");
  assert.ok(report.medianAbsError <= 0.15, `median |error| ${report.medianAbsError}`);
  assert.ok(report.maxAbsError <= 0.4, `largest |error| ${report.maxAbsError}`);
  assert.ok(report.perChip.length >= 3, "cases on at least three chips");
});
