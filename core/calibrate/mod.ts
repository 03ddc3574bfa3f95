/**
 * Calibration to the user's own cluster: measured runs in, fitted device
 * constants out (`deno task calibrate`).
 *
 * @module
 */
export { calibrate, deviceFileText, deviceValues, FIT_PARAMETERS, FIT_RANGE, simulateRun } from "./fit.ts";
export type { CalibrationResult, CalibrationSetup, FitParameter, FitValues } from "./fit.ts";
export { CSV_COLUMNS, readMeasurementCsv, readSglangResults, readVllmResult } from "./measurements.ts";
export type { MeasuredMetrics, MeasuredRun } from "./measurements.ts";
export { loadManifest, ManifestSchema } from "./manifest.ts";
export type { Manifest } from "./manifest.ts";
