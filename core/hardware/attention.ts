/**
 * Attention blocks of one layer on one device: grouped-query attention
 * (MHA/GQA/MQA) and DeepSeek's multi-head latent attention (MLA).
 *
 * @module
 */
import type { MlaSpec, ModelSpec } from "../model/model_spec.ts";
import type { BatchShape, TimeParts } from "./batch.ts";
import { ACT_BYTES } from "./kernels.ts";
import type { Kernels } from "./kernels.ts";
import type { MatrixPeaks } from "./device.ts";
import { PairMemo } from "./int_memo.ts";

/** One layer's attention on one device. */
export interface AttentionBlock {
  /** Weight bytes of one layer's attention on one device. */
  readonly weightBytes: number;
  /** KV-cache bytes one device stores per token for one layer. */
  readonly kvBytesPerToken: number;
  /**
   * Kernels one layer's attention launches in an engine that runs it op by
   * op (see {@link launchCount}): what a step without a graph pays launch
   * time for.
   */
  readonly kernels: number;
  /** Peak activation bytes per token in flight. */
  readonly activationBytesPerToken: number;
  /** Query heads on one device. */
  readonly headsPerRank: number;
  /**
   * With DCP, bytes per token of partial attention outputs and log-sum-exps
   * (FP32) that the DCP ranks exchange per layer.
   */
  readonly dcpExchangeBytesPerToken: number;
  /** Adds one layer's attention time for batch `b`. */
  add(b: BatchShape, acc: TimeParts): void;
  /**
   * When the block's projections and elementwise work depend on the token
   * count alone (GQA; not MLA, whose prefill expands the context): its
   * `add` split in two, the part that depends on `tokens` only (linear and
   * elementwise) and the attention over the context. `add` adds the sum of
   * both, so a caller may remember the first per token count.
   */
  readonly split?: {
    addTokens(tokens: number, acc: TimeParts): void;
    addContext(b: BatchShape, acc: TimeParts): void;
  };
}

/** What both attention kinds need. */
export interface AttentionInput {
  readonly model: ModelSpec;
  readonly k: Kernels;
  /** Attention TP size. */
  readonly tp: number;
  /** Decode-context parallelism (the KV sequence split over this many of the TP ranks). */
  readonly dcp: number;
  /** Bytes per projection weight. */
  readonly wb: number;
  /** Matrix type of the projections. */
  readonly peak: keyof MatrixPeaks;
  /** Bytes per KV value. */
  readonly kvb: number;
}

/**
 * Kernels a linear layer launches: the GEMM, and with FP8 or INT8
 * activations the kernel that quantizes its input first (vLLM's and
 * TensorRT-LLM's per-token / per-block activation quantization).
 */
export function gemmKernels(peak: keyof MatrixPeaks): number {
  return peak === "fp8" || peak === "int8" ? 2 : 1;
}

/**
 * The sequence length a step's prefill attention runs at, for the kernel
 * tables: the mean context a prefill chunk reads (past + new tokens), a
 * whole prompt's length when it runs in one chunk.
 */
function prefillLength(b: BatchShape): number {
  const chunks = b.seqs - b.decodeSeqs;
  return b.prefillContext / (chunks > 0 ? chunks : 1);
}

/**
 * Grouped-query attention: QKV and O projections split over the TP ranks,
 * KV heads split too and replicated once there are more (non-DCP) ranks
 * than KV heads; FlashAttention-style kernels for prefill (compute-bound)
 * and decode (bandwidth-bound).
 */
