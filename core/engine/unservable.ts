/**
 * Requests an engine can never complete, and why: longer than the model's
 * context, more KV than the whole cache, or a prompt over the token budget
 * with chunked prefill off. Checked when a request is routed, so that it
 * is reported instead of waiting forever.
 *
 * @module
 */
import { ADMISSION_POLICY, SCHEDULERS } from "../policy/mod.ts";
import type { EngineSpec } from "./types.ts";
import { runsSglangLoop } from "./sglang_former.ts";

/**
 * Whether admission on an engine of this spec sets aside a request's whole
 * lifetime counting its last output token too (TensorRT-LLM's
 * GUARANTEED_NO_EVICT: prompt + max_new_tokens), one more than its KV holds.
 */
export function reservesLastToken(s: EngineSpec): boolean {
  return SCHEDULERS[s.scheduler ?? "generic"].reservesLastToken && !ADMISSION_POLICY[s.admission].preempts;
}

/**
 * Tokens of KV a request must be able to hold here: its prompt and every
 * output token but the last, or all of them where admission sets aside a
 * request's whole lifetime counting its last token: such a request is
 * never admitted otherwise.
 */
function lifetimeTokens(s: EngineSpec, input: number, output: number): number {
  if (runsSglangLoop(s)) {
    // SGLang admits a request only when its prompt and clipped output are fewer than the free tokens (`>=` refuses).
    return input + Math.min(output, SCHEDULERS.sglang.newTokenRatio!.clip) + 1;
  }
  return input + output - (reservesLastToken(s) ? 0 : 1);
}

/** Why a request can never complete on an engine. */
export type Unservable = "context" | "kv" | "budget";

/** Why a request of `input` prompt and `output` generated tokens can never complete here, or undefined. */
export function unservable(s: EngineSpec, input: number, output: number): Unservable | undefined {
  if (s.maxModelLen !== undefined && input + output > s.maxModelLen) return "context";
  if (Math.ceil(lifetimeTokens(s, input, output) / s.blockSize) > s.kvBlocks) return "kv";
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
      const tokens = lifetimeTokens(s, input, output);
      const blocks = Math.ceil(tokens / s.blockSize);
      return `needs ${blocks} KV blocks (${tokens} tokens) but an engine holds ${s.kvBlocks} (${
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
