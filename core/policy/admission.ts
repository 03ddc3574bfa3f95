/**
 * The admission contract: how many KV blocks an engine sets aside for a
 * request when it admits it, and whether it may preempt a running request
 * when blocks run out.
 *
 * An engine admits a request when its first chunk's blocks (`need`) plus
 * whatever the policy sets aside beyond them fit in the free blocks that no
 * other admitted request has set aside. A request's growth comes from its
 * own reservation first, then from the unreserved free blocks; only a
 * policy that `preempts` may then take blocks back from running requests.
 *
 * @module
 */

/**
 * The admission policies by name (`serving_config.admission_policy`): vLLM's
 * greedy, TensorRT-LLM's guaranteed_no_evict, SGLang's conservative. The
 * one list the config schema, the engine's input and the policies share.
 */
export const ADMISSION_POLICIES = ["greedy", "guaranteed_no_evict", "conservative"] as const;

/** An admission policy's name. */
export type AdmissionName = (typeof ADMISSION_POLICIES)[number];

/** How an engine admits requests into its KV cache. */
export interface Admission {
  /** The policy's name in `serving_config.admission_policy`. */
  readonly name: AdmissionName;
  /**
   * Blocks to hold and set aside at admission, the `need` taken at once
   * included. Postcondition: need ≤ result ≤ max(need, lifetime).
   *
   * @param need blocks the first chunk takes now
   * @param lifetime blocks the request will hold at its largest on this engine
   */
  admitBlocks(need: number, lifetime: number): number;
  /**
   * Whether a running request may be preempted when the free blocks run
   * out. A policy that never preempts must set aside every block a request
   * will take (`admitBlocks` = `lifetime`).
   */
  readonly preempts: boolean;
}
