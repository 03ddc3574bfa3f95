/**
 * Configuration: the upstream ServingCast files (instance and common),
 * validated with positions for every error, with the engine profiles and
 * calibrated constants they name. What turns them into engines is
 * core/assembly/.
 *
 * @module
 */
export { describeValue, formatInputError, InputError } from "./errors.ts";
export type { SourceLocation } from "./errors.ts";
export { keyPathString, YamlSource } from "./source.ts";
export type { Override } from "./source.ts";
export type { PathPart } from "./source.ts";
export { closest, editDistance, knownKeys, validate } from "./validate.ts";
export {
  ADMISSION_POLICIES,
  ARRIVAL_PROCESSES,
  ATTENTION_QUANT,
  CommonFileSchema,
  IGNORED_MODEL_KEYS,
  InstanceFileSchema,
  LINEAR_QUANT,
  PD_ROLES,
  ROUTING_POLICIES,
} from "./schema.ts";
export type {
  ArrivalConfig,
  CommonFile,
  CommunicationConfig,
  FixedLengthLoadGen,
  InstanceFile,
  InstanceGroupConfig,
  LengthDistConfig,
  LoadGenConfig,
  ModelConfig,
  ParallelConfig,
  RequestClassConfig,
  RunLimits,
  ServingConfig,
  SessionsConfig,
  SpeculativeConfig,
  SyntheticLoadGen,
  ThinkTimeConfig,
  TraceLoadGen,
} from "./types.ts";
export { DeviceFileSchema, deviceFromFile } from "./device_schema.ts";
export type { DeviceFile } from "./device_schema.ts";
export { denoFileSystem, loadConfig, loadConfigSources, readYaml } from "./load.ts";
export type { FileSystem, LoadedConfig, LoadedGroup, LoadedTrace } from "./load.ts";
export { CALIBRATED_FILE, Calibration, hostConstant, MODEL_CONSTANTS } from "./calibrated.ts";
export type {
  CalibratedConstant,
  CalibratedFile,
  ConstantValues,
  HostFamily,
  HostPin,
  HostQuantity,
} from "./calibrated.ts";
export { resolveLayout } from "./layout.ts";
export type { LayoutOutcome, LayoutViolation } from "./layout.ts";
export {
  applyProfile,
  CALIBRATED_CONSTANTS,
  calibration,
  ENGINE_BACKENDS,
  ENGINES,
  HOST_PINS,
  hostOf,
  hostPinOf,
  PROFILE_RECORDS,
  resolveProfile,
} from "./engine_profiles.ts";
export type {
  EngineBackend,
  EngineName,
  HostModel,
  KvMemoryRule,
  LaunchMode,
  ProfileContext,
  ProfileDefaults,
  ProfiledServing,
  ProfileKey,
  ProfileRecord,
  ResolvedProfile,
} from "./engine_profiles.ts";
