/**
 * The step-time model: a per-operator roofline for one engine step on one
 * device of its tensor-parallel group.
 *
 * Every operator's time is max(FLOPs / achieved FLOP/s, bytes / achieved
 * bytes/s) plus a fixed per-kernel cost; collectives are latency + bytes /
 * achieved link bandwidth. A step is: embedding, then per layer an
 * attention block (GQA or MLA) and an FFN block (dense or MoE), then the
 * final norm, the LM head on the rows that need logits, sampling, and a
 * fixed host cost. The layer terms depend on the batch only through a few
 * aggregates ({@link BatchShape}), so one step costs O(1) whatever the batch
 * size and layer count.
 *
 * @module
 */
import { IntMemo } from "./int_memo.ts";
import type { ModelSpec } from "../model/model_spec.ts";
import { flopCoefficients } from "../model/model_spec.ts";
import type { FlopCoefficients } from "../model/model_spec.ts";
import { gqaBlock, mlaBlock } from "./attention.ts";
import type { AttentionBlock } from "./attention.ts";
import type { BatchShape, StepBreakdown, TimeParts } from "./batch.ts";
import type { DeviceSpec } from "./device.ts";
import { denseFfn, expectedTouched, moeFfn } from "./ffn.ts";
import type { FfnBlock } from "./ffn.ts";
import { ACT_BYTES, Kernels } from "./kernels.ts";
import type { EngineLayout } from "./layout.ts";
import type { LinearQuant } from "./quant.ts";
import type { KernelTables } from "./kernel_tables.ts";

import { emptyBatch } from "./batch.ts";
export { emptyBatch } from "./batch.ts";
export type { BatchShape, StepBreakdown } from "./batch.ts";
export type { EngineLayout } from "./layout.ts";

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
  /** Draft tokens verified per decode step (0 = none). */
  readonly draftTokens?: number;
  /**
   * What drafts them: `module` (default), a draft module of one decoder
   * layer of the model's last kind, its 2·hidden × hidden projection and
   * the LM head, run once per draft (MTP layers; EAGLE's draft head has the
   * same shape); `none`, no model (n-gram lookup in the prompt and the
   * output so far, on the host).
   */
  readonly drafter?: "module" | "none";
  /**
   * Decode batch sizes the engine captured as CUDA graphs, ascending (from
   * its engine profile): a decode-only step of B sequences up to the largest
   * runs the graph of the smallest captured size ≥ B, so its GEMMs and
   * elementwise kernels work on that many rows. Absent: no padding.
   */
  readonly graphSizes?: readonly number[];
  /** The engine's measured kernel times on this device (from its engine profile), replacing the roofline where they apply. */
  readonly kernelTables?: KernelTables;
  /**
   * How the engine launches kernels and overlaps its CPU work (from its
   * engine profile); absent: the generic path (a fixed host cost added to
   * every step, upstream's model).
   */
  readonly launch?: LaunchSpec;
}

/** How an engine's steps launch their kernels and overlap the CPU's work with the GPU's. */
export interface LaunchSpec {
  /**
   * CPU seconds per kernel launched one by one from Python: a step that is
   * not a captured graph lasts at least its kernels × this (the GPU waits for
   * the launches). 0: launches are never the bottleneck (compiled engines).
   */
  readonly perKernel: number;
  /** Every step launches kernel by kernel (no graphs), not only those the graphs do not cover. */
  readonly eager: boolean;
  /**
   * The shortest a kernel runs on the device, seconds (its launch latency
   * inside a stream or graph, prologue and tail): a step's GPU time is at
   * least its kernels × this, whatever its work.
   */
  readonly floor: number;
  /**
   * The engine runs a step's CPU work (scheduling, input preparation, output
   * processing) beside the GPU work of the next: a step lasts the longer of
   * the two instead of their sum.
   */
  readonly overlap: boolean;
}