export function gqaBlock(a: AttentionInput): AttentionBlock {
  const { model: m, k, tp, dcp, wb, peak } = a;
  const hd = m.headDim;
  const hpr = m.heads / tp;
  const kvpr = Math.max(1, Math.ceil(m.kvHeads / (tp / dcp)));
  const qkvN = (hpr + 2 * kvpr) * hd;
  const kvBytesPerToken = (2 * kvpr * hd * a.kvb) / dcp;
  const bias = m.qkvBias ? qkvN : 0;
  const norms = m.hidden + (m.qkNorm ? 2 * hd : 0);
  const qk = (hpr + kvpr) * hd;
  // Per token: fused residual-add + RMSNorm (read x and residual, write both),
  // rotary on Q and K, QK-norm where present, and the KV-cache write.
  const elementwisePerToken = ACT_BYTES * (4 * m.hidden + 2 * qk + (m.qkNorm ? 2 * qk : 0)) + kvBytesPerToken;
  const ops = 3 + (m.qkNorm ? 1 : 0);
  const qo = 2 * hpr * hd * ACT_BYTES; // Q read + O written per token
  // One layer's decode attention by (batch size, context sum), for one query token per sequence. Each decode step
  // asks it, and its log-log interpolation's power was 16% of a low-load day (cpu profile); the same value either way.
  const decodeMemo = new PairMemo();
  const split = {
    addTokens(T: number, acc: TimeParts): void {
      acc.linear += k.gemm(T, qkvN, m.hidden, wb, peak) + k.gemm(T, m.hidden, hpr * hd, wb, peak);
      acc.elementwise += k.stream(T * elementwisePerToken, ops);
    },
    addContext(b: BatchShape, acc: TimeParts): void {
      if (b.prefillTokens > 0) {
        acc.attention += k.prefillAttention(
          (4 * hpr * hd * b.prefillPairs) / dcp,
          b.prefillContext * kvBytesPerToken + b.prefillTokens * qo,
          prefillLength(b),
          kvpr,
        );
      }
      const seqs = b.decodeSeqs;
      if (seqs > 0) {
        // One query token per sequence: remembered by batch size and context sum, the step's only inputs.
        const single = b.decodeTokens === seqs;
        let t = single ? decodeMemo.get(seqs, b.decodeContext) : NaN;
        if (t !== t) {
          // Every query token of a sequence (1, or 1 + drafts with MTP) attends to its context.
          t = k.decodeAttention(
            (4 * hpr * hd * b.decodeContext * (b.decodeTokens / seqs)) / dcp,
            b.decodeContext * kvBytesPerToken + b.decodeTokens * qo,
            seqs,
            b.decodeContext / seqs / dcp,
            kvpr,
            a.kvb,
            b.decodeContext * kvBytesPerToken,
          );
          if (single) decodeMemo.set(seqs, b.decodeContext, t);
        }
        acc.attention += t;
      }
    },
  };
  return {
    weightBytes: (qkvN * m.hidden + hpr * hd * m.hidden) * wb + (bias + norms) * ACT_BYTES,
    kvBytesPerToken,
    // Fused residual-add + RMSNorm, QKV, rotary, KV-cache write, attention, O, all-reduce (TP), QK-norm.
    kernels: 4 + 2 * gemmKernels(peak) + (tp > 1 ? 1 : 0) + (m.qkNorm ? 1 : 0),
    activationBytesPerToken: ACT_BYTES * (2 * m.hidden + qkvN + hpr * hd),
    headsPerRank: hpr,
    dcpExchangeBytesPerToken: hpr * (hd + 1) * 4,
    add(b, acc) {
      split.addTokens(b.tokens, acc);
      split.addContext(b, acc);
    },
    split,
  };
}

/**
 * Multi-head latent attention (DeepSeek-V2/V3). The KV cache holds the
 * compressed latent and the shared rotary key (kv_lora_rank + rope dims per
 * token per layer), the same on every TP rank (split only by DCP).
 * Prefill expands the latent through `kv_b` and runs ordinary attention with
 * 192-dim keys and 128-dim values; decode absorbs `kv_b` into the query and
 * output (attention in latent space, FlashMLA-style), reading only the
 * 576-value latent per token.
 */
