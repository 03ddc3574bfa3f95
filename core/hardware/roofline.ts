/**
 * The step-time model: a per-operator roofline for one engine step of a
 * dense (MHA/GQA) transformer on one device of a tensor-parallel group.
 *
 * Every operator's time is max(FLOPs / achieved FLOP/s, bytes / achieved
 * bytes/s) plus a fixed per-kernel cost; collectives are latency + bytes /
 * achieved link bandwidth. The per-layer terms depend on the batch only
 * through a few aggregates ({@link BatchShape}), so one step costs O(1)
 * whatever the batch size and layer count.
 *
 * @module
 */
import type { ModelSpec } from "../model/model_spec.ts";
import type { DeviceSpec } from "./device.ts";
import type { LinearQuant } from "./quant.ts";

/** The aggregates of one engine step that its time depends on. */
export interface BatchShape {
  /** Tokens processed this step (prefill chunk tokens + one per decoding sequence). */
  tokens: number;
  /** Sequences in the batch. */
  seqs: number;
  /** Sequences that produce a token this step (need logits). */
  logitsRows: number;
  /** Tokens of prefill chunks. */
  prefillTokens: number;
  /** Σ over prefill chunks of query–key pairs (causal: new × (past + (new + 1) / 2)). */
  prefillPairs: number;
  /** Σ over prefill chunks of context length read (past + new). */
  prefillContext: number;
  /** Decoding sequences (one new token each). */
  decodeSeqs: number;
  /** Σ over decoding sequences of context length read (KV tokens, the new one included). */
  decodeContext: number;
}

/** An empty batch shape, to fill in. */
export function emptyBatch(): BatchShape {
  return {
    tokens: 0,
    seqs: 0,
    logitsRows: 0,
    prefillTokens: 0,
    prefillPairs: 0,
    prefillContext: 0,
    decodeSeqs: 0,
    decodeContext: 0,
  };
}

/** Where a step's time goes, seconds; the fields sum to `total`. */
export interface StepBreakdown {
  /** QKV, O and MLP GEMMs of every layer. */
  linear: number;
  /** Attention over the KV cache (prefill and decode kernels). */
  attention: number;
  /** Norms, rotary embedding, activation, KV-cache writes, embedding lookup. */
  elementwise: number;
  /** LM head GEMM and sampling. */
  lmHead: number;
  /** Tensor-parallel collectives. */
  communication: number;
  /** Host: step overhead and (optionally) the host-to-device input copy. */
  host: number;
  /** The sum of the above. */
  total: number;
}

/** Parallel layout of one engine (one DP rank). */
export interface EngineLayout {
  /** Tensor-parallel size of attention. */
  readonly tp: number;
  /** Tensor-parallel size of the MLP (divides tp). */
  readonly mlpTp: number;
  /** Tensor-parallel size of the LM head (divides tp). */
  readonly lmheadTp: number;
  /** Decode-context parallelism: the KV sequence is split over this many of the TP ranks. */
  readonly dcp: number;
}

/** Everything the cost model is built from. */
export interface CostModelInput {
  /** The model. */
  readonly model: ModelSpec;
  /** The accelerator. */
  readonly device: DeviceSpec;
  /** The engine's parallel layout. */
  readonly layout: EngineLayout;
  /** Linear-layer quantization. */
  readonly linear: LinearQuant;
  /** Bytes per weight of the LM head (linear weight bytes when `quantize_lmhead`, else 2). */
  readonly lmheadWeightBytes: number;
  /** Bytes per KV value. */
  readonly kvBytes: number;
  /** Host-to-device input copy, bytes/s after efficiency; 0 = not modelled. */
  readonly host2deviceBandwidth: number;
  /** KV block size in tokens (block tables are copied to the device each step). */
  readonly blockSize: number;
}

/** Activations are BF16 throughout. */
const ACT_BYTES = 2;

/**
 * Tensor-core GEMMs compute whole tiles of 64 rows (Hopper wgmma m64; Ampere
 * and Ascend cube kernels use tiles of 64–128 rows), so a decode GEMM with M
 * rows costs the FLOPs of ⌈M/64⌉·64 rows. With the memory roofline this gives
 * the low small-M efficiency measured by DeepGEMM (calibration §1).
 */
const GEMM_TILE_ROWS = 64;

/** One GEMM of shape (M × K) · (K × N) with fixed N and K. */
interface Gemm {
  n: number;
  k: number;
}

/** Per-device sizes of one layer under the engine's layout. */
export interface LayerShapes {
  /** Query heads on one device. */
  readonly headsPerRank: number;
  /** KV heads on one device (replicated when fewer than TP ranks). */
  readonly kvHeadsPerRank: number;
  /** KV bytes one device stores per token per layer (DCP split included). */
  readonly kvBytesPerTokenPerLayer: number;
  /** Weight bytes of one layer on one device. */
  readonly layerWeightBytes: number;
}

