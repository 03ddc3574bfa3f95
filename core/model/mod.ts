/**
 * Model architectures: the offline catalog and what follows from an
 * architecture (parameter counts, KV bytes per token).
 *
 * @module
 */
export { MODEL_ALIASES, MODEL_CATALOG } from "./catalog.ts";
export type { HfConfig } from "./catalog.ts";
export {
  flopCoefficients,
  forwardFlops,
  kvBytesPerToken,
  kvValuesPerTokenPerLayer,
  modelSpecFromHf,
  paramCounts,
} from "./model_spec.ts";
export type { FieldError, FlopCoefficients, MlaSpec, ModelSpec, MoeSpec, ParamCounts } from "./model_spec.ts";
