/**
 * Scenarios: serving configurations with SLO assertions, run like tests.
 *
 * @module
 */
export { holds, OPERATORS, parseBound } from "./assertion.ts";
export type { Bound, Operator } from "./assertion.ts";
export { METRIC_KEY_NAMES, resolveMetric } from "./metric_keys.ts";
export type { MetricRef } from "./metric_keys.ts";
export { loadScenario, runScenario, ScenarioFileSchema } from "./scenario.ts";
export type {
  AssertionResult,
  Measurement,
  MeasurementResult,
  Scenario,
  ScenarioAssertion,
  ScenarioResult,
} from "./scenario.ts";
export { fidelityReport, formatFidelityMarkdown, formatFidelityTable } from "./fidelity.ts";
export type { FidelityReport, FidelityRow, PendingCase } from "./fidelity.ts";
