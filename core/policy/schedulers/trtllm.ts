/**
 * TensorRT-LLM's batch manager, with both capacity-scheduler policies.
 *
 * Follows NVIDIA/TensorRT-LLM's cpp/tensorrt_llm/batch_manager/
 * capacityScheduler.cpp and microBatchScheduler.cpp (1.0–1.2):
 * - in-flight batching: context (prefill) and generation requests share a
 *   step up to `max_num_tokens` (the micro-batch scheduler), context
 *   chunking off by default (a prompt's context runs whole);
 * - `GUARANTEED_NO_EVICT` (the default `CapacitySchedulerPolicy`): a
 *   request starts only when the blocks of its whole lifetime (prompt and
 *   `max_tokens`) are free, so a started request is never evicted;
 * - `MAX_UTILIZATION`: requests start while their current blocks fit, and
 *   when generation runs out of blocks the most recently started requests
 *   are paused (their KV dropped and recomputed on resume);
 * - a lifetime reservation counts prompt + max_new_tokens
 *   (`getRemainingBlocksToCompletion`), one token more than the KV holds;
 * - with chunking, a context chunk cut short by `max_num_tokens` is a
 *   multiple of the chunk unit (tokens per block), possibly none.
 *
 * The 12 streams of tests/conformance/trtllm/ are followed step by step.
 *
 * @module
 */
import { greedyAdmission } from "../greedy_admission.ts";
import { mixedBatching } from "../mixed_batching.ts";
import { noEvictAdmission } from "../no_evict_admission.ts";
import { COMMON_DECISIONS } from "../scheduler.ts";
import type { Scheduler } from "../scheduler.ts";

const FOLLOWS = "NVIDIA/TensorRT-LLM (1.0–1.2):cpp/tensorrt_llm/batch_manager/{capacity,microBatch}Scheduler.cpp";

/** TensorRT-LLM with `CapacitySchedulerPolicy.GUARANTEED_NO_EVICT` (its default). */
export const trtllmNoEvictScheduler: Scheduler = {
  name: "trtllm_guaranteed_no_evict",
  follows: FOLLOWS,
  batching: mixedBatching,
  admission: noEvictAdmission,
  ...COMMON_DECISIONS,
  // setCtxRequestsChunkSize<kFIRST_COME_FIRST_SERVED>: a truncated context chunk is a multiple of the chunk unit.
  chunkInBlocks: true,
  // getRemainingBlocksToCompletion: ceil((prompt + max_new_tokens) / tokens_per_block).
  reservesLastToken: true,
};

/** TensorRT-LLM with `CapacitySchedulerPolicy.MAX_UTILIZATION`. */
export const trtllmMaxUtilizationScheduler: Scheduler = {
  name: "trtllm_max_utilization",
  follows: FOLLOWS,
  batching: mixedBatching,
  admission: greedyAdmission,
  ...COMMON_DECISIONS,
  // setCtxRequestsChunkSize<kFIRST_COME_FIRST_SERVED>: a truncated context chunk is a multiple of the chunk unit.
  chunkInBlocks: true,
  // getRemainingBlocksToCompletion: ceil((prompt + max_new_tokens) / tokens_per_block).
  reservesLastToken: true,
};
