/**
 * LMDeploy TurboMind's scheduler (0.6 to 0.11).
 *
 * Follows InternLM/lmdeploy@f36aa716e9bacddb9b2e17e713ac397f7eb0ae36
 * (v0.10.2; the scheduling code is the same from v0.6.0 to v0.11.0),
 * src/turbomind/models/llama/LlamaBatch.cc, SequenceManager.cc and
 * BlockManager.cc, as the derived streams of tests/conformance/lmdeploy/
 * state them rule by rule (tests/conformance/README.md, "lmdeploy"); its
 * own loop is core/engine/lmdeploy_former.ts:
 * - every step serves the whole batch (up to `max_batch_size` sequences,
 *   running or not) in arrival order, prefill chunks and decodes together
 *   (`Materialize`, SequenceManager.cc L487-L495; `Forward`, LlamaBatch.cc
 *   L1445-L1666), under a token budget that follows the pending prefill
 *   over `max_prefill_iters` steps (`AdjustMaxInputCount`, L452-L482);
 * - a sequence asks for the blocks of its context + 1 token; one that does
 *   not fit is passed over (no head-of-line blocking), or preempts the
 *   newest sequences below it, which lose only the blocks taken and keep
 *   their slot and priority (SequenceManager.cc L292-L350, BlockManager.cc
 *   L154-L179); the newest stalls rather than preempting itself.
 *
 * Prefix caching, disaggregated roles and MTP run on the step former with
 * mixed batching (the streams do not cover them).
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
  follows:
    "InternLM/lmdeploy@f36aa71 (0.6–0.11):src/turbomind/models/llama/{LlamaBatch,SequenceManager,BlockManager}.cc",
  batching: mixedBatching,
  admission: greedyAdmission,
  ...COMMON_DECISIONS,
  // CountRequiredBlocks: a new request takes its whole prompt's blocks (+ 1 token) before its first chunk.
  admitsWholePrompt: true,
  former: "lmdeploy",
};