export function mlaBlock(a: AttentionInput, mla: MlaSpec): AttentionBlock {
  const { model: m, k, tp, dcp, wb, peak } = a;
  const h = m.hidden;
  const hpr = m.heads / tp;
  const qHead = mla.qkNopeHeadDim + mla.qkRopeHeadDim;
  const latent = mla.kvLoraRank + mla.qkRopeHeadDim;
  const kvBytesPerToken = (latent * a.kvb) / dcp;
  // Down-projections of Q (when compressed) and KV, fused and replicated on every rank.
  const downN = (mla.qLoraRank > 0 ? mla.qLoraRank : 0) + latent;
  const qUpK = mla.qLoraRank > 0 ? mla.qLoraRank : h; // q_b input (or a full-rank q_proj)
  const qUpN = hpr * qHead;
  const kvUpN = hpr * (mla.qkNopeHeadDim + mla.vHeadDim);
  const oK = hpr * mla.vHeadDim;
  const weights = downN * h + qUpN * qUpK + kvUpN * mla.kvLoraRank + oK * h;
  const norms = h + mla.qLoraRank + mla.kvLoraRank;
  const elementwisePerToken = ACT_BYTES * (4 * h + 2 * hpr * mla.qkRopeHeadDim + 2 * mla.qkRopeHeadDim + 2 * downN) +
    kvBytesPerToken;
  return {
    weightBytes: weights * wb + norms * ACT_BYTES,
    kvBytesPerToken,
    // Residual-add + RMSNorm, the fused Q/KV down-projection, the Q and KV RMSNorms, the Q up-projection,
    // rotary, the split and concatenation copies of the rope and nope parts, the KV-cache write, W_UK (or
    // kv_b), attention, W_UV, O, all-reduce (TP).
    kernels: 9 + 3 * gemmKernels(peak) + 2 + (tp > 1 ? 1 : 0),
    activationBytesPerToken: ACT_BYTES * (2 * h + downN + qUpN + kvUpN + oK),
    headsPerRank: hpr,
    dcpExchangeBytesPerToken: hpr * (mla.kvLoraRank + 1) * 4, // outputs are still in latent space
    add(b, acc) {
      const T = b.tokens;
      let lin = k.gemm(T, downN, h, wb, peak) + k.gemm(T, qUpN, qUpK, wb, peak) + k.gemm(T, h, oK, wb, peak);
      if (b.prefillTokens > 0) {
        // Expand K and V of the whole context read by the chunks.
        lin += k.gemm(b.prefillContext, kvUpN, mla.kvLoraRank, wb, peak);
        acc.attention += k.mlaPrefillAttention(
          (2 * hpr * (qHead + mla.vHeadDim) * b.prefillPairs) / dcp,
          b.prefillContext * (kvBytesPerToken + kvUpN * ACT_BYTES / dcp) +
            b.prefillTokens * 2 * hpr * qHead * ACT_BYTES,
          prefillLength(b),
          hpr,
        );
      }
      if (b.decodeSeqs > 0) {
        // Absorbed: q_nope · W_UK into latent space, then W_UV on the output (per head, batched).
        lin += k.gemm(b.decodeTokens, hpr * mla.kvLoraRank, mla.qkNopeHeadDim, wb, peak) +
          k.gemm(b.decodeTokens, hpr * mla.vHeadDim, mla.kvLoraRank, wb, peak);
        // Measured kernels pack each sequence's query tokens (1, or 1 + drafts with MTP) with its heads.
        const queries = b.decodeTokens / b.decodeSeqs;
        acc.attention += k.mlaDecodeAttention(
          (2 * hpr * (latent + mla.kvLoraRank) * b.decodeContext * queries) / dcp,
          b.decodeContext * kvBytesPerToken + b.decodeTokens * 2 * hpr * latent * ACT_BYTES,
          b.decodeSeqs,
          b.decodeContext / b.decodeSeqs / dcp,
          hpr * queries,
          a.kvb,
          b.decodeContext * kvBytesPerToken,
        );
      }
      acc.linear += lin;
      acc.elementwise += k.stream(T * elementwisePerToken, 4);
    },
  };
}
