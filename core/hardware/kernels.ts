/**
 * Timing primitives of one device: a GEMM, a memory stream, an attention
 * kernel and a collective, each as a roofline (max of compute and memory
 * time) plus a fixed cost. The blocks of `attention.ts` and `ffn.ts` are
 * built from these.
 *
 * @module
 */
import type { DeviceSpec, MatrixPeaks } from "./device.ts";
import type { KernelTables, MoeShape } from "./kernel_tables.ts";

/** Activations are BF16 throughout. */
export const ACT_BYTES = 2;

/**
 * Tensor-core GEMMs compute whole tiles of 64 rows (Hopper wgmma m64; Ampere
 * and Ascend cube kernels use tiles of 64–128 rows), so a decode GEMM with M
 * rows costs the FLOPs of ⌈M/64⌉·64 rows. With the memory roofline this gives
 * the low small-M efficiency measured by DeepGEMM (calibration §1).
 */
export const GEMM_TILE_ROWS = 64;

/**
 * Rows a GEMM with M rows computes: small M runs on the smallest tile that
 * covers it (the 16-row MMA granularity, doubled up to 64), larger M in
 * whole 64-row tiles.
 */
export function paddedRows(m: number): number {
  if (m <= 16) return 16;
  if (m <= 32) return 32;
  return Math.ceil(m / GEMM_TILE_ROWS) * GEMM_TILE_ROWS;
}

/**
 * A GEMM's loads and MMAs overlap only partly: the shorter of the two adds
 * this fraction of its time. Read off DeepGEMM FP8 on H800 (calibration §1):
 * at M = 64 and 128 it reaches 206–336 and 533–645 TFLOPS, against ≈ 385 and
 * ≈ 770 if loads and MMAs overlapped fully (max of the two times) and ≈ 300
 * and ≈ 500 if they did not overlap at all (sum): the measurements sit from
 * half-way to all the way toward the sum, so 0.75.
 */
export const OVERLAP = 0.75;

/** Roofline with partial overlap: max(c, m) + OVERLAP · min(c, m). */
export function roofline(compute: number, memory: number): number {
  return compute > memory ? compute + OVERLAP * memory : memory + OVERLAP * compute;
}

/** Collective patterns, by the share of the buffer each rank moves. */
export type CollectiveKind = "all_reduce" | "all_gather" | "reduce_scatter" | "all_to_all";

/** Timing primitives of one device. Units: seconds, bytes, FLOPs. */
export class Kernels {
  /** The device. */
  readonly device: DeviceSpec;
  /** Seconds per byte streamed from HBM at the achieved bandwidth. */
  readonly byteTime: number;
  /** The engine's measured kernel tables on this device, when the deployment names an engine that has them. */
  readonly tables?: KernelTables;
  #flopTime: Record<keyof MatrixPeaks, number>;
  #attnFlopTime: number;
  #rawByteTime: number;
  /** Seconds per byte of expert weights a MoE grouped GEMM streams. */
  readonly moeByteTime: number;
  #mlaByteTime: number;

