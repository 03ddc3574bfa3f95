/**
 * vLLM V0's scheduler (0.6–0.7) with chunked prefill, as its profile runs
 * it on dense models.
 *
 * Follows vllm-project/vllm@ed6e9075d31e32c8548b480a47d1ffb77da1f54c:vllm/core/scheduler.py:
 * - `_schedule_chunked_prefill`: running requests first (decodes, then
 *   running prefill chunks), then swapped, then new prefills into what is
 *   left of the budget: decodes and prefill chunks share a step;
 * - admission by `can_allocate` on the prompt's blocks (greedy, with a 1%
 *   watermark this simulator does not model);
 * - preemption by recomputation (the default `PreemptionMode.RECOMPUTE` for
 *   single-sequence groups) of the last running sequence group
 *   (`running_queue.pop()`, L1108-L1112, L1742-L1751), back to the front
 *   of the waiting queue.
 *
 * MLA models turn chunked prefill off in 0.7.3 (vllm/config.py): their
 * profile then selects prefill-first steps (`mix_prefill_decode: false`),
 * which replaces this scheduler's batching.
 *
 * @module
 */
import { greedyAdmission } from "../greedy_admission.ts";
import { mixedBatching } from "../mixed_batching.ts";
import { COMMON_DECISIONS } from "../scheduler.ts";
import type { Scheduler } from "../scheduler.ts";

/** vLLM V0's scheduler. */
export const vllmV0Scheduler: Scheduler = {
  name: "vllm_v0",
  follows: "vllm-project/vllm@ed6e907 (0.6–0.7.3):vllm/core/scheduler.py",
  batching: mixedBatching,
  admission: greedyAdmission,
  ...COMMON_DECISIONS,
};