/** Per-device sizes of one layer under the engine's layout. */
export interface LayerShapes {
  /** Query heads on one device. */
  readonly headsPerRank: number;
  /** KV bytes one device stores per token per layer (DCP split included). */
  readonly kvBytesPerTokenPerLayer: number;
  /** Weight bytes of the attention part of one layer on one device. */
  readonly attentionWeightBytes: number;
  /** Weight bytes of one dense-FFN layer on one device (0 when every layer is MoE). */
  readonly denseFfnWeightBytes: number;
  /** Weight bytes of one MoE layer on one device (0 for dense models). */
  readonly moeFfnWeightBytes: number;
  /** Peak activation bytes per engine token of the largest layer. */
  readonly activationBytesPerToken: number;
}

/** Zeroes every part of `acc`. */
function clear(acc: TimeParts): void {
  acc.linear =
    acc.attention =
    acc.elementwise =
    acc.communication =
      0;
}

/**
 * The per-operator roofline cost model of one engine.
 *
 * Precondition: the layout was validated against the model (sizes divide
 * heads, intermediate sizes and experts).
 */
export class RooflineCostModel {
  /** What the model was built from. */
  readonly input: CostModelInput;
  /** Per-device sizes of one layer. */
  readonly shapes: LayerShapes;
  /** Weight bytes resident on one device. */
  readonly weightBytesPerDevice: number;
  /** Timing primitives of the device. */
  readonly kernels: Kernels;
  /** Peak FLOP/s of the engine's devices together, at the matmul type of its GEMMs (for MFU). */
  readonly peakFlops: number;
  /** HBM bytes/s of the engine's devices together (for MBU). */
  readonly peakBandwidth: number;
  /** Devices of one engine (its tensor-parallel group). */
  readonly devices: number;
  #attention: AttentionBlock;
  #dense?: FfnBlock;
  #moe?: FfnBlock;
  #denseLayers: number;
  #moeLayers: number;
  #vocabPerRank: number;
  #acc: TimeParts = { linear: 0, attention: 0, elementwise: 0, communication: 0 };
  #draftShape: BatchShape = emptyBatch();
  #paddedShape: BatchShape = emptyBatch();
  /** The captured graph size a decode batch of `t` tokens runs, by `t` (up to the largest size); none without graphs. */
  #graphPad?: Int32Array;
  #flops: FlopCoefficients;
  #seqOverhead: number;
  /** Kernels a step launches (all layers, embedding, LM head and sampling): what an eager step pays launch time for. */
  readonly kernelsPerStep: number;
  /** The FFN kinds present and how many layers use each (built once: stepTime is the hot path). */
  #ffnLayers: [FfnBlock, number][] = [];
  /** {@link #tokenParts} by token count. */
  readonly #byTokens = new IntMemo<Float64Array>();
  /** {@link #lmHead} by rows. */
  readonly #lmHeads = new IntMemo<number>();
  /** The shape the FFN blocks see in {@link #tokenParts} (tokens only). */
  readonly #tokenShape: BatchShape = emptyBatch();

