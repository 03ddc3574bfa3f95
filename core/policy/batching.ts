/**
 * The batch-formation contract: how one engine step is filled from the
 * running requests (their next prefill chunk or decode token) and from the
 * waiting queue, within the step's token budget.
 *
 * @module
 */

/** Which running requests a scheduling pass serves. */
export type Phase = "prefill" | "decode" | "all";

/** What a batch-formation policy may do to an engine's next step. */
export interface StepBuilder {
  /** Tokens per step. */
  readonly maxTokens: number;
  /**
   * Gives the running requests of `phase` their tokens, in order, from
   * `budget`, preempting when KV blocks run out.
   *
   * @returns the budget left, or -1 when something was preempted
   */
  serveRunning(budget: number, phase: Phase): number;
  /** Admits waiting requests first-come-first-served into `budget`. */
  admitWaiting(budget: number): void;
  /** Tokens scheduled so far in this step. */
  scheduledTokens(): number;
}

/** How an engine fills a step. */
export interface BatchFormation {
  /** The policy's name. */
  readonly name: "mixed" | "prefill_first";
  /**
   * Fills one step.
   *
   * @returns -1 when a pass preempted and the step is empty, else ≥ 0
   */
  form(step: StepBuilder): number;
}
