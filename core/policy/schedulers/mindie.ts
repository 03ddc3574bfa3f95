/**
 * MindIE's scheduler (MindIE LLM 1.0 to 3.0, PD-mixed, FCFS policies).
 *
 * Follows Ascend/MindIE-LLM@8b4871ad31f592aa863f6255760e4934484d78e4
 * (the head of master and v3.0.0), src/scheduler/scheduler.cpp,
 * src/scheduler/policy/fcfs_policy.cpp and
 * src/block_manager/self_attn_block_manager.cpp, as the derived streams of
 * tests/conformance/mindie/ state them rule by rule
 * (tests/conformance/README.md, "mindie"); its own loop is
 * core/engine/mindie_former.ts:
 * - a round is a prefill batch or a decode batch, never both
 *   (`DecidePDPriority`, scheduler.cpp L539-L585): decode after an empty
 *   round, while no request waits, while the head of the queue has waited
 *   less than `maxQueueDelayMicroseconds`, or while fewer than 5% of the
 *   blocks are free; prefill otherwise;
 * - a prefill batch takes up to `maxPrefillBatchSize` prompts (new ones
 *   before recomputations) whole, first come first served, stopping at the
 *   first that does not fit the budget or the free blocks; admission takes
 *   the prompt's blocks only (nothing for the output), so this is not
 *   guaranteed-no-evict: `maxPreemptCount` 0 means every preemption is a
 *   recomputation (fcfs_policy.cpp L468-L510);
 * - a decode batch serves up to `maxBatchSize` running requests; one short
 *   of a block preempts the last candidate, or itself, back to the end of
 *   the waiting queue;
 * - a finished request's blocks come back at the next decode round.
 *
 * Chunked prefill (the SplitFuse plugin, off by default) runs on the step
 * former with mixed batching; swapping (`maxPreemptCount` > 0),
 * `supportSelectBatch` and `maxFirstTokenWaitTime` preemption are not
 * modelled (no configuration names them).
 *
 * @module
 */
import { greedyAdmission } from "../greedy_admission.ts";
import { prefillFirstBatching } from "../prefill_first_batching.ts";
import { COMMON_DECISIONS } from "../scheduler.ts";
import type { Scheduler } from "../scheduler.ts";

/** MindIE's scheduler. */
export const mindieScheduler: Scheduler = {
  name: "mindie",
  follows:
    "Ascend/MindIE-LLM@8b4871a (1.0–3.0):src/scheduler/{scheduler,policy/fcfs_policy}.cpp, src/block_manager/self_attn_block_manager.cpp",
  batching: prefillFirstBatching,
  admission: greedyAdmission,
  ...COMMON_DECISIONS,
  // CanAllocate: ceil((prompt + generated) / cacheBlockSize) blocks at admission, chunked or not.
  admitsWholePrompt: true,
  former: "mindie",
  mindieLoop: {
    // src/server/conf/config.json L97-L116: maxPrefillBatchSize 50, maxQueueDelayMicroseconds 5000.
    maxPrefillBatchSize: 50,
    queueDelayUs: 5000,
    // scheduler.h L38 (0.05) with scheduler.cpp L544-L546: decode while free blocks < int(0.05 × npuBlockNum).
    decodeReserve: 0.05,
  },
};
