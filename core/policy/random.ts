/**
 * Uniform random routing from the routing stream of the run's seed.
 *
 * @module
 */
import type { Rng } from "../workload/rng.ts";
import type { EngineLoad, Router } from "./router.ts";

/** Routes uniformly at random (seeded). */
export class RandomRouter implements Router {
  readonly blind = true;
  #rng: Rng;
  /** @param rng the routing stream */
  constructor(rng: Rng) {
    this.#rng = rng;
  }
  choose(candidates: readonly EngineLoad[]): EngineLoad {
    return candidates[Math.floor(this.#rng.uniform() * candidates.length)];
  }
}
