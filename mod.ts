/**
 * ServingCast: a discrete-event simulator of LLM serving deployments that
 * reads the upstream ServingCast YAML files and prints the guide's summary.
 *
 * The usual path is {@link runFiles}: it loads and validates the instance
 * and common files, resolves the deployment (model, devices, parallelism,
 * memory sizing), simulates every request and summarizes the run. The steps
 * are also available one by one: {@link loadConfig}, {@link assemble},
 * {@link simulate}, {@link summarize}, {@link formatSummaryTable}.
 *
 * @example Simulate the bundled example and read a statistic
 * ```ts
 * import { formatSummaryTable, runFiles } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const out = runFiles(["examples/instances.yaml"], "examples/common.yaml");
 * assert.equal(out.summary.overall.total_requests, 1000);
 * assert.ok(out.summary.perMetric["TTFT(s)"].P99 < 1);
 * assert.match(formatSummaryTable(out.summary), /={8} Overall Summary ={8}/);
 * ```
 *
 * @module
 */

export {
  assemble,
  describeRun,
  diagnostics,
  mergeShards,
  parseShard,
  pools,
  runFiles,
  runIdentity,
  runLoaded,
  runSources,
  saturationProbe,
  SHARD_FORMAT,
  shardFile,
  shardInput,
  TABLE_COLUMNS,
  unshardable,
} from "./core/assembly/mod.ts";
export type {
  AssembledGroup,
  AssembledRun,
  AssemblyOptions,
  RunOptions,
  RunOutput,
  Shard,
  ShardEngine,
  ShardFile,
  ShardTable,
} from "./core/assembly/mod.ts";
import { assemble as assembleRun } from "./core/assembly/mod.ts";
import type { AssembledRun as Assembled } from "./core/assembly/mod.ts";
import { sizeMemory as sizeDeviceMemory } from "./core/hardware/mod.ts";

/**
 * The former name of {@link assemble} ("plan" now means the capacity
 * planner only).
 *
 * @deprecated Use {@link assemble}; this alias goes in 1.0.
 */
export const buildPlan: typeof assembleRun = assembleRun;
/**
 * The former name of {@link AssembledRun}.
 *
 * @deprecated Use {@link AssembledRun}; this alias goes in 1.0.
 */
export type SimulationPlan = Assembled;
/**
 * The former name of {@link sizeMemory}.
 *
 * @deprecated Use {@link sizeMemory}; this alias goes in 1.0.
 */
