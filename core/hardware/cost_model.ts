/**
 * The interface the engine sees of a hardware model.
 *
 * @module
 */
import type { BatchShape } from "./roofline.ts";

/** Maps one engine step's aggregates to its duration. */
export interface StepCostModel {
  /**
   * Seconds the step takes.
   *
   * Precondition: `b.tokens > 0`. Postcondition: a finite number > 0; O(1)
   * in the batch size.
   */
  stepTime(b: BatchShape): number;
  /**
   * Model FLOPs of the step over the whole engine (all its devices): 2 ×
   * active parameters per token, attention pairs and the LM head, as MFU
   * counts them. Optional: without it, MFU is not reported.
   */
  stepFlops?(b: BatchShape): number;
  /**
   * Bytes the step moves to and from HBM over the whole engine: the weights
   * it touches, the KV it reads and writes. Optional: without it, MBU is
   * not reported.
   */
  stepBytes?(b: BatchShape): number;
  /** Peak FLOP/s of the engine's devices together, at the matmul type its GEMMs use. */
  readonly peakFlops?: number;
  /** HBM bytes/s of the engine's devices together. */
  readonly peakBandwidth?: number;
}
