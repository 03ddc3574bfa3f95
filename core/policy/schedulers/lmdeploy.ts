/**
 * LMDeploy TurboMind's scheduler (0.6 and later).
 *
 * Follows InternLM/lmdeploy's TurbomindEngineConfig and its documentation
 * (0.6 and later): up to `max_prefill_token_num` (8,192) prompt tokens per
 * iteration, prefill chunks running beside the decodes of the batch; a
 * sequence whose blocks run out is evicted and recomputed later.
 *
 * @module
 */
import { greedyAdmission } from "../greedy_admission.ts";
import { mixedBatching } from "../mixed_batching.ts";
import { COMMON_DECISIONS } from "../scheduler.ts";
import type { Scheduler } from "../scheduler.ts";

/** LMDeploy TurboMind's scheduler. */
export const lmdeployScheduler: Scheduler = {
  name: "lmdeploy",
  follows: "InternLM/lmdeploy (0.6+): TurbomindEngineConfig (max_prefill_token_num, max_batch_size)",
  batching: mixedBatching,
  admission: greedyAdmission,
  ...COMMON_DECISIONS,
};
