/**
 * Scenarios: serving configurations with SLO assertions, variants, sweeps
 * and baselines, run like tests.
 *
 * @module
 */
export {
  evalExpr,
  exprRefs,
  holds,
  margin,
  OPERATORS,
  parseBound,
  parseExpr,
  TIME,
  unitMismatch,
} from "./assertion.ts";
export type { Bound, Expr, Operator, Tolerance } from "./assertion.ts";
export { METRIC_KEY_NAMES, resolveMetric } from "./metric_keys.ts";
export type { Better, MetricRef, MetricUnit } from "./metric_keys.ts";
export {
  loadScenario,
  MAX_RATE_MEETING,
  MIN_VALUE_MEETING,
  parseKeyPath,
  ScenarioFileSchema,
  VariantSchema,
} from "./scenario.ts";
export type {
  BaselineSpec,
  ConfigRef,
  LoadScenarioOptions,
  Measurement,
  Scenario,
  ScenarioAssertion,
  ScenarioOverride,
  SeedSpec,
  SweepAxis,
  SweepSpec,
} from "./scenario.ts";
export {
  boundValue,
  CAPACITY_MAX_REQUESTS,
  CONFIRM_FACTOR,
  LoadedConfigs,
  overloadNote,
  runScenario,
  scenarioSources,
} from "./runner.ts";
export type {
  CapacityAnswer,
  CheckResult,
  MeasurementResult,
  PointVerdict,
  ScenarioResult,
  ScenarioRunOptions,
  SweepPoint,
} from "./runner.ts";
export { isIntegerKey } from "./key_types.ts";
export { formatSweepRows, sweepJson, sweepRows } from "./sweep_table.ts";
export type { SeedFigures, SweepRow } from "./sweep_table.ts";
export { compareBaseline, formatBaseline, readBaseline, snapshot } from "./baseline.ts";
