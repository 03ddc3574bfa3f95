/**
 * KV-aware routing: the engine with the most free KV blocks.
 *
 * @module
 */
import { argMin } from "./router.ts";
import type { EngineLoad, Router } from "./router.ts";

/** Routes to the engine with the most free KV blocks. */
export class LeastKvRouter implements Router {
  choose(candidates: readonly EngineLoad[]): EngineLoad {
    return argMin(candidates, (e) => -e.freeKvBlocks);
  }
}
