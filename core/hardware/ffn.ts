/**
 * Feed-forward blocks of one layer on one device: a dense SwiGLU MLP, and a
 * mixture of experts (router, routed experts, shared experts) with its
 * expert-parallel all-to-all.
 *
 * @module
 */
import type { ModelSpec, MoeSpec } from "../model/model_spec.ts";
import type { BatchShape, TimeParts } from "./batch.ts";
import type { MatrixPeaks } from "./device.ts";
import { ACT_BYTES, groupedGemm } from "./kernels.ts";
import { gemmKernels } from "./attention.ts";
import type { Kernels } from "./kernels.ts";
import type { EngineLayout } from "./layout.ts";

/** One layer's feed-forward part on one device. */
export interface FfnBlock {
  /** Weight bytes of one layer's FFN on one device. */
  readonly weightBytes: number;
  /** Peak activation bytes per engine token in flight. */
  readonly activationBytesPerToken: number;
  /** Kernels one layer's FFN launches in an engine that runs it op by op (see `gemmKernels`). */
  readonly kernels: number;
  /** Adds one layer's FFN time (and its collectives) for batch `b`. */
  add(b: BatchShape, acc: TimeParts): void;
}

/** What both FFN kinds need. */
export interface FfnInput {
  readonly model: ModelSpec;
  readonly k: Kernels;
  readonly layout: EngineLayout;
  /** Bytes per weight. */
  readonly wb: number;
  /** Matrix type of the GEMMs. */
  readonly peak: keyof MatrixPeaks;
}

/**
 * Collectives that move tokens from the attention layout (`tp` ranks with
 * the engine's T tokens) to an FFN laid out as `ffnTp × ffnDp` and back. In
 * the plain TP layout this is the all-reduce after the MLP; otherwise the
 * FFN group gathers the tokens of the DP ranks it serves and scatters the
 * reduced result back.
 */
function layoutChange(k: Kernels, l: EngineLayout, ffnTp: number, ffnDp: number, T: number, h: number): number {
  const bytes = T * h * ACT_BYTES;
  if (ffnTp === l.tp && ffnDp === l.dp) return k.collective("all_reduce", l.tp, bytes);
  const groupBytes = (bytes * l.dp) / ffnDp;
  return k.collective("all_gather", ffnTp, groupBytes) + k.collective("reduce_scatter", ffnTp, groupBytes);
}

/**
 * The dense SwiGLU MLP (gate and up fused, then down), laid out as
 * `ffnTp × ffnDp` (default: mlpTp × mlpDp). With `ownReduction` false its
 * output is reduced by the caller (shared experts, summed with the routed ones).
 */
export function denseFfn(
  f: FfnInput,
  intermediate = f.model.intermediate,
  ffnTp = f.layout.mlpTp,
  ffnDp = f.layout.mlpDp,
  ownReduction = true,
): FfnBlock {
  const { model: m, k, layout: l, wb, peak } = f;
  const h = m.hidden;
  const inter = intermediate / ffnTp;
  const tokenShare = l.dp / ffnDp; // FFN tokens per engine token
  const reduces = ownReduction && (ffnTp !== l.tp || ffnDp !== l.dp ? 2 : l.tp > 1 ? 1 : 0);
  return {
    weightBytes: 3 * h * inter * wb,
    activationBytesPerToken: ACT_BYTES * tokenShare * 3 * inter,
    // (Post-attention residual-add + RMSNorm,) gate_up, SiLU-and-mul, down, the reduction(s).
    kernels: (ownReduction ? 1 : 0) + 1 + 2 * gemmKernels(peak) + (reduces || 0),
    add(b, acc) {
      const T = b.tokens * tokenShare;
      acc.linear += k.gemm(T, 2 * inter, h, wb, peak) + k.gemm(T, h, inter, wb, peak);
      // Post-attention residual-add + RMSNorm on the engine's tokens; SiLU-and-mul on the FFN's.
      acc.elementwise += k.stream(ACT_BYTES * (4 * h * b.tokens + 3 * inter * T), 2);
      if (ownReduction) acc.communication += layoutChange(k, l, ffnTp, ffnDp, b.tokens, h);
    },
  };
}

/**
 * Expected number of distinct experts touched when `tokens` tokens each
 * pick `topK` of `experts` uniformly: experts × (1 − (1 − topK/experts)^tokens).
 */
export function expectedTouched(experts: number, topK: number, tokens: number): number {
  return experts * (1 - Math.pow(1 - topK / experts, tokens));
}

/**
 * A mixture-of-experts layer. Routed experts are split over `ep` devices
 * (each expert's intermediate over `moeTp`) and tokens over `moeDp` groups;
 * the expert weights read per step are those of the experts the batch
 * touches (uniform routing). Shared experts run like a dense MLP in the
 * attention layout. With ep > 1 tokens travel by all-to-all (dispatch in
 * the activation type of the linear layers, combine in BF16).
 */
