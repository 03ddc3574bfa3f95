/**
 * Requests an engine can never complete, and why: longer than the model's
 * context, more KV than the whole cache, or a prompt over the token budget
 * with chunked prefill off. Checked when a request is routed, so that it
 * is reported instead of waiting forever.
 *
 * @module
 */
import type { EngineSpec } from "./types.ts";

/** Why a request can never complete on an engine. */
export type Unservable = "context" | "kv" | "budget";

/** Why a request of `input` prompt and `output` generated tokens can never complete here, or undefined. */
export function unservable(s: EngineSpec, input: number, output: number): Unservable | undefined {
  if (s.maxModelLen !== undefined && input + output > s.maxModelLen) return "context";
  if (Math.ceil((input + output - 1) / s.blockSize) > s.kvBlocks) return "kv";
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
      const blocks = Math.ceil((input + output - 1) / s.blockSize);
      return `needs ${blocks} KV blocks (${input + output - 1} tokens) but an engine holds ${s.kvBlocks} (${
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
