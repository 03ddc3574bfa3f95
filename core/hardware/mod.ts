/**
 * The hardware model: device facts, quantization, the per-operator roofline
 * step-time model, and the per-device memory plan.
 *
 * @module
 */
export type { StepCostModel } from "./cost_model.ts";
export type { DeviceSpec, Efficiencies, MatrixPeaks } from "./device.ts";
export { DEVICE_CATALOG } from "./devices.ts";
export { kvValueBytes, linearQuant } from "./quant.ts";
export type { LinearQuant } from "./quant.ts";
export { emptyBatch, RooflineCostModel } from "./roofline.ts";
export type { BatchShape, CostModelInput, EngineLayout, LayerShapes, StepBreakdown } from "./roofline.ts";
export { planMemory } from "./memory.ts";
export type { MemoryLimits, MemoryPlan } from "./memory.ts";
