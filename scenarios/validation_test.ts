/**
 * Runs the validation scenarios (`scenarios/validation/`, each a measured
 * public benchmark) as tests, then checks from the same runs that
 * docs/fidelity.md is what `deno task validate` would write and that the
 * published fidelity targets hold.
 *
 * @module
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
import type { ScenarioResult } from "../core/scenario/mod.ts";
import { PENDING_CASES } from "./_files.ts";
import { scenarioTests } from "./testing.ts";

/** Each validation scenario's run, kept by its test for the fidelity check (which runs any a filter skipped). */
const runs = new Map<string, ScenarioResult>();
const files = scenarioTests(new URL("./validation/", import.meta.url), { onRun: (file, run) => runs.set(file, run) });

Deno.test("docs/fidelity.md matches a fresh run of scenarios/validation/", () => {
  const report = fidelityReport(files.map((f) => runs.get(f) ?? runScenario(loadScenario(f))));
  const doc = Deno.readTextFileSync(new URL("../docs/fidelity.md", import.meta.url));
  assert.equal(doc, formatFidelityMarkdown(report, PENDING_CASES), "stale: run `deno task validate`");
  assert.deepEqual(gateFailures(report), []);
  assert.ok(FIDELITY_GATE.medianAbsError <= 0.1 && FIDELITY_GATE.absBias <= 0.05); // issue 10's targets
  assert.ok(report.perChip.length >= 3, "cases on at least three chips");
});
