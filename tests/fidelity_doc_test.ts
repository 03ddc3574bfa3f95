/**
 * docs/fidelity.md is what `deno task validate` writes from a fresh run of
 * the validation scenarios, and the published targets hold.
 */
import assert from "node:assert/strict";
import {
  FIDELITY_GATE,
  fidelityReport,
  formatFidelityMarkdown,
  gateFailures,
  loadScenario,
  runScenario,
} from "../core/scenario/mod.ts";
import { PENDING_CASES, validationFiles } from "../scenarios/_files.ts";

Deno.test("docs/fidelity.md matches a fresh run of scenarios/validation/", () => {
  const report = fidelityReport(validationFiles().map((f) => runScenario(loadScenario(f))));
  const doc = Deno.readTextFileSync(new URL("../docs/fidelity.md", import.meta.url));
  assert.equal(doc, formatFidelityMarkdown(report, PENDING_CASES), "stale: run `deno task validate`");
  assert.deepEqual(gateFailures(report), []);
  assert.ok(FIDELITY_GATE.medianAbsError <= 0.1 && FIDELITY_GATE.absBias <= 0.05); // issue 10's targets
  assert.ok(report.perChip.length >= 3, "cases on at least three chips");
});

Deno.test("the fidelity gate names every target a report misses", () => {
  const group = (name: string, cases: number, medianAbsError: number) => ({
    cases,
    medianAbsError,
    medianBias: 0,
    name,
  });
  const report = {
    rows: new Array(50).fill(null),
    medianAbsError: 0.12,
    maxAbsError: 1,
    medianBias: -0.06,
    perChip: [{ ...group("", 4, 0.2), chip: "MI300X_192G" }, { ...group("", 2, 0.5), chip: "L40S_48G" }],
    perEngine: [{ ...group("", 30, 0.14), engine: "vllm" }],
  } as unknown as Parameters<typeof gateFailures>[0];
  assert.deepEqual(gateFailures(report), [
    "median |error| 12.0% > 10.0%",
    "median signed error -6.0% beyond ±5.0%",
    "50 cases < 120",
    "MI300X_192G: median |error| 20.0% > 15.0%",
  ]);
});
