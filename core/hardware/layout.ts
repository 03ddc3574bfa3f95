/**
 * The parallel layout of one engine and of the instance it belongs to.
 *
 * An instance of `world = tp × dp` devices runs `dp` engines (attention DP
 * ranks), each over `tp` devices. Dense MLP, MoE and LM-head layers may be
 * laid out differently over the same devices: `mlpTp × mlpDp`,
 * `ep × moeTp × moeDp` and `lmheadTp × lmheadDp` each equal `world`. A layer
 * that spans DP ranks processes the tokens of all of them; the simulator
 * assumes the router keeps the ranks' batches alike, so such a layer's work
 * per device follows from one engine's batch × dp.
 *
 * @module
 */

/** Parallel layout of one engine within its instance. */
export interface EngineLayout {
  /** Tensor-parallel size of attention (devices per engine). */
  readonly tp: number;
  /** Attention data-parallel ranks (engines) per instance. */
  readonly dp: number;
  /** Decode-context parallelism: the KV sequence is split over this many of the TP ranks. */
  readonly dcp: number;
  /** TP size of dense MLP layers. */
  readonly mlpTp: number;
  /** DP size of dense MLP layers. */
  readonly mlpDp: number;
  /** TP size of the LM head. */
  readonly lmheadTp: number;
  /** DP size of the LM head. */
  readonly lmheadDp: number;
  /** Expert parallelism of MoE layers. */
  readonly ep: number;
  /** TP size inside each expert. */
  readonly moeTp: number;
  /** DP size of MoE layers. */
  readonly moeDp: number;
}

/** The layout of a single engine on `tp` devices with nothing else split. */
export function tensorParallel(tp: number): EngineLayout {
  return { tp, dp: 1, dcp: 1, mlpTp: tp, mlpDp: 1, lmheadTp: tp, lmheadDp: 1, ep: 1, moeTp: tp, moeDp: 1 };
}
