/**
 * Calibration to the user's own cluster: measured runs (or validation
 * scenarios) in, fitted device constants out (`deno task calibrate`).
 *
 * @module
 */
export {
  calibrate,
  calibrateTargets,
  deviceFileText,
  deviceValues,
  FIT_ITERATIONS,
  FIT_PARAMETERS,
  FIT_RANGE,
  simulateRun,
} from "./fit.ts";
export type {
  CalibrateOptions,
  CalibrationResult,
  CalibrationSetup,
  FitParameter,
  FitTarget,
  FitValues,
  PointError,
} from "./fit.ts";
export {
  CSV_COLUMNS,
  detectFormat,
  readMeasurementCsv,
  readMeasurements,
  readProfileExport,
  readSglangResults,
  readVllmResult,
} from "./measurements.ts";
export type { MeasuredMetrics, MeasuredRun, MeasurementFormat } from "./measurements.ts";
export { expandScenarioPaths, loadManifest, ManifestSchema } from "./manifest.ts";
export type { Manifest, ScenarioManifest } from "./manifest.ts";
export { calibrateScenarios, loadScenarioCases, scenarioTarget } from "./scenarios.ts";
export type {
  DeviceCalibration,
  ScenarioCalibrateOptions,
  ScenarioCalibration,
  ScenarioCase,
  ScenarioCaseOptions,
} from "./scenarios.ts";
