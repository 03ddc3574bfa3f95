/**
 * TensorRT-LLM's default capacity scheduler, GUARANTEED_NO_EVICT: a
 * request is admitted only when every block it will ever hold (prompt and
 * output) can be set aside, so no running request is ever preempted.
 *
 * @module
 */
import type { Admission } from "./admission.ts";

/** Admit on the whole request's blocks; never preempt. */
export const noEvictAdmission: Admission = {
  name: "guaranteed_no_evict",
  admitBlocks: (need, lifetime) => Math.max(need, lifetime),
  preempts: false,
};
