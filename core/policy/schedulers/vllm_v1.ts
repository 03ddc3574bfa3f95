/**
 * vLLM V1's scheduler (0.8 and later).
 *
 * Follows vllm-project/vllm@20e489eaa1d1de7ca05297e6d46797432e0f7c3d:vllm/v1/core/sched/scheduler.py:
 * - one token budget per step shared by running and waiting requests: the
 *   RUNNING requests are scheduled first, each taking its next prefill
 *   chunk or decode token (L163-L176, L179-L191), then the WAITING ones,
 *   only when nothing was preempted in this step (L293-L297);
 * - admission takes the blocks of the first chunk only (`allocate_slots`,
 *   no watermark): greedy;
 * - when a running request cannot get a block, the last running request
 *   is preempted (`self.running.pop()`), its blocks freed and its
 *   computed tokens reset to 0, and it goes back to the front of the
 *   waiting queue (`appendleft`) to be recomputed (L216-L243).
 *
 * @module
 */
import { greedyAdmission } from "../greedy_admission.ts";
import { mixedBatching } from "../mixed_batching.ts";
import { COMMON_DECISIONS } from "../scheduler.ts";
import type { Scheduler } from "../scheduler.ts";

/** vLLM V1's scheduler. */
export const vllmV1Scheduler: Scheduler = {
  name: "vllm_v1",
  follows: "vllm-project/vllm@20e489e (0.8–0.11):vllm/v1/core/sched/scheduler.py",
  batching: mixedBatching,
  admission: greedyAdmission,
  ...COMMON_DECISIONS,
  // Chunked prefill off: `num_new_tokens > token_budget` skips the request into skipped_waiting_requests and
  // admission goes on with the next (scheduler.py, the waiting loop); it is put back at the queue's head.
  skipOversized: true,
};
