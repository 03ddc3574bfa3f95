/**
 * Least-loaded routing: the engine with the fewest outstanding tokens of
 * work (prefill still to do plus decode tokens still to produce), then the
 * fewest active requests.
 *
 * @module
 */
import { argMin } from "./router.ts";
import type { EngineLoad, Router } from "./router.ts";

/** Routes to the engine with the least outstanding work. */
export class LeastLoadedRouter implements Router {
  /**
   * Work in seconds (tokens × the engine's seconds per token); a request
   * added counts one token, so idle engines go faster-first; active as a
   * fraction breaks the remaining ties.
   */
  readonly key = (e: EngineLoad): number => (e.outstanding + 1) * e.weight + e.active * 1e-9;

  choose(candidates: readonly EngineLoad[]): EngineLoad {
    return argMin(candidates, this.key);
  }
}