/**
 * The per-operator roofline cost model of one engine.
 *
 * Precondition: the layout was validated (tp divides heads, mlp tp divides
 * intermediate); the model is dense.
 */
export class RooflineCostModel {
  /** What the model was built from. */
  readonly input: CostModelInput;
  /** Per-device sizes of one layer. */
  readonly shapes: LayerShapes;
  /** Weight bytes resident on one device. */
  readonly weightBytesPerDevice: number;
  #gemms: Gemm[];
  #lmHead: Gemm;
  #linearFlopTime: number; // s per FLOP of linear layers
  #bf16FlopTime: number;
  #attnFlopTime: number;
  #byteTime: number; // s per HBM byte
  #elementwiseBytesPerToken: number;
  #elementwiseOps: number;

  /**
   * Precomputes the per-layer GEMM shapes, weight and KV sizes of one device.
   *
   * @param input model, device, layout and quantization
   */
  constructor(input: CostModelInput) {
    this.input = input;
    const { model: m, device: d, layout: l, linear } = input;
    const hpr = m.heads / l.tp;
    // KV heads are split over the TP ranks that do not share a sequence shard,
    // and replicated once there are more such ranks than KV heads.
    const kvGroups = l.tp / l.dcp;
    const kvpr = Math.max(1, Math.ceil(m.kvHeads / kvGroups));
    const hd = m.headDim;
    const inter = m.intermediate / l.mlpTp;
    this.#gemms = [
      { n: (hpr + 2 * kvpr) * hd, k: m.hidden }, // QKV
      { n: m.hidden, k: hpr * hd }, // O
      { n: 2 * inter, k: m.hidden }, // gate + up
      { n: m.hidden, k: inter }, // down
    ];
    this.#lmHead = { n: Math.ceil(m.vocab / l.lmheadTp), k: m.hidden };
    const linearWeights = this.#gemms.reduce((s, g) => s + g.n * g.k, 0);
    const bias = m.qkvBias ? (hpr + 2 * kvpr) * hd : 0;
    const norms = 2 * m.hidden + (m.qkNorm ? 2 * hd : 0);
    const layerWeightBytes = linearWeights * linear.weightBytes + (bias + norms) * ACT_BYTES;
    this.shapes = {
      headsPerRank: hpr,
      kvHeadsPerRank: kvpr,
      kvBytesPerTokenPerLayer: (2 * kvpr * hd * input.kvBytes) / l.dcp,
      layerWeightBytes,
    };
    const embedding = Math.ceil(m.vocab / l.tp) * m.hidden * ACT_BYTES;
    const lmHead = m.tiedEmbeddings ? 0 : this.#lmHead.n * this.#lmHead.k * input.lmheadWeightBytes;
    this.weightBytesPerDevice = m.layers * layerWeightBytes + embedding + lmHead + m.hidden * ACT_BYTES;

