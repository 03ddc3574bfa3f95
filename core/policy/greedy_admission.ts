/**
 * vLLM's admission: a request is admitted when the blocks of its next chunk
 * are free; nothing is set aside for later, and when blocks run out the
 * newest running request is preempted (its KV dropped and recomputed).
 *
 * @module
 */
import type { Admission } from "./admission.ts";

/** Admit on the next chunk's blocks; preempt when they run out. */
export const greedyAdmission: Admission = {
  name: "greedy",
  admitBlocks: (need) => need,
  preempts: true,
};
