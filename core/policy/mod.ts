/**
 * Routing policies.
 *
 * @module
 */
import { LeastKvRouter } from "./least_kv.ts";
import { LeastLoadedRouter } from "./least_loaded.ts";
import { RandomRouter } from "./random.ts";
import { RoundRobinRouter } from "./round_robin.ts";
import { LLM_D_WEIGHTS, PrefixAwareRouter } from "./prefix_aware.ts";
import type { PrefixAwareWeights } from "./prefix_aware.ts";
import { SessionAffinityRouter } from "./session_affinity.ts";
import type { Router } from "./router.ts";
import type { Admission } from "./admission.ts";
import { greedyAdmission } from "./greedy_admission.ts";
import { noEvictAdmission } from "./no_evict_admission.ts";
import { conservativeAdmission } from "./conservative_admission.ts";
import { Rng } from "../workload/rng.ts";

export { argMin } from "./router.ts";
export { LoadTree } from "./load_tree.ts";
export { ADMISSION_POLICIES } from "./admission.ts";
export type { Admission, AdmissionName } from "./admission.ts";
export { greedyAdmission } from "./greedy_admission.ts";
export { noEvictAdmission } from "./no_evict_admission.ts";
export { conservativeAdmission, NEW_TOKEN_RATIO } from "./conservative_admission.ts";
export type { BatchFormation, Phase, StepBuilder } from "./batching.ts";
export { mixedBatching } from "./mixed_batching.ts";
export { prefillFirstBatching } from "./prefill_first_batching.ts";
export { SCHEDULER_NAMES, watermarkBlocks, withParts } from "./scheduler.ts";
export type { MindieLoop, NewTokenRatio, PreemptionMode, Scheduler, SchedulerName, VictimRule } from "./scheduler.ts";
export { SCHEDULERS } from "./schedulers.ts";
export type { EngineLoad, Router, RouteRequest } from "./router.ts";
export { LeastKvRouter, LeastLoadedRouter, PrefixAwareRouter, RandomRouter, RoundRobinRouter, SessionAffinityRouter };
export { LLM_D_WEIGHTS };
export type { PrefixAwareWeights };

/** The routing policies by name: the one list the config schema, the engine's input and the routers share. */
export const ROUTING_POLICIES = [
  "least_loaded",
  "round_robin",
  "least_kv",
  "random",
  "prefix_aware",
  "session_affinity",
] as const;

/** A routing policy's name. */
export type RoutingPolicyName = (typeof ROUTING_POLICIES)[number];

/**
 * Builds the router named in `serving_config.routing_policy`.
 *
 * @param name the policy
 * @param seed the run's seed (for `random`, and `prefix_aware`'s ties)
 * @param weights `prefix_aware`'s scorer weights (default: llm-d's)
 */
export function makeRouter(name: RoutingPolicyName, seed: number, weights?: PrefixAwareWeights): Router {
  switch (name) {
    case "least_loaded":
      return new LeastLoadedRouter();
    case "round_robin":
      return new RoundRobinRouter();
    case "least_kv":
      return new LeastKvRouter();
    case "random":
      return new RandomRouter(new Rng(seed, "routing"));
    case "prefix_aware":
      return new PrefixAwareRouter(new Rng(seed, "routing"), weights ?? LLM_D_WEIGHTS);
    case "session_affinity":
      return new SessionAffinityRouter();
  }
}

/** The admission policies by name. */
export const ADMISSION_POLICY = {
  greedy: greedyAdmission,
  guaranteed_no_evict: noEvictAdmission,
  conservative: conservativeAdmission,
} as const satisfies Record<Admission["name"], Admission>;