  /**
   * Precomputes the achieved rates of a device.
   *
   * @param device the accelerator
   * @param tables measured kernel times that replace the roofline where they apply
   */
  constructor(device: DeviceSpec, tables?: KernelTables) {
    this.device = device;
    this.tables = tables;
    this.#rawByteTime = 1 / device.hbmBandwidth;
    const e = device.efficiency;
    this.byteTime = 1 / (device.hbmBandwidth * e.memory);
    this.moeByteTime = 1 / (device.hbmBandwidth * (e.moeMemory ?? e.memory));
    this.#mlaByteTime = 1 / (device.hbmBandwidth * (e.mlaDecodeMemory ?? e.memory));
    const t = (peak: number, eff: number) => (peak > 0 ? 1 / (peak * eff) : Infinity);
    this.#flopTime = {
      bf16: t(device.peaks.bf16, e.matmul),
      fp16: t(device.peaks.fp16, e.matmul),
      fp8: t(device.peaks.fp8, e.matmulLowPrecision),
      int8: t(device.peaks.int8, e.matmulLowPrecision),
      fp4: t(device.peaks.fp4, e.matmulLowPrecision),
    };
    this.#attnFlopTime = t(device.peaks.bf16, e.attention);
  }

  /** Seconds per FLOP of a GEMM at the given matrix type. */
  flopTime(peak: keyof MatrixPeaks): number {
    return this.#flopTime[peak];
  }

  /**
   * A GEMM (m × k) · (k × n) whose weights take `wb` bytes each.
   *
   * @param m rows (tokens); 0 costs nothing
   * @param weightShare fraction of the weights actually read (MoE: touched experts)
   */
  gemm(m: number, n: number, k: number, wb: number, peak: keyof MatrixPeaks, weightShare = 1): number {
    if (m <= 0) return 0;
    if (this.tables && weightShare === 1) {
      const dtype = (peak === "bf16" || peak === "fp16") && wb === 2
        ? "bf16"
        : peak === "fp8" && wb === 1
        ? "fp8"
        : undefined;
      const t = dtype && this.tables.gemm(m, n, k, dtype);
      // A model streams every layer's weights from HBM once per step: no
      // faster than the bandwidth, whatever a benchmark re-reading one
      // matrix from L2 measured.
      if (t) return Math.max(t, n * k * wb * this.#rawByteTime);
    }
    const compute = 2 * paddedRows(m) * n * k * this.#flopTime[peak];
    const memory = (n * k * wb * weightShare + m * (n + k) * ACT_BYTES) * this.byteTime;
    return roofline(compute, memory) + this.device.matmulOpOverhead;
  }

  /** An attention kernel: BF16 FLOPs at the attention efficiency against bytes at HBM speed. */
  attention(flops: number, bytes: number): number {
    const c = flops * this.#attnFlopTime;
    const m = bytes * this.byteTime;
    return (c > m ? c : m) + this.device.matmulOpOverhead;
  }

  /**
   * Decode attention of one layer: `seqs` sequences with `context` KV
   * tokens on average, `kvHeads` KV heads on the device at `kvBytes` per
   * value; `flops` and `bytes` for the roofline when no table applies,
   * `cacheBytes` (of `bytes`, the KV cache read) for the tables.
   */
  decodeAttention(
    flops: number,
    bytes: number,
    seqs: number,
    context: number,
    kvHeads: number,
    kvBytes: number,
    cacheBytes: number = bytes,
  ): number {
    // The tables scale with the KV cache read (`cacheBytes`); Q and O, a fixed part per sequence, would
    // otherwise make a longer context cheaper per byte and the step faster.
    const t = this.tables?.decodeAttention(seqs, context, kvHeads, kvBytes, cacheBytes);
    return t === undefined ? this.attention(flops, bytes) : Math.max(t, bytes * this.#rawByteTime);
  }

  /** Causal prefill attention of one layer over sequences of about `seqLen` tokens. */
  prefillAttention(flops: number, bytes: number, seqLen: number, kvHeads: number): number {
    const t = this.tables?.prefillAttention(flops, seqLen, kvHeads);
    return t === undefined ? this.attention(flops, bytes) : Math.max(t, bytes * this.#rawByteTime);
  }

  /**
   * Absorbed MLA decode attention of one layer, from the engine's measured
   * MLA kernel when the tables hold it: `seqs` sequences with `context`
   * latent tokens on average, `heads` query heads on the device (× query
   * tokens per sequence), `latentBytes` of latent cache read at `kvBytes`
   * per value; `flops` and `bytes` for the roofline otherwise.
   */
  mlaDecodeAttention(
    flops: number,
    bytes: number,
    seqs: number,
    context: number,
    heads: number,
    kvBytes: number,
    latentBytes: number,
  ): number {
    const t = this.tables?.mlaDecode(seqs, context, heads, kvBytes, latentBytes);
    if (t !== undefined) return Math.max(t, bytes * this.#rawByteTime);
    const c = flops * this.#attnFlopTime;
    const m = bytes * this.#mlaByteTime;
    return (c > m ? c : m) + this.device.matmulOpOverhead;
  }

  /** Causal MLA prefill attention of one layer over sequences of about `seqLen` tokens with `heads` query heads. */
  mlaPrefillAttention(flops: number, bytes: number, seqLen: number, heads: number): number {
    const t = this.tables?.mlaPrefill(flops, seqLen, heads);
    return t === undefined ? this.attention(flops, bytes) : Math.max(t, bytes * this.#rawByteTime);
  }

  /**
   * The routed experts of one MoE layer on one rank (both grouped GEMMs
   * and the activation between them) from the engine's measured MoE kernel:
   * `tokens` tokens in the MoE group, `pairs` token-expert pairs over
   * `touched` local experts, weights of `wb` bytes. Undefined without
   * tables or for a weight type they do not hold (the caller then uses
   * `groupedGemm`). Never faster than streaming the touched experts'
   * weights from HBM.
   */
  moeExperts(
    shape: MoeShape,
    tokens: number,
    touched: number,
    pairs: number,
    wb: number,
    peak: keyof MatrixPeaks,
  ): number | undefined {
    if (!this.tables || pairs <= 0 || touched <= 0) return undefined;
    const dtype = (peak === "bf16" || peak === "fp16") && wb === 2
      ? "bf16"
      : peak === "fp8" && wb === 1
      ? "fp8"
      : undefined;
    const t = dtype && this.tables.moe(shape, tokens, dtype);
    if (!t) return undefined;
    const weights = touched * 3 * shape.hidden * (shape.inter / shape.moeTp) * wb;
    return Math.max(t, weights * this.#rawByteTime);
  }

  /** Memory-bound kernels moving `bytes`, with `ops` launches. */
  stream(bytes: number, ops: number): number {
    return bytes * this.byteTime + ops * this.device.otherOpOverhead;
  }

  /**
   * An expert-parallel all-to-all over `ranks` devices spanning several
   * nodes, DeepEP-style: each token crosses the scale-out network once per
   * remote node it reaches (`remoteBytes` per device) and fans out to its
   * experts over the scale-up fabric (`localBytes`); the two run pipelined.
   */
  hierarchicalAllToAll(ranks: number, remoteBytes: number, localBytes: number): number {
    const d = this.device;
    const e = d.efficiency.link;
    const remote = remoteBytes / (d.scaleOutBandwidth * e);
    const local = localBytes / (d.scaleUpBandwidth * e);
    return d.collectiveLatency + (ranks > d.devicesPerNode ? d.scaleOutLatency : 0) + (remote > local ? remote : local);
  }

  /**
   * A collective over `ranks` devices on `bytes` per rank (the full buffer
   * for all-reduce/all-gather/reduce-scatter; what one rank sends for
   * all-to-all). Ring volumes: all-reduce 2(n−1)/n, the others (n−1)/n.
   * Groups larger than a node run at the scale-out bandwidth and pay the
   * RDMA latency.
   */
  collective(kind: CollectiveKind, ranks: number, bytes: number): number {
    if (ranks <= 1 || bytes <= 0) return 0;
    const d = this.device;
    const crossNode = ranks > d.devicesPerNode;
    if (kind === "all_reduce" && !crossNode && this.tables) {
      const t = this.tables.allReduce(ranks, bytes);
      if (t !== undefined) return t;
    }
    const bw = (crossNode ? d.scaleOutBandwidth : d.scaleUpBandwidth) * d.efficiency.link;
    const share = kind === "all_reduce" ? (2 * (ranks - 1)) / ranks : (ranks - 1) / ranks;
    return d.collectiveLatency + (crossNode ? d.scaleOutLatency : 0) + (share * bytes) / bw;
  }
}

/**
 * A grouped GEMM over experts: `pairs` token-expert rows spread over
 * `touched` experts (each padded to whole tiles), weights of `n × k` per
 * expert for `experts` resident experts of which a fraction `share` is read.
 */
export function groupedGemm(
  k: Kernels,
  pairs: number,
  touched: number,
  n: number,
  kDim: number,
  wb: number,
  peak: keyof MatrixPeaks,
  experts: number,
  share: number,
): number {
  if (pairs <= 0 || touched <= 0) return 0;
  const rows = touched * paddedRows(pairs / touched);
  const compute = 2 * rows * n * kDim * k.flopTime(peak);
  const memory = experts * share * n * kDim * wb * k.moeByteTime + pairs * (n + kDim) * ACT_BYTES * k.byteTime;
  return roofline(compute, memory) + k.device.matmulOpOverhead;
}
