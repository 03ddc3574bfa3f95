/**
 * The hardware model: device facts, quantization, the per-operator roofline
 * step-time model (attention and FFN blocks over timing primitives), and the
 * per-device memory sizing.
 *
 * @module
 */
export type { StepCostModel } from "./cost_model.ts";
export type { DeviceSpec, Efficiencies, MatrixPeaks } from "./device.ts";
export { DEVICE_CATALOG } from "./devices.ts";
export { kvValueBytes, linearQuant } from "./quant.ts";
export type { LinearQuant } from "./quant.ts";
export { decodeBatch, emptyBatch, prefillBatch } from "./batch.ts";
export type { BatchShape, StepBreakdown, TimeParts } from "./batch.ts";
export { tensorParallel } from "./layout.ts";
export type { EngineLayout } from "./layout.ts";
export { ACT_BYTES, GEMM_TILE_ROWS, Kernels } from "./kernels.ts";
export type { CollectiveKind } from "./kernels.ts";
export { expectedTouched } from "./ffn.ts";
export { RooflineCostModel } from "./roofline.ts";
export { KernelTables } from "./kernel_tables.ts";
export type { KernelTableEngine, MoeShape } from "./kernel_tables.ts";
export type { CostModelInput, LaunchSpec, LayerShapes } from "./roofline.ts";
export { sizeMemory } from "./memory.ts";
export type { MemoryLimits, MemorySizing } from "./memory.ts";