export function moeFfn(f: FfnInput, e: MoeSpec): FfnBlock {
  const { model: m, k, layout: l, wb, peak } = f;
  const h = m.hidden;
  // With redundant experts (EPLB) the expert count need not divide ep: a
  // device holds ⌈experts / ep⌉.
  const localExperts = Math.ceil(e.experts / l.ep);
  const inter = e.expertIntermediate / l.moeTp;
  const sharedInter = e.sharedIntermediate * e.sharedExperts;
  // The shared experts' output joins the routed output before one reduction (below).
  const shared = sharedInter > 0 ? denseFfn(f, sharedInter, l.tp, l.dp, false) : undefined;
  const tokenShare = l.dp / l.moeDp; // tokens in this device's MoE group per engine token
  const dispatchBytes = peak === "bf16" || peak === "fp16" ? ACT_BYTES : 1;
  const groupRanks = l.ep * l.moeTp;
  const nodes = Math.ceil(groupRanks / k.device.devicesPerNode);
  // Nodes a token reaches: its top-k experts spread over the nodes, at most
  // topk_group of them under node-limited routing (DeepSeek: 4).
  const reach = Math.min(
    e.groups > 1 ? e.topkGroups : nodes,
    nodes * (1 - Math.pow(1 - 1 / nodes, e.topK)),
  );
  const remoteCopies = nodes > 1 ? (reach * (nodes - 1)) / nodes : 0;
  // One object per block: the kernel tables find its nearest measured shape once.
  const moeShape = {
    hidden: h,
    inter: e.expertIntermediate,
    experts: e.experts,
    topK: e.topK,
    moeTp: l.moeTp,
    ep: l.ep,
  };
  return {
    weightBytes: h * e.experts * ACT_BYTES + localExperts * 3 * h * inter * wb + (shared?.weightBytes ?? 0),
    // Residual-add + RMSNorm, the router GEMM, scoring and top-k (group-limited: four more), the token sort
    // and expert offsets, the two grouped GEMMs (each with its input quantization) and the activation, the
    // weighted sum back to tokens, the shared experts, their sum with the routed output, and the
    // collectives (an all-to-all each way with EP, else the reduction).
    kernels: 1 + 1 + 2 + (e.groups > 1 ? 4 : 0) + 2 + 2 * gemmKernels(peak) + 1 + 1 + (shared?.kernels ?? 0) +
      (shared ? 1 : 0) + (l.ep > 1 ? 3 : l.moeTp === l.tp && l.moeDp === l.dp ? (l.tp > 1 ? 1 : 0) : 2),
    activationBytesPerToken: ACT_BYTES * (tokenShare * e.topK * 3 * inter / l.ep + 2 * h) +
      (shared?.activationBytesPerToken ?? 0),
    add(b, acc) {
      const T = b.tokens;
      const groupTokens = T * tokenShare;
      const pairs = (groupTokens * e.topK) / l.ep;
      const share = 1 - Math.pow(1 - e.topK / e.experts, groupTokens);
      const touched = localExperts * share;
      acc.linear += k.gemm(T, e.experts, h, ACT_BYTES, "bf16"); // router
      // The engine's measured MoE kernel where its tables hold one, else two grouped GEMMs and SiLU-and-mul.
      const measured = k.moeExperts(moeShape, groupTokens, touched, pairs, wb, peak);
      if (measured !== undefined) acc.linear += measured;
      else {
        acc.linear += groupedGemm(k, pairs, touched, 2 * inter, h, wb, peak, localExperts, share) +
          groupedGemm(k, pairs, touched, h, inter, wb, peak, localExperts, share);
        acc.elementwise += k.stream(ACT_BYTES * 3 * inter * pairs, 1);
      }
      if (shared) shared.add(b, acc);
      else {
        acc.elementwise += k.stream(ACT_BYTES * 4 * h * T, 1); // post-attention norm
      }
      if (l.ep > 1) {
        const tokens = groupTokens / groupRanks; // tokens each device sends
        const local = tokens * e.topK * l.moeTp * h;
        const dispatch = nodes > 1
          ? k.hierarchicalAllToAll(groupRanks, tokens * remoteCopies * h * dispatchBytes, local * dispatchBytes)
          : k.collective("all_to_all", groupRanks, local * dispatchBytes);
        const combine = nodes > 1
          ? k.hierarchicalAllToAll(groupRanks, tokens * remoteCopies * h * ACT_BYTES, local * ACT_BYTES)
          : k.collective("all_to_all", groupRanks, local * ACT_BYTES);
        acc.communication += dispatch + combine +
          // Back to every rank of the attention TP group (summing the shared experts' partial outputs).
          k.collective(shared ? "all_reduce" : "all_gather", l.tp, T * h * ACT_BYTES);
      } else {
        acc.communication += layoutChange(k, l, l.moeTp, l.moeDp, T, h);
      }
    },
  };
}
