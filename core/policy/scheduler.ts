/**
 * The scheduler contract: one engine family's decisions, as one object.
 * An engine (core/engine) provides the mechanism — queues, a KV ledger, a
 * step former that serves running requests and admits waiting ones — and
 * its scheduler decides:
 *
 * - **what runs next and how a step's tokens are shared** (`batching`:
 *   decodes and prefill chunks in one step, or prefill-first steps);
 * - **what is admitted** (`admission`: the blocks set aside beside a
 *   request's first chunk, from nothing to its whole lifetime);
 * - **which request is preempted or retracted, and how** (`victim`,
 *   `preemption`), when a running request needs a block and none is free.
 *
 * Each implementation is one file under schedulers/, whose header cites the
 * engine source it follows; the registry (schedulers.ts) names them. A
 * serving configuration may still override the admission policy and the
 * batch formation (`admission_policy`, `mix_prefill_decode`): the engine
 * then runs its scheduler with those parts replaced ({@link withParts}).
 *
 * @module
 */
import type { Admission } from "./admission.ts";
import type { BatchFormation } from "./batching.ts";

/** The schedulers by name (one file each under core/policy/schedulers/). */
export const SCHEDULER_NAMES = [
  "generic",
  "vllm_v0",
  "vllm_v1",
  "sglang",
  "trtllm_guaranteed_no_evict",
  "trtllm_max_utilization",
  "mindie",
  "lmdeploy",
] as const;

/** A scheduler's name. */
export type SchedulerName = (typeof SCHEDULER_NAMES)[number];

/**
 * Which running request a scheduler preempts first when a block is short:
 * `newest` — the one admitted last (the end of the batch), as vLLM's
 * `self.running.pop()` and TensorRT-LLM's MAX_UTILIZATION pause take it.
 */
export type VictimRule = "newest";

/**
 * How a preempted request gets its KV back: `recompute` — its blocks are
 * freed and its prompt and generated tokens are prefilled again when it is
 * readmitted (it goes back to the front of the waiting queue).
 */
export type PreemptionMode = "recompute";

/** One engine family's scheduling decisions. */
export interface Scheduler {
  /** Its name in the registry. */
  readonly name: SchedulerName;
  /** The engine, version range and source files it follows (repository@version:path). */
  readonly follows: string;
  /** How a step's tokens are shared between running and waiting requests, prefill and decode. */
  readonly batching: BatchFormation;
  /** What admission sets aside, and whether running requests may be preempted. */
  readonly admission: Admission;
  /** Which running request is preempted first. */
  readonly victim: VictimRule;
  /** What a preempted request loses. */
  readonly preemption: PreemptionMode;
  /**
   * With chunked prefill off, whether a waiting prompt longer than the
   * step's remaining budget is passed over for later ones that fit (it
   * keeps its place at the head of the queue), rather than stopping
   * admission for the step (head-of-line).
   */
  readonly skipOversized: boolean;
  /**
   * With chunked prefill on, whether a prompt chunk cut short by the
   * step's budget is rounded down to whole KV blocks (TensorRT-LLM's chunk
   * unit); a chunk rounded to nothing waits, and later prompts that fit
   * whole still go.
   */
  readonly chunkInBlocks: boolean;
  /**
   * Whether what admission sets aside for a request's lifetime counts its
   * last output token too (TensorRT-LLM's `getRemainingBlocksToCompletion`:
   * prompt + max_new_tokens), one token more than its KV ever holds.
   */
  readonly reservesLastToken: boolean;
  /**
   * Whether admission allocates the blocks of a request's whole
   * (re)computation at once, even when it is then prefilled in chunks
   * (vLLM V0's `BlockSpaceManager.allocate`), rather than those of its
   * first chunk.
   */
  readonly admitsWholePrompt: boolean;
  /**
   * Share of all KV blocks that admission leaves free: a request is
   * admitted only if ⌊share × blocks⌋ blocks stay free after it (vLLM V0's
   * block-manager watermark, 0.01); 0: none.
   */
  readonly watermark: number;
  /**
   * Whether a running request continues only while every block its new
   * tokens touch is free, as if each needed a copy (vLLM V0's worst-case
   * `can_append_slots`): a decode needs one free block even when its last
   * block has room, and a later prefill chunk one when the prompt's last
   * block is partly filled. Assumes {@link admitsWholePrompt}.
   */
  readonly countsTouchedBlocks: boolean;
  /**
   * Whether waiting requests are still admitted in a step that preempted
   * (vLLM V0 with chunked prefill: the victims rejoin the waiting queue
   * after the step's admissions), rather than none (vLLM V1).
   */
  readonly admitsAfterPreemption: boolean;
  /**
   * How a step is formed: `continuous` — the engine's step former, driven
   * by `batching` and `admission` (vLLM, TensorRT-LLM and the others);
   * `sglang` — SGLang's own loop (core/engine/sglang_former.ts), whose
   * admission and retraction follow `newTokenRatio`; `mindie` — MindIE's
   * own loop (core/engine/mindie_former.ts), following `mindieLoop`;
   * `lmdeploy` — TurboMind's own loop (core/engine/lmdeploy_former.ts).
   */
  readonly former: "continuous" | "sglang" | "mindie" | "lmdeploy";
  /** SGLang's admission and retraction constants, for the `sglang` former. */
  readonly newTokenRatio?: NewTokenRatio;
  /** MindIE's batch-selection constants, for the `mindie` former. */
  readonly mindieLoop?: MindieLoop;
}

