/**
 * SGLang's admission: a request is admitted when its prompt and an
 * estimate of its output fit, the estimate being a share of the output
 * still to come (`new_token_ratio`, whose default starting value is 0.7:
 * SGLang's `SGLANG_INIT_NEW_TOKEN_RATIO`); when the estimate proves short
 * and blocks run out, the newest running request is retracted (preempted
 * and recomputed). SGLang lowers the ratio while nothing is retracted and
 * raises it after a retraction; the fixed starting value stands for it here.
 *
 * @module
 */
import type { Admission } from "./admission.ts";

/** Share of the blocks still to come that admission sets aside (SGLang's initial new-token ratio). */
export const NEW_TOKEN_RATIO = 0.7;

/** Admit on the chunk plus a share of the rest; retract when the estimate proves short. */
export const conservativeAdmission: Admission = {
  name: "conservative",
  admitBlocks: (need, lifetime) => need + Math.ceil(NEW_TOKEN_RATIO * Math.max(0, lifetime - need)),
  preempts: true,
};