export const planMemory: typeof sizeDeviceMemory = sizeDeviceMemory;
export { deploymentSection, poolSections, runJson, simulationSection } from "./core/report/run_json.ts";
export {
  ADMISSION_POLICIES,
  applyProfile,
  CALIBRATED_CONSTANTS,
  CALIBRATED_FILE,
  Calibration,
  calibration,
  ENGINE_BACKENDS,
  ENGINES,
  formatInputError,
  HOST_PINS,
  hostOf,
  hostPinOf,
  InputError,
  loadConfig,
  PROFILE_RECORDS,
  resolveLayout,
  resolveProfile,
  ROUTING_POLICIES,
  YamlSource,
} from "./core/config/mod.ts";
export type {
  ArrivalConfig,
  CalibratedConstant,
  CalibratedFile,
  CommonFile,
  CommunicationConfig,
  ConstantValues,
  EngineBackend,
  EngineName,
  FileSystem,
  FixedLengthLoadGen,
  HostFamily,
  HostModel,
  HostPin,
  HostQuantity,
  InstanceGroupConfig,
  KvMemoryRule,
  LaunchMode,
  LayoutOutcome,
  LayoutViolation,
  LengthDistConfig,
  LoadedConfig,
  LoadedGroup,
  LoadedTrace,
  LoadGenConfig,
  ModelConfig,
  Override,
  ParallelConfig,
  PathPart,
  ProfileContext,
  ProfileDefaults,
  ProfiledServing,
  ProfileKey,
  ProfileRecord,
  RequestClassConfig,
  ResolvedProfile,
  RunLimits,
  ServingConfig,
  SessionsConfig,
  SourceLocation,
  SpeculativeConfig,
  SyntheticLoadGen,
  ThinkTimeConfig,
  TraceLoadGen,
} from "./core/config/mod.ts";
export { kvBytesPerToken, MODEL_CATALOG, modelSpecFromHf, paramCounts } from "./core/model/mod.ts";
export type { FieldError, HfConfig, MlaSpec, ModelSpec, MoeSpec, ParamCounts } from "./core/model/mod.ts";
export { DEVICE_CATALOG, Kernels, KernelTables, RooflineCostModel, sizeMemory } from "./core/hardware/mod.ts";
export type {
  BatchShape,
  CollectiveKind,
  CostModelInput,
  DeviceSpec,
  Efficiencies,
  EngineLayout,
  KernelTableEngine,
  LaunchSpec,
  LayerShapes,
  LinearQuant,
  MatrixPeaks,
  MemoryLimits,
  MemorySizing,
  MoeShape,
  StepBreakdown,
  StepCostModel,
  TimeParts,
} from "./core/hardware/mod.ts";
export type {
  ArrivalSpec,
  LengthBin,
  LengthDist,
  PrefixIds,
  RateSegment,
  RequestClass,
  RequestDraw,
  RequestSource,
  SessionLink,
  SessionSpec,
  ThinkTime,
  TraceRecord,
} from "./core/workload/mod.ts";
export { simulate } from "./core/engine/mod.ts";
export { SCHEDULER_NAMES } from "./core/policy/mod.ts";
export type { AdmissionName, MindieLoop, NewTokenRatio, PrefixAwareWeights, SchedulerName } from "./core/policy/mod.ts";
export type {
  AdmissionPolicy,
  EngineRole,
  EngineSpec,
  EngineStats,
  RecordedRequest,
  RequestTable,
  RoutingPolicyName,
  SimulationInput,
  SimulationOptions,
  SimulationResult,
  StepRecord,
  TransferRecord,
  WorkloadSpec,
} from "./core/engine/mod.ts";
export {
  ALL_STATISTICS,
  EXACT_UP_TO,
  EXT_COLUMNS,
  KEEP_UP_TOLERANCE,
  kvStarvedLine,
  LatencyDistribution,
  loadStats,
  METRIC_COLUMNS,
  OVERALL_KEYS,
  overloadSummary,
  PERCENTILES,
  poolStats,
  predictionBound,
  predictionInterval,
  RequestStream,
  RESIDUALS,
  SKETCH_RELATIVE_ACCURACY,
  STATISTICS,
  STREAM_COLUMNS,
  summarize,
} from "./core/metrics/mod.ts";
export type {
  ColumnStats,
  DistributionJson,
  ExtColumn,
  GoodputSlos,
  GoodputStats,
  GroupKv,
  GroupTimeSeries,
  Headroom,
  IntervalContext,
  LoadStats,
  MetricColumn,
  MetricKind,
  OverallKey,
  Percentile,
  PercentileIntervals,
  PoolStats,
  PredictionInterval,
  PrefixCacheStats,
  Probe,
  RequestFigures,
  Residual,
  Statistic,
  StreamColumn,
  StreamJson,
  Summary,
  SummaryOptions,
  TimeSeries,
} from "./core/metrics/mod.ts";
export { alignColumns, columnWidths } from "./core/text/mod.ts";
export type { Align, ColumnLayout } from "./core/text/mod.ts";
export {
  formatChromeTrace,
  formatExtSection,
  formatGroupTable,
  formatRequestCsv,
  formatSummaryJson,
  formatSummaryTable,
  renderSvg,
  summaryExtSections,
} from "./core/report/mod.ts";
export type { JsonExtras, VegaLiteSpec } from "./core/report/mod.ts";
export {
  calibrate,
  calibrateScenarios,
  detectFormat,
  deviceFileText,
  FIT_PARAMETERS,
  loadManifest,
  loadScenarioCases,
  readMeasurements,
  readProfileExport,
  simulateRun,
} from "./core/calibrate/mod.ts";
export type {
  CalibrateOptions,
  CalibrationResult,
  CalibrationSetup,
  DeviceCalibration,
  FitParameter,
  FitValues,
  Manifest,
  MeasuredMetrics,
  MeasuredRun,
  MeasurementFormat,
  PointError,
  ScenarioCalibrateOptions,
  ScenarioCalibration,
  ScenarioCase,
  ScenarioCaseOptions,
  ScenarioManifest,
} from "./core/calibrate/mod.ts";
// The scenario types that calibration to validation scenarios (ScenarioCase) refers to.
export { MAX_RATE_MEETING, MIN_VALUE_MEETING, OPERATORS } from "./core/scenario/mod.ts";
export type {
  BaselineSpec,
  Better,
  Bound,
  CapacityAnswer,
  CheckResult,
  ConfigRef,
  Expr,
  LoadScenarioOptions,
  Measurement,
  MeasurementResult,
  MetricRef,
  MetricUnit,
  Operator,
  PointVerdict,
  Scenario,
  ScenarioAssertion,
  ScenarioOverride,
  ScenarioResult,
  SeedSpec,
  SweepAxis,
  SweepPoint,
  SweepSpec,
  Tolerance,
} from "./core/scenario/mod.ts";
// Scenario files as Deno tests in any repository (the README's "Use in your own repository").
export { scenarioTests } from "./scenarios/testing.ts";
export { runBaseline } from "./scenarios/baseline.ts";
export type { ScenarioTestOptions } from "./scenarios/testing.ts";
export { planDeployments, planLaunchFiles, rateBounds } from "./core/planner/mod.ts";
export { ENGINE_ARGS, LAUNCH_ENGINES, launchFiles, launchSettings } from "./core/launch/mod.ts";
export type {
  Command,
  EngineArgs,
  Flag,
  LaunchEngine,
  LaunchSettings,
  LaunchTarget,
  OptionKey,
} from "./core/launch/mod.ts";
export type {
  CandidateId,
  CandidateOutcome,
  FailingCandidate,
  InfeasibleCandidate,
  ParallelKind,
  PlannedCandidate,
  PlanRequest,
  PlanResult,
  PlanSlo,
  RateBounds,
  Topology,
} from "./core/planner/mod.ts";