    this.#linearFlopTime = 1 / (d.peaks[linear.peak] * d.efficiency.matmul);
    this.#bf16FlopTime = 1 / (d.peaks.bf16 * d.efficiency.matmul);
    this.#attnFlopTime = 1 / (d.peaks.bf16 * d.efficiency.attention);
    this.#byteTime = 1 / (d.hbmBandwidth * d.efficiency.memory);
    // Per token per layer: fused residual-add + RMSNorm twice (read x and
    // residual, write both: 4 × hidden each), rotary on Q and K (read and
    // write), SiLU-and-mul (read 2 × inter, write inter), QK-norm where
    // present, and the KV-cache write.
    const qk = (hpr + kvpr) * hd;
    this.#elementwiseBytesPerToken = ACT_BYTES * (8 * m.hidden + 2 * qk + 3 * inter + (m.qkNorm ? 2 * qk : 0)) +
      this.shapes.kvBytesPerTokenPerLayer;
    this.#elementwiseOps = 4 + (m.qkNorm ? 1 : 0);
  }

  /** Time of one GEMM with `m` rows, weights of `wb` bytes each, at `flopTime` s/FLOP. */
  #gemm(g: Gemm, m: number, wb: number, flopTime: number): number {
    const rows = Math.ceil(m / GEMM_TILE_ROWS) * GEMM_TILE_ROWS;
    const compute = 2 * rows * g.n * g.k * flopTime;
    const memory = (g.n * g.k * wb + m * (g.n + g.k) * ACT_BYTES) * this.#byteTime;
    return (compute > memory ? compute : memory) + this.input.device.matmulOpOverhead;
  }

  /** A collective over `n` ranks moving `bytes` per rank; `ring` = all-reduce (2(n−1)/n) vs gather ((n−1)/n). */
  #collective(n: number, bytes: number, allReduce: boolean): number {
    if (n <= 1) return 0;
    const d = this.input.device;
    const bw = (n <= d.devicesPerNode ? d.scaleUpBandwidth : d.scaleOutBandwidth) * d.efficiency.link;
    const factor = allReduce ? (2 * (n - 1)) / n : (n - 1) / n;
    return d.collectiveLatency + (factor * bytes) / bw;
  }

  /**
   * Seconds one engine step takes for a batch of shape `b`.
   *
   * @param b the step's aggregates; `b.tokens` must be > 0
   * @param out when given, filled with the per-component breakdown
   */
  stepTime(b: BatchShape, out?: StepBreakdown): number {
    const { model: m, device: d, layout: l, linear } = this.input;
    const L = m.layers;
    const T = b.tokens;
    const g = this.#gemms;
    const wb = linear.weightBytes;
    const ft = this.#linearFlopTime;
    const linearT = L *
      (this.#gemm(g[0], T, wb, ft) + this.#gemm(g[1], T, wb, ft) + this.#gemm(g[2], T, wb, ft) +
        this.#gemm(g[3], T, wb, ft));

    const hpr = this.shapes.headsPerRank;
    const kvb = this.shapes.kvBytesPerTokenPerLayer;
    const qo = 2 * hpr * m.headDim * ACT_BYTES; // Q read + O write per token
    let attn = 0;
    if (b.prefillTokens > 0) {
      const flops = (4 * hpr * m.headDim * b.prefillPairs) / l.dcp;
      const bytes = b.prefillContext * kvb + b.prefillTokens * qo;
      attn += Math.max(flops * this.#attnFlopTime, bytes * this.#byteTime) + d.matmulOpOverhead;
    }
    if (b.decodeSeqs > 0) {
      const flops = (4 * hpr * m.headDim * b.decodeContext) / l.dcp;
      const bytes = b.decodeContext * kvb + b.decodeSeqs * qo;
      attn += Math.max(flops * this.#attnFlopTime, bytes * this.#byteTime) + d.matmulOpOverhead;
    }
    attn *= L;

    // Elementwise per layer, plus the embedding lookup and the final norm.
    const elementwise =
      L * (T * this.#elementwiseBytesPerToken * this.#byteTime + this.#elementwiseOps * d.otherOpOverhead) +
      2 * (T * 2 * m.hidden * ACT_BYTES * this.#byteTime + d.otherOpOverhead);

    // LM head on the rows that need logits, then sampling (softmax + draw over the vocabulary in FP32).
    let lmHead = 0;
    if (b.logitsRows > 0) {
      const lmFlopTime = this.input.lmheadWeightBytes < 2 ? ft : this.#bf16FlopTime;
      lmHead = this.#gemm(this.#lmHead, b.logitsRows, this.input.lmheadWeightBytes, lmFlopTime) +
        2 * (b.logitsRows * m.vocab * 4 * 2 * this.#byteTime + d.otherOpOverhead);
    }

    // Collectives: all-reduce after attention (TP group) and after the MLP
    // (MLP TP group) in every layer; one after the vocab-parallel embedding;
    // the logits all-gather; with DCP, the exchange of partial attention
    // outputs (and their log-sum-exp) in every layer.
    const hiddenBytes = T * m.hidden * ACT_BYTES;
    let comm = L * (this.#collective(l.tp, hiddenBytes, true) + this.#collective(l.mlpTp, hiddenBytes, true)) +
      this.#collective(l.tp, hiddenBytes, true);
    if (b.logitsRows > 0) comm += this.#collective(l.lmheadTp, b.logitsRows * this.#lmHead.n * ACT_BYTES, false);
    if (l.dcp > 1 && b.seqs > 0) comm += L * this.#collective(l.dcp, T * hpr * (m.headDim + 1) * 4, false);

    // Host: the fixed step cost, and the input copy (token ids, positions and
    // slot mapping as int32 per token, block tables as int32 per KV block).
    let host = d.stepOverhead;
    if (this.input.host2deviceBandwidth > 0) {
      host += (T * 12 + ((b.prefillContext + b.decodeContext) / this.input.blockSize) * 4) /
        this.input.host2deviceBandwidth;
    }

    const total = linearT + attn + elementwise + lmHead + comm + host;
    if (out) {
      out.linear = linearT;
      out.attention = attn;
      out.elementwise = elementwise;
      out.lmHead = lmHead;
      out.communication = comm;
      out.host = host;
      out.total = total;
    }
    return total;
  }
}