  /**
   * Builds the layer blocks of one device.
   *
   * @param input model, device, layout and quantization
   */
  constructor(input: CostModelInput) {
    this.input = input;
    const { model: m, device, layout: l, linear } = input;
    const k = new Kernels(device, input.kernelTables);
    const graphs = input.graphSizes;
    if (graphs?.length) {
      // Built once: the decode hot path looks the padded size up instead of scanning the sizes.
      this.#graphPad = new Int32Array(graphs[graphs.length - 1] + 1);
      let i = 0;
      for (let t = 1; t < this.#graphPad.length; t++) {
        while (graphs[i] < t) i++;
        this.#graphPad[t] = graphs[i];
      }
    }
    this.kernels = k;
    const att = { model: m, k, tp: l.tp, dcp: l.dcp, wb: linear.weightBytes, peak: linear.peak, kvb: input.kvBytes };
    this.#attention = m.mla ? mlaBlock(att, m.mla) : gqaBlock(att);
    const ffn = { model: m, k, layout: l, wb: linear.weightBytes, peak: linear.peak };
    this.#moeLayers = m.moe ? m.layers - m.moe.denseLayers : 0;
    this.#denseLayers = m.layers - this.#moeLayers;
    if (this.#denseLayers > 0) this.#dense = denseFfn(ffn);
    if (m.moe && this.#moeLayers > 0) this.#moe = moeFfn(ffn, m.moe);
    if (this.#dense) this.#ffnLayers.push([this.#dense, this.#denseLayers]);
    if (this.#moe) this.#ffnLayers.push([this.#moe, this.#moeLayers]);
    this.#vocabPerRank = Math.ceil(m.vocab / l.lmheadTp);
    const a = this.#attention;
    this.shapes = {
      headsPerRank: a.headsPerRank,
      kvBytesPerTokenPerLayer: a.kvBytesPerToken,
      attentionWeightBytes: a.weightBytes,
      denseFfnWeightBytes: this.#dense?.weightBytes ?? 0,
      moeFfnWeightBytes: this.#moe?.weightBytes ?? 0,
      activationBytesPerToken: a.activationBytesPerToken +
        Math.max(this.#dense?.activationBytesPerToken ?? 0, this.#moe?.activationBytesPerToken ?? 0),
    };
    const embedding = Math.ceil(m.vocab / l.tp) * m.hidden * ACT_BYTES;
    const lmHead = m.tiedEmbeddings ? 0 : this.#vocabPerRank * m.hidden * input.lmheadWeightBytes;
    // With a draft module (MTP, EAGLE): one more decoder layer of the last kind and
    // its projection of [hidden; embedding] (2·hidden × hidden).
    const mtpWeights = (input.draftTokens ?? 0) > 0 && input.drafter !== "none"
      ? a.weightBytes + ((this.#moe ?? this.#dense)?.weightBytes ?? 0) + 2 * m.hidden * m.hidden * linear.weightBytes
      : 0;
    this.#flops = flopCoefficients(m);
    this.#seqOverhead = device.seqOverhead ?? 0;
    // Embedding, final norm, LM head, logits gather and sampling (softmax, top-k/top-p, draw): eight more.
    this.kernelsPerStep = m.layers * a.kernels + this.#denseLayers * (this.#dense?.kernels ?? 0) +
      this.#moeLayers * (this.#moe?.kernels ?? 0) + 8;
    this.devices = l.tp;
    this.peakFlops = l.tp * device.peaks[linear.peak];
    this.peakBandwidth = l.tp * device.hbmBandwidth;
    this.weightBytesPerDevice = m.layers * a.weightBytes + this.#denseLayers * (this.#dense?.weightBytes ?? 0) +
      this.#moeLayers * (this.#moe?.weightBytes ?? 0) + embedding + lmHead + m.hidden * ACT_BYTES + mtpWeights;
  }

  /**
   * The parts of a step of `T` tokens that depend on `T` alone, remembered
   * per token count (decode steps repeat their batch sizes; a step's time is
   * otherwise recomputed kernel by kernel): [0] attention projections and
   * [1] elementwise × layers (when the attention block splits them off),
   * [2] attention-side communication × layers, then linear, elementwise and
   * communication × layers of each FFN kind, then the embedding's
   * elementwise time and the final all-reduce. Each is computed as
   * {@link stepTime} did inline, so the step times are the same bit for bit.
   */
  #tokenParts(T: number): Float64Array {
    let parts = this.#byTokens.get(T);
    if (parts !== undefined) return parts;
    const { model: m, layout: l } = this.input;
    const k = this.kernels;
    const kinds = this.#ffnLayers.length;
    parts = new Float64Array(5 + 3 * kinds);
    const acc = this.#acc;
    const hiddenBytes = T * m.hidden * ACT_BYTES;
    clear(acc);
    this.#attention.split?.addTokens(T, acc);
    acc.communication += k.collective("all_reduce", l.tp, hiddenBytes); // after the O projection
    if (l.dcp > 1) {
      acc.communication += k.collective("all_gather", l.dcp, T * this.#attention.dcpExchangeBytesPerToken);
    }
    parts[0] = acc.linear * m.layers;
    parts[1] = acc.elementwise * m.layers;
    parts[2] = acc.communication * m.layers;
    // The FFN blocks read the token count only.
    const shape = this.#tokenShape;
    shape.tokens = T;
    for (let i = 0; i < kinds; i++) {
      const [block, layers] = this.#ffnLayers[i];
      clear(acc);
      block.add(shape, acc);
      parts[3 + 3 * i] = acc.linear * layers;
      parts[4 + 3 * i] = acc.elementwise * layers;
      parts[5 + 3 * i] = acc.communication * layers;
    }
    parts[3 + 3 * kinds] = 2 * k.stream(2 * hiddenBytes, 1);
    parts[4 + 3 * kinds] = k.collective("all_reduce", l.tp, hiddenBytes);
    this.#byTokens.set(T, parts);
    return parts;
  }

  /** The LM head's time for `logitsRows` rows (remembered per count). */
  #lmHead(logitsRows: number): number {
    const { model: m, layout: l } = this.input;
    const k = this.kernels;
    const rows = (logitsRows * l.dp) / l.lmheadDp;
    const wb = this.input.lmheadWeightBytes;
    const t = k.gemm(rows, this.#vocabPerRank, m.hidden, wb, wb < 2 ? this.input.linear.peak : "bf16") +
      k.collective("all_gather", l.lmheadTp, rows * m.vocab * ACT_BYTES) +
      k.stream(logitsRows * m.vocab * 4 * 2, 2);
    this.#lmHeads.set(logitsRows, t);
    return t;
  }

  /** KV bytes one device stores per token (all layers). */
  get kvBytesPerToken(): number {
    return this.input.model.layers * this.shapes.kvBytesPerTokenPerLayer;
  }

  /**
   * Model FLOPs of a step over the engine: `forwardFlops` of its new
   * tokens, the query–key pairs they attend to (a decode token attends to
   * its whole context) and the rows that get logits. MTP drafts are not
   * counted (useful work only, as MFU is usually reported).
   */
  stepFlops(b: BatchShape): number {
    const c = this.#flops;
    return c.perToken * b.tokens + c.perPair * (b.prefillPairs + b.decodeContext) + c.perLogitsRow * b.logitsRows;
  }

  /**
   * HBM bytes of a step over the engine: every resident weight once, except
   * the routed experts the batch does not touch (uniform routing over the
   * DP ranks' combined batch, as the MoE block assumes), plus the KV read
   * (the context of every sequence) and written (the new tokens).
   */
  stepBytes(b: BatchShape): number {
    const m = this.input.model;
    let weights = this.weightBytesPerDevice;
    if (m.moe && this.#moeLayers > 0) {
      const tokens = b.tokens * this.input.layout.dp;
      const share = expectedTouched(m.moe.experts, m.moe.topK, tokens) / m.moe.experts;
      weights -= this.#moeLayers * this.shapes.moeFfnWeightBytes * (1 - share);
    }
    const kv = (b.prefillContext + b.decodeContext + b.tokens) * this.kvBytesPerToken;
    return this.devices * (weights + kv);
  }

  /**
   * Seconds one engine step takes for a batch of shape `b`.
   *
   * @param b the step's aggregates; `b.tokens` must be > 0
   * @param out when given, filled with the per-component breakdown
   */
  stepTime(b: BatchShape, out?: StepBreakdown): number {
    const m = this.input.model;
    const pad = this.#graphPad;
    if (pad && b.prefillTokens === 0 && b.tokens > 0 && b.tokens < pad.length) {
      // CUDA-graph replay: the captured batch is padded with dummy rows
      // (tokens only; the padded rows attend to nothing and need no logits).
      const rows = pad[b.tokens];
      if (rows > b.tokens) {
        // Filled in place, field by field (an object literal, or Object.assign's boxed copies of fractional
        // fields, was garbage at every decode step).
        const p = this.#paddedShape;
        p.seqs = b.seqs;
        p.logitsRows = b.logitsRows;
        p.prefillTokens = b.prefillTokens;
        p.prefillPairs = b.prefillPairs;
        p.prefillContext = b.prefillContext;
        p.decodeSeqs = b.decodeSeqs;
        p.decodeTokens = b.decodeTokens;
        p.decodeContext = b.decodeContext;
        p.tokens = rows;
        p.hostShare = b.hostShare ?? 1;
        b = p;
      }
    }
    const k = this.kernels;
    const d = k.device;
    const T = b.tokens;

    // One layer of each kind, scaled by the layer counts (layers of a kind are identical). What depends
    // on the token count alone comes from #tokenParts; the sums below are made in the same order either way.
    const parts = this.#tokenParts(T);
    const acc = this.#acc;
    const split = this.#attention.split;
    let linear: number, attention: number, elementwise: number;
    if (split) {
      acc.attention = 0;
      split.addContext(b, acc);
      linear = parts[0];
      elementwise = parts[1];
      attention = acc.attention * m.layers;
    } else {
      clear(acc);
      this.#attention.add(b, acc);
      linear = acc.linear * m.layers;
      attention = acc.attention * m.layers;
      elementwise = acc.elementwise * m.layers;
    }
    let communication = parts[2];
    const kinds = this.#ffnLayers.length;
    for (let j = 3; j < 3 + 3 * kinds; j += 3) {
      linear += parts[j];
      elementwise += parts[j + 1];
      communication += parts[j + 2];
    }
    // Drafting with a draft module (MTP, EAGLE): each draft runs it (one
    // layer of the last kind) and the LM head on the decoding sequences.
    // n-gram drafts cost the device nothing: only their verification, in
    // the step's decode tokens.
    const drafts = this.input.drafter === "none" ? 0 : this.input.draftTokens ?? 0;
    if (drafts > 0 && b.decodeSeqs > 0) {
      const s = this.#draftShape;
      s.tokens =
        s.seqs =
        s.logitsRows =
        s.decodeSeqs =
        s.decodeTokens =
          b.decodeSeqs;
      s.decodeContext = b.decodeContext;
      clear(acc);
      this.#attention.add(s, acc);
      (this.#moe ?? this.#dense)?.add(s, acc);
      linear += drafts * (acc.linear + k.gemm(b.decodeSeqs, this.#vocabPerRank, m.hidden, 2, "bf16"));
      attention += drafts * acc.attention;
      elementwise += drafts * acc.elementwise;
      communication += drafts * acc.communication;
    }
    // Vocab-parallel embedding lookup (+ its all-reduce) and the final norm.
    elementwise += parts[3 + 3 * kinds];
    communication += parts[4 + 3 * kinds];

    // LM head on the rows that need logits, logits gather, then sampling
    // (softmax and draw over the vocabulary in FP32).
    let lmHead = 0;
    if (b.logitsRows > 0) {
      lmHead = this.#lmHeads.get(b.logitsRows) ?? this.#lmHead(b.logitsRows);
    }

    // Host: the CPU's work of the step (the fixed cost, once per multi-step window, and the per-sequence
    // cost), the kernel launches of a step that is not a captured graph, and the input copy (token ids,
    // positions and slot mapping as int32 per token, block tables as int32 per KV block).
    // A multi-step window does the CPU's work once for all its steps, per-sequence work included.
    const cpu = (d.stepOverhead + b.seqs * this.#seqOverhead) * (b.hostShare ?? 1);
    const gpu = linear + attention + elementwise + lmHead + communication;
    let host = cpu;
    const launch = this.input.launch;
    if (launch) {
      // A decode-only step up to the largest captured size replays its graph; any other step launches its
      // kernels one by one, and the GPU cannot finish before the CPU has launched them.
      const captured = !launch.eager && pad !== undefined && b.prefillTokens === 0 && T < pad.length;
      const launches = this.kernelsPerStep *
        (captured || launch.perKernel < launch.floor ? launch.floor : launch.perKernel);
      const busy = launches > gpu ? launches : gpu;
      // With an overlap scheduler the step's CPU work runs beside the GPU's: only its excess shows.
      host = (launch.overlap ? (cpu > busy ? cpu : busy) : busy + cpu) - gpu;
    }
    if (this.input.host2deviceBandwidth > 0) {
      host += (T * 12 + ((b.prefillContext + b.decodeContext) / this.input.blockSize) * 4) /
        this.input.host2deviceBandwidth;
    }

    const total = gpu + host;
    if (out) {
      out.linear = linear;
      out.attention = attention;
      out.elementwise = elementwise;
      out.lmHead = lmHead;
      out.communication = communication;
      out.host = host;
      out.total = total;
    }
    return total;
  }
}
