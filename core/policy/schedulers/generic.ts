/**
 * The generic scheduler: the bundled example and every run without
 * `serving_config.engine` use it. Follows upstream ServingCast's
 * (msModeling; ../shared/seed/servingcast-guide.zh.md) continuous batching: vLLM-V1-style mixed steps (running requests
 * first, then FCFS admission into what is left of the token budget),
 * greedy admission (only the first chunk's blocks), recompute preemption
 * of the newest running request.
 *
 * @module
 */
import { greedyAdmission } from "../greedy_admission.ts";
import { mixedBatching } from "../mixed_batching.ts";
import { COMMON_DECISIONS } from "../scheduler.ts";
import type { Scheduler } from "../scheduler.ts";

/** The generic scheduler. */
export const genericScheduler: Scheduler = {
  name: "generic",
  follows: "msModeling ServingCast (the seed guide's simulator): continuous batching with chunked prefill",
  batching: mixedBatching,
  admission: greedyAdmission,
  ...COMMON_DECISIONS,
};
