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
  choose(candidates: readonly EngineLoad[]): EngineLoad {
    // The first candidate at or after the cursor, wrapping around.
    let pick = candidates[0];
    for (const c of candidates) {
      if (c.index >= this.#next) {
        pick = c;
        break;
      }
    }
    this.#next = pick.index + 1;
    return pick;
  }
}
