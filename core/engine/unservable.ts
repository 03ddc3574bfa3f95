/**
 * Requests an engine can never complete, and why: longer than the model's
 * context, more KV than the whole cache, or a prompt over the token budget
 * with chunked prefill off. Checked when a request is routed, so that it
 * is reported instead of waiting forever.
 *
 * @module
 */
import { ADMISSION_POLICY, SCHEDULERS, watermarkBlocks } from "../policy/mod.ts";
import type { EngineSpec } from "./types.ts";
import { runsSglangLoop } from "./sglang_former.ts";
import { runsMindieLoop } from "./mindie_former.ts";
import { runsLmdeployLoop } from "./lmdeploy_former.ts";

/**
 * Whether admission on an engine of this spec sets aside a request's whole
 * lifetime counting its last output token too (TensorRT-LLM's
 * GUARANTEED_NO_EVICT: prompt + max_new_tokens), one more than its KV holds.
 */
export function reservesLastToken(s: EngineSpec): boolean {
  return SCHEDULERS[s.scheduler ?? "generic"].reservesLastToken && !ADMISSION_POLICY[s.admission].preempts;
}

/**
 * How an engine of a spec counts a request's KV need, worked out once per
 * spec: routing asks every engine of a pool about every request.
 */
interface KvRule {
  /** The loop that runs it: its own admission arithmetic (see {@link lifetimeBlocks}). */
  readonly loop: "sglang" | "mindie" | "lmdeploy" | "steps";
  /** Whether a lifetime reservation counts the last output token too ({@link reservesLastToken}). */
  readonly lastToken: boolean;
  /** Blocks admission leaves free (vLLM V0's watermark). */
  readonly watermark: number;
  /** Whether a decode needs a free block beside those it holds (vLLM V0, where requests may be preempted). */
  readonly touched: boolean;
}

const RULES = new WeakMap<EngineSpec, KvRule>();

function ruleOf(s: EngineSpec): KvRule {
  let rule = RULES.get(s);
  if (rule === undefined) {
    const sched = SCHEDULERS[s.scheduler ?? "generic"];
    rule = {
      loop: runsSglangLoop(s) ? "sglang" : runsMindieLoop(s) ? "mindie" : runsLmdeployLoop(s) ? "lmdeploy" : "steps",
      lastToken: reservesLastToken(s),
      watermark: watermarkBlocks(sched, s.kvBlocks),
      touched: sched.countsTouchedBlocks && ADMISSION_POLICY[s.admission].preempts,
    };
    RULES.set(s, rule);
  }
  return rule;
}

/**
 * Tokens of KV a request must be able to hold here: its prompt and every
 * output token but the last, or all of them where admission sets aside a
 * request's whole lifetime counting its last token: such a request is
 * never admitted otherwise.
 */
function lifetimeTokens(rule: KvRule, input: number, output: number): number {
  if (rule.loop === "sglang") {
    // SGLang admits a request only when its prompt and clipped output are fewer than the free tokens (`>=` refuses).
    return input + Math.min(output, SCHEDULERS.sglang.newTokenRatio!.clip) + 1;
  }
  return input + output - (rule.lastToken ? 0 : 1);
}

/**
 * KV blocks a request must find here to complete. Mostly its lifetime's
 * tokens in blocks; under vLLM V0's block manager also: the watermark
 * beside a readmission (a request preempted late recomputes its prompt and
 * all but its last output token, and V0 never readmits one that leaves
 * fewer than the watermark free: `AllocStatus.NEVER`), and a free block
 * beside those it holds at its last decode (`can_append_slots` counts the
 * touched blocks, plus those its drafts reach), and one beside a
 * recomputation of several chunks (its partly filled last block); under
 * MindIE's loop, a
 * block to spare beside a readmission; under TurboMind's, the blocks of
 * one token more than its last step holds. Asking for these up front
 * reports a request V0 would drop only if it were preempted; the engine
 * would otherwise wait for blocks it can never have.
 */
