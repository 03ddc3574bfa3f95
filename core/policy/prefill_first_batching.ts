/**
 * SGLang's default step (and vLLM V0's, MindIE's): a step carries prefill
 * chunks only, running ones first, then new admissions; when no prefill can
 * run, it carries the decodes of every running request.
 *
 * @module
 */
import type { BatchFormation } from "./batching.ts";

/** Prefill-only steps whenever a prefill can run, else decode-only. */
export const prefillFirstBatching: BatchFormation = {
  name: "prefill_first",
  form(step) {
    const left = step.serveRunning(step.maxTokens, "prefill");
    if (left >= 0) step.admitWaiting(left);
    if (step.scheduledTokens() > 0) return left;
    const decodes = step.serveRunning(step.maxTokens, "decode");
    return left < 0 ? -1 : decodes;
  },
};
