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
    // active as a fraction breaks ties between equal token loads.
    return argMin(candidates, (e) => e.outstanding + e.active / 1e6);
  }
}
