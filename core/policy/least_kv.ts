/**
 * KV-aware routing: the engine with the most free KV blocks.
 *
 * @module
 */
import { argMin } from "./router.ts";
import type { EngineLoad, Router } from "./router.ts";

/** Routes to the engine with the most free KV blocks. */
export class LeastKvRouter implements Router {
  /** The fewer free blocks, the greater the key. */
  readonly key = (e: EngineLoad): number => -e.freeKvBlocks;

  choose(candidates: readonly EngineLoad[]): EngineLoad {
    return argMin(candidates, this.key);
  }
}
