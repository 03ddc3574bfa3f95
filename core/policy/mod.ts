/**
 * Routing policies.
 *
 * @module
 */
import { LeastKvRouter } from "./least_kv.ts";
import { LeastLoadedRouter } from "./least_loaded.ts";
import { RandomRouter } from "./random.ts";
import { RoundRobinRouter } from "./round_robin.ts";
import type { Router } from "./router.ts";
import { Rng } from "../workload/rng.ts";

export { argMin } from "./router.ts";
export type { EngineLoad, Router } from "./router.ts";
export { LeastKvRouter, LeastLoadedRouter, RandomRouter, RoundRobinRouter };

/**
 * Builds the router named in `serving_config.routing_policy`.
 *
 * @param name the policy
 * @param seed the run's seed (for `random`)
 */
export function makeRouter(name: "least_loaded" | "round_robin" | "least_kv" | "random", seed: number): Router {
  switch (name) {
    case "least_loaded":
      return new LeastLoadedRouter();
    case "round_robin":
      return new RoundRobinRouter();
    case "least_kv":
      return new LeastKvRouter();
    case "random":
      return new RandomRouter(new Rng(seed, "routing"));
  }
}
