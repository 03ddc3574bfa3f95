/**
 * Round-robin routing over the engines that can serve a request.
 *
 * @module
 */
import type { EngineLoad, Router } from "./router.ts";

/** Cycles through engines in index order. */
export class RoundRobinRouter implements Router {
  readonly blind = true;
  #next = 0;

  /**
   * The first candidate whose index is at or after the cursor, wrapping
   * around to the first. Precondition (beside {@link Router}'s): the
   * candidates are in ascending index order, as the simulator's pools are;
   * the candidate is found by bisection (a scan from the front read every
   * engine before the cursor: 3.4% of a day on 512 engines, each read a
   * cache miss).
   */
  choose(candidates: readonly EngineLoad[]): EngineLoad {
    const next = this.#next;
    let lo = 0;
    let hi = candidates.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (candidates[mid].index < next) lo = mid + 1;
      else hi = mid;
    }
    const pick = candidates[lo === candidates.length ? 0 : lo];
    this.#next = pick.index + 1;
    return pick;
  }
}
