/**
 * SGLang's scheduler (0.3–0.5).
 *
 * Follows sgl-project/sglang@84022c0e563c9b519fa16bf0eb7f9d750a728531 (0.4.6):
 * - prefill first: a step runs a prefill batch whenever one can be formed
 *   (`get_new_batch_prefill`), else the decodes of every running request
 *   (python/sglang/srt/managers/scheduler.py L1156-L1166); mixed chunks
 *   only with `enable_mixed_chunk` (default False, server_args.py L158);
 * - admission (`PrefillAdder`, python/sglang/srt/managers/schedule_policy.py
 *   L286-L338, L455-L462) reserves the running requests' remaining output
 *   at `new_token_ratio` (initially 0.7, global_config.py L23-L35): the
 *   conservative policy, with the ratio held at its initial value;
 * - when a decode step finds no free block, running requests are
 *   retracted (`retract_decode`, schedule_batch.py L1242-L1282) and
 *   recomputed later.
 *
 * Its own loop (core/engine/sglang_former.ts) follows the 12 derived
 * streams of tests/conformance/sglang/ (0.5.4) on 11: admission that stops
 * after one refusal until a request leaves (`batch_is_full`), a new
 * request's check on its whole prompt and clipped output, the ratio's decay
 * per decode step and its reset after a retraction, the retraction order
 * (fewest generated tokens first, ties by longest prompt) and the
 * retracted requests' place at the back of the waiting queue. Not modelled:
 * the `ignore_eos` admission path of a cache-less engine (stream 12).
 *
 * @module
 */
import { conservativeAdmission } from "../conservative_admission.ts";
import { prefillFirstBatching } from "../prefill_first_batching.ts";
import { COMMON_DECISIONS } from "../scheduler.ts";
import type { Scheduler } from "../scheduler.ts";

/** SGLang's scheduler. */
export const sglangScheduler: Scheduler = {
  name: "sglang",
  follows:
    "sgl-project/sglang@84022c0 (0.4.6):python/sglang/srt/managers/{scheduler,schedule_policy,schedule_batch}.py",
  batching: prefillFirstBatching,
  admission: conservativeAdmission,
  ...COMMON_DECISIONS,
  // Its own loop: PrefillAdder admission, prefill-first steps, retraction (core/engine/sglang_former.ts).
  former: "sglang",
  newTokenRatio: {
    // global_config.py L23-L35: default_init_new_token_ratio 0.7, default_min_new_token_ratio_factor 0.14,
    // default_new_token_ratio_decay_steps 600, retract_decode_steps 20; schedule_policy.py L38-L40: the clip.
    init: 0.7,
    minFactor: 0.14,
    decaySteps: 600,
    retractSteps: 20,
    // 0.5.2 and later (the streams' 0.5.4): retract until the next decode step fits; engine_channel.ts gives
    // earlier builds their 20 steps of room.
    retractRoomSteps: 1,
    clip: 4096,
    // server_args.py L72-L77: max_prefill_tokens 16384.
    maxPrefillTokens: 16384,
  },
};
