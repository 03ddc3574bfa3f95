/**
 * vLLM V0's scheduler (0.6–0.7) and block manager.
 *
 * Follows vllm-project/vllm@5bbadcb63ec8a14518d521bbffaf39f8a784d0f0 (main
 * on the v0.7.3 release day; `vllm/core/` is the same from v0.6.4 to 0.7.3),
 * `vllm/core/scheduler.py` and `vllm/core/block_manager.py`, checked step by
 * step against the engine's own decisions (tests/conformance/vllm_v0/,
 * recorded by running V0's `LLMEngine.step()` on CPU):
 * - chunked prefill on (`_schedule_chunked_prefill`, L1310-L1422): the
 *   running queue first, each taking its decode or `min(prompt left,
 *   budget left)` (L1979-L2046), then new prefills into what is left of
 *   the budget: decodes and prefill chunks share a step (mixed batching);
 * - chunked prefill off (`_schedule_default`, L1204-L1308): whole prompts
 *   first, and a step that has one runs no decodes (L1243); the
 *   first-come-first-served scan stops at the first prompt that does not
 *   fit (L1111-L1112, L1148-L1152): prefill-first steps, head-of-line —
 *   the profile asks for them with `mix_prefill_decode: false`;
 * - admission allocates the blocks of the whole prompt, chunked or not
 *   (`can_allocate`/`allocate`, block_manager.py L109-L204), and only if
 *   `int(0.01 × blocks)` stay free (the watermark, L66, L92, L141-L147);
 * - a running request continues only if every block its new tokens touch
 *   is free (`can_append_slots`, block_manager.py L206-L233: a worst-case
 *   copy per touched block), else the tail of the running queue is
 *   preempted by recomputation (`running_queue.pop()`, L738; recompute is
 *   the mode for single-sequence groups, L1729-L1772), possibly itself;
 * - the victims rejoin the front of the waiting queue after the step's
 *   admissions (`waiting.extendleft`, L1366): with chunked prefill, other
 *   requests are still admitted in a step that preempted.
 *
 * Not modelled: async output processing (V0's default on CUDA), under which
 * a finished request runs one more (discarded) decode and frees its blocks
 * a step later (streams 14 and 15; tests/conformance_test.ts says why).
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
  follows: "vllm-project/vllm@5bbadcb (0.6.4–0.7.3):vllm/core/scheduler.py, vllm/core/block_manager.py",
  batching: mixedBatching,
  admission: greedyAdmission,
  ...COMMON_DECISIONS,
  admitsWholePrompt: true,
  // BlockSpaceManager's default watermark (the Scheduler passes none): block_manager.py L66, L92 (int(share × blocks)).
  watermark: 0.01,
  countsTouchedBlocks: true,
  admitsAfterPreemption: true,
};
