/**
 * MindIE Service's scheduler (1.0 and later).
 *
 * Follows the MindIE Service configuration reference (config.json of
 * 1.0.RC3 and later): prefill batches go first (`supportSelectBatch`
 * false), up to `maxPrefillTokens` per step, without chunked prefill;
 * `maxPreemptCount` 0 — no preemption, so a request is admitted only when
 * the blocks of its whole lifetime are free (guaranteed no evict).
 *
 * @module
 */
import { noEvictAdmission } from "../no_evict_admission.ts";
import { prefillFirstBatching } from "../prefill_first_batching.ts";
import { COMMON_DECISIONS } from "../scheduler.ts";
import type { Scheduler } from "../scheduler.ts";

/** MindIE Service's scheduler. */
export const mindieScheduler: Scheduler = {
  name: "mindie",
  follows: "MindIE Service 1.0.RC3+ config.json reference (maxPrefillTokens, supportSelectBatch, maxPreemptCount)",
  batching: prefillFirstBatching,
  admission: noEvictAdmission,
  ...COMMON_DECISIONS,
};
