/**
 * Model architectures: the offline catalog and what follows from an
 * architecture (parameter counts, KV bytes per token).
 *
 * @module
 */
export { MODEL_ALIASES, MODEL_CATALOG } from "./catalog.ts";
export type { HfConfig } from "./catalog.ts";
export { forwardFlops, kvBytesPerToken, kvValuesPerTokenPerLayer, modelSpecFromHf, paramCounts } from "./model_spec.ts";
export type { FieldError, MlaSpec, ModelSpec, MoeSpec, ParamCounts } from "./model_spec.ts";
