/**
 * vLLM V1's step (and TensorRT-LLM's in-flight batching): every running
 * request takes its next token or prefill chunk, then waiting requests are
 * admitted into what is left of the budget; prefill chunks and decodes
 * share the step.
 *
 * @module
 */
import type { BatchFormation } from "./batching.ts";

/** Decodes and prefill chunks in one step. */
export const mixedBatching: BatchFormation = {
  name: "mixed",
  form(step) {
    const left = step.serveRunning(step.maxTokens, "all");
    if (left >= 0) step.admitWaiting(left);
    return left;
  },
};
