/**
 * The memory sizing of one engine: what one device of its TP group holds
 * (weights, an activation reserve, runtime buffers) and how many KV blocks
 * are left.
 *
 * @module
 */
import type { RooflineCostModel } from "./roofline.ts";

/** Serving limits the memory sizing depends on. */
export interface MemoryLimits {
  /** Share of device memory the engine may use, (0, 1]. */
  readonly memoryFraction: number;
  /** Tokens per KV block. */
  readonly blockSize: number;
  /** Tokens per step (the largest forward pass). */
  readonly maxTokens: number;
  /** Sequences per step (rows of logits). */
  readonly maxSeqs: number;
  /** A pinned block count, or null to derive it from memory. */
  readonly pinnedBlocks: number | null;
  /**
   * What `memoryFraction` is a share of (default `vllm`): the engine's whole
   * footprint (`vllm`: weights, activations, runtime and KV), weights and KV
   * only (`sglang`'s mem_fraction_static), or the memory still free once
   * the rest is allocated (`trtllm`'s free_gpu_memory_fraction).
   */
  readonly accounting?: "vllm" | "sglang" | "trtllm";
}

/** Bytes on one device of an engine. */
export interface MemorySizing {
  /** Device memory, bytes. */
  readonly deviceBytes: number;
  /** deviceBytes × memoryFraction. */
  readonly usableBytes: number;
  /** Weights resident on one device, bytes. */
  readonly weightBytes: number;
  /** Peak activations of the largest step. */
  readonly activationBytes: number;
  /** Runtime buffers outside the model (context, communicators, graphs). */
  readonly runtimeBytes: number;
  /** Bytes one KV block takes on one device. */
  readonly kvBlockBytes: number;
  /** KV blocks of the engine. */
  readonly kvBlocks: number;
  /** kvBlocks × blockSize. */
  readonly kvTokens: number;
  /** Bytes left for the KV cache (negative: the model does not fit). */
  readonly kvBytes: number;
}

/**
 * Runtime buffers outside the model's tensors: the CUDA/CANN context,
 * communicator buffers and captured graphs. 1 GiB is an assumption of the
 * order vLLM's memory profiler reports on one GPU (non-torch memory plus the
 * graph pool); no measurement in shared/reference pins it.
 */
const RUNTIME_BYTES = 2 ** 30;

/**
 * Plans memory for one device of an engine.
 *
 * @param cost the engine's cost model (for weight and KV sizes)
 * @param limits serving limits
 *
 * @example KV capacity at a smaller memory share, or a pinned block count
 * ```ts
 * import { assemble, loadConfig, sizeMemory } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const files: Record<string, string> = { "i.yaml": i, "c.yaml": c };
 * const fs = { readText: (p: string) => files[p], isDirectory: () => false };
 * const g = assemble(loadConfig(["i.yaml"], "c.yaml", fs)).groups[0];
 * const limits = { memoryFraction: 0.5, blockSize: 16, maxTokens: 8192, maxSeqs: 256, pinnedBlocks: null };
 * const half = sizeMemory(g.cost, limits);
 * assert.ok(half.kvTokens < g.memory.kvTokens);
 * assert.equal(half.kvTokens, half.kvBlocks * 16);
 * assert.equal(sizeMemory(g.cost, { ...limits, pinnedBlocks: 100 }).kvBlocks, 100);
 * ```
 */
export function sizeMemory(cost: RooflineCostModel, limits: MemoryLimits): MemorySizing {
  const { model: m, device: d, layout: l } = cost.input;
  const usable = d.memoryBytes * limits.memoryFraction;
  // The largest step's live activations (residual stream, projections, the
  // FFN's or experts' intermediate, BF16), plus FP32 logits for every sequence.
  const activations = limits.maxTokens * cost.shapes.activationBytesPerToken +
    limits.maxSeqs * Math.ceil(m.vocab / l.lmheadTp) * 4;
  const kvBlockBytes = limits.blockSize * cost.kvBytesPerToken;
  const rest = cost.weightBytesPerDevice + activations + RUNTIME_BYTES;
  const kvBytes = limits.accounting === "sglang"
    ? usable - cost.weightBytesPerDevice -
      (d.memoryBytes - usable < activations + RUNTIME_BYTES
        ? activations + RUNTIME_BYTES - (d.memoryBytes - usable)
        : 0)
    : limits.accounting === "trtllm"
    ? limits.memoryFraction * (d.memoryBytes - rest)
    : usable - rest;
  const kvBlocks = limits.pinnedBlocks ?? Math.max(0, Math.floor(kvBytes / kvBlockBytes));
  return {
    deviceBytes: d.memoryBytes,
    usableBytes: usable,
    weightBytes: cost.weightBytesPerDevice,
    activationBytes: activations,
    runtimeBytes: RUNTIME_BYTES,
    kvBlockBytes,
    kvBlocks,
    kvTokens: kvBlocks * limits.blockSize,
    kvBytes,
  };
}