function lifetimeBlocks(s: EngineSpec, rule: KvRule, input: number, output: number): number {
  const bs = s.blockSize;
  const blocks = Math.ceil(lifetimeTokens(rule, input, output) / bs);
  switch (rule.loop) {
    case "sglang":
      return blocks;
    case "mindie":
      // MindIE readmits a preempted request only with a block to spare (fcfs_policy.cpp L173-L177).
      return blocks + 1;
    case "lmdeploy":
      // TurboMind asks for the blocks of the context + 1 token, its last step included (CountRequiredBlocks).
      return Math.ceil((input + output) / bs);
  }
  // The watermark stays free beside any admission (what it sets aside included); the touched block matters only
  // where running requests may be preempted for it.
  const readmit = blocks + rule.watermark;
  if (!rule.touched) return readmit;
  const lastDecode = output > 1 ? Math.ceil((input + output - 2) / bs) + 1 + Math.ceil(s.draftTokens / bs) : 0;
  // A (re)computation's chunk after the first touches its partly filled last block: V0 wants a free block beside
  // those of the tokens it recomputes (step_former.ts), up to its prompt and every output token but the last. One of
  // more than one chunk that holds every block would preempt itself at each step, for ever.
  const recompute = output > 1 ? input + output - 1 : input;
  const laterChunk = s.chunkedPrefill && recompute > s.maxTokens ? Math.ceil(recompute / bs) + 1 : 0;
  return Math.max(readmit, lastDecode, laterChunk);
}

/** Why a request can never complete on an engine. */
export type Unservable = "context" | "kv" | "budget";

/** Why a request of `input` prompt and `output` generated tokens can never complete here, or undefined. */
export function unservable(s: EngineSpec, input: number, output: number): Unservable | undefined {
  if (s.maxModelLen !== undefined && input + output > s.maxModelLen) return "context";
  if (lifetimeBlocks(s, ruleOf(s), input, output) > s.kvBlocks) return "kv";
  if (!s.chunkedPrefill && input > s.maxTokens) return "budget";
  return undefined;
}

/**
 * Why a request of `input` prompt and `output` generated tokens can never
 * complete on an engine of this spec, with the request's own numbers, or
 * undefined when it can.
 */
export function unservableReason(s: EngineSpec, input: number, output: number): string | undefined {
  switch (unservable(s, input, output)) {
    case "context":
      return `prompt + output (${input + output} tokens) exceeds the model's context length (${s.maxModelLen})`;
    case "kv": {
      const tokens = lifetimeTokens(ruleOf(s), input, output);
      const blocks = lifetimeBlocks(s, ruleOf(s), input, output);
      const extra = blocks > Math.ceil(tokens / s.blockSize)
        ? " with the free blocks the engine's block manager keeps"
        : "";
      return `needs ${blocks} KV blocks (${tokens} tokens${extra}) but an engine holds ${s.kvBlocks} (${
        s.kvBlocks * s.blockSize
      } tokens)`;
    }
    case "budget":
      return `prompt of ${input} tokens exceeds max_tokens_budget (${s.maxTokens}) with chunked prefill off`;
  }
  return undefined;
}

/**
 * The same as {@link unservableReason} without the request's numbers, so
 * that requests unservable for one reason are counted under one line.
 */
export function unservableCategory(s: EngineSpec, input: number, output: number): string | undefined {
  switch (unservable(s, input, output)) {
    case "context":
      return `prompt + output exceeds the model's context length (${s.maxModelLen} tokens)`;
    case "kv":
      return `prompt + output exceeds the KV cache of an engine (${s.kvBlocks} blocks of ${s.blockSize} = ${
        (s.kvBlocks * s.blockSize).toLocaleString("en-US")
      } tokens)`;
    case "budget":
      return `prompt exceeds max_tokens_budget (${s.maxTokens}) with chunked prefill off`;
  }
  return undefined;
}

/**
 * What {@link unservable} reads of a spec, as one string: engines with the
 * same key answer every request alike (the simulator asks one of them).
 * Every field unservable() and the rules it looks up read is here; a new
 * one must be added.
 */
export function unservableKey(s: EngineSpec): string {
  return JSON.stringify([
    s.role,
    s.kvBlocks,
    s.blockSize,
    s.maxTokens,
    s.maxModelLen ?? null,
    s.scheduler ?? null,
    s.admission,
    s.chunkedPrefill,
    s.mixPrefillDecode,
    s.prefixCaching,
    s.draftTokens,
    s.schedulerSteps ?? null,
  ]);
}
