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
}
