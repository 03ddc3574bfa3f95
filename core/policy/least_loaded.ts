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
  choose(candidates: readonly EngineLoad[]): EngineLoad {
    // Work in seconds (tokens × the engine's seconds per token); a request
    // added counts one token, so idle engines go faster-first; active as a
    // fraction breaks the remaining ties.
    return argMin(candidates, (e) => (e.outstanding + 1) * e.weight + e.active * 1e-9);
  }
}