/**
 * MindIE's batch-selection constants (Ascend/MindIE-LLM
 * src/server/conf/config.json and src/scheduler/scheduler.h): the knobs of
 * its loop that a serving configuration here does not name.
 */
export interface MindieLoop {
  /** maxPrefillBatchSize: most prompts in one prefill batch (50). */
  readonly maxPrefillBatchSize: number;
  /** maxQueueDelayMicroseconds: a prefill waits until the head of the queue has waited this long, µs (5,000). */
  readonly queueDelayUs: number;
  /** Share of the blocks below which the loop decodes instead of prefilling (0.05). */
  readonly decodeReserve: number;
}

/**
 * SGLang's new-token-ratio constants (python/sglang/global_config.py and
 * server_args.py): running requests reserve `ratio` × their remaining
 * output at each admission; the ratio starts at `init`, falls by
 * (init − init × minFactor) / decaySteps per decode step without
 * retraction, and after a retraction is reset from what the requests left
 * have generated (+ `retractSteps` tokens each).
 */
export interface NewTokenRatio {
  /** SGLANG_INIT_NEW_TOKEN_RATIO × schedule_conservativeness (0.7). */
  readonly init: number;
  /** min_new_token_ratio = init × this (0.14). */
  readonly minFactor: number;
  /** Decode steps the ratio takes to fall from init to its minimum (600). */
  readonly decaySteps: number;
  /** retract_decode_steps: tokens each remaining request is assumed to still need after a retraction (20). */
  readonly retractSteps: number;
  /**
   * Decode steps of KV a retraction frees room for: SGLang 0.5.2 and later
   * retract until one more token fits for each request left
   * (`check_decode_mem`): 1; before, until `retract_decode_steps` tokens
   * fit for each (schedule_batch.py L1251-L1279 at 0.4.6): 20.
   */
  readonly retractRoomSteps: number;
  /** SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION: an output estimate never exceeds this many tokens (4,096). */
  readonly clip: number;
  /** max_prefill_tokens: prompt tokens of one prefill batch, the first request excepted (16,384). */
  readonly maxPrefillTokens: number;
}

/**
 * The decisions most engines share, which a scheduler file spreads and
 * overrides: the newest running request is preempted first and
 * recomputed; admission is head-of-line and takes the blocks of the
 * first chunk, with no watermark; chunks are cut at the budget; a
 * reservation counts the KV a request holds; a running request needs only
 * the blocks it takes; nothing is admitted in a step that preempted.
 */
export const COMMON_DECISIONS = {
  victim: "newest",
  preemption: "recompute",
  skipOversized: false,
  chunkInBlocks: false,
  reservesLastToken: false,
  admitsWholePrompt: false,
  watermark: 0,
  countsTouchedBlocks: false,
  admitsAfterPreemption: false,
  former: "continuous",
} as const satisfies Partial<Scheduler>;

/** The blocks admission leaves free on an engine of `kvBlocks` blocks: ⌊watermark × blocks⌋ ({@link Scheduler.watermark}). */
export function watermarkBlocks(s: Scheduler, kvBlocks: number): number {
  return Math.floor(s.watermark * kvBlocks);
}

/**
 * `s` with its admission or batch formation replaced (a serving
 * configuration's overrides); `s` itself when nothing changes.
 *
 * @example
 * ```ts
 * import { withParts } from "./scheduler.ts";
 * import { SCHEDULERS } from "./schedulers.ts";
 * import { greedyAdmission } from "./greedy_admission.ts";
 * import assert from "node:assert/strict";
 *
 * const sglang = SCHEDULERS.sglang;
 * assert.equal(withParts(sglang, sglang.admission, sglang.batching), sglang);
 * assert.equal(withParts(sglang, greedyAdmission, sglang.batching).admission.name, "greedy");
 * ```
 */
export function withParts(s: Scheduler, admission: Admission, batching: BatchFormation): Scheduler {
  // An engine's own loop runs its own parts only: replaced parts run on the engine's step former. An admission
  // that never preempts has set aside every block a request grows into: no running request waits for more.
  if (admission === s.admission && batching === s.batching) return s;
  const touched = s.countsTouchedBlocks && admission.preempts;
  return { ...s, admission, batching, former: "continuous", countsTouchedBlocks: touched };
}
