/**
 * LMDeploy TurboMind's own step loop, for engines whose scheduler is
 * LMDeploy's (core/policy/schedulers/lmdeploy.ts). It follows
 * InternLM/lmdeploy@f36aa71 (0.10.2; the same from 0.6.0 to 0.11.0)
 * src/turbomind/models/llama/LlamaBatch.cc and SequenceManager.cc as the
 * derived streams of tests/conformance/lmdeploy/ state them rule by rule
 * (tests/conformance/README.md, "lmdeploy"):
 *
 * - **Slots.** The batch holds up to `max_batch_size` sequences, running or
 *   not; queued requests take free slots first come first served and keep
 *   theirs until they finish. There is no other waiting queue.
 * - **Priority.** Every step schedules the whole batch in arrival order:
 *   an older prefill chunk goes before a newer decode.
 * - **Budget** (`AdjustMaxInputCount`). pending = Σ (context − computed) −
 *   n over the n sequences; its share ceil(pending / `max_prefill_iters`)
 *   enters a window of the last `max_prefill_iters` shares, all raised to
 *   the newest; the step's tokens are min(max(window front + n,
 *   `max_prefill_token_num`), `max_prefill_token_num` + `max_batch_size`),
 *   with `max_prefill_iters` = ceil(session_len / `max_prefill_token_num`).
 * - **Pass** (`Materialize`). In order, while tokens are left, a sequence
 *   asks for the blocks of its context + 1 token: from the free ones, then
 *   those this pass's victims gave up, then by preempting the newest
 *   sequences below it (never above) until their blocks cover what it
 *   lacks; those and every sequence after them sit the step out. One that
 *   still lacks blocks sits out keeping its own (the newest stalls rather
 *   than preempting itself), and the pass goes on: no head-of-line
 *   blocking. A sequence that runs takes min(context − computed, tokens
 *   left).
 * - **Eviction.** Victims lose exactly the blocks taken, the newest
 *   victim's last blocks first, and keep the rest: each recomputes only
 *   the tokens its lost blocks held. They keep their slot and priority.
 *
 * @module
 */
import { SCHEDULERS } from "../policy/mod.ts";
import type { EngineSpec } from "./types.ts";
import type { EngineState } from "./engine_state.ts";
import type { Request } from "./request.ts";
import { empty } from "./arrays.ts";
import type { StepFormer } from "./step_former.ts";

/**
 * Whether an engine of this spec runs TurboMind's own loop: its scheduler
 * is LMDeploy's with its own admission and mixed chunked steps, without
 * prefix caching, on an aggregated engine without MTP drafts or
 * multi-step windows.
 */
export function runsLmdeployLoop(s: EngineSpec): boolean {
  const sched = SCHEDULERS[s.scheduler ?? "generic"];
  return sched.former === "lmdeploy" && s.admission === sched.admission.name && s.mixPrefillDecode &&
    s.chunkedPrefill && !s.prefixCaching && s.role === "both" && s.draftTokens === 0 && (s.schedulerSteps ?? 1) <= 1;
}

/** TurboMind's loop over one engine (see the module doc). */
export class LmdeployFormer {
  readonly #e: EngineState;
  readonly #former: StepFormer;
  /** max_prefill_iters: steps a pending prefill is spread over. */
  readonly #iters: number;
  /** max_forward_token_num: the most tokens of one step. */
  readonly #maxForward: number;
  /** The last `#iters` shares of the pending prefill (GenerationState's min_input_count), oldest first. */
  readonly #window: number[];
  /** The step's victims (reused from step to step). */
  readonly #victims: Request[] = [];
  /** The step's running sequences (reused). */
  readonly #active: Request[] = [];

  /**
   * @param engine the engine
   * @param former its step former (for the step's batch shape)
   */
  constructor(engine: EngineState, former: StepFormer) {
    this.#e = engine;
    this.#former = former;
    const s = engine.spec;
    // session_len defaults to the model's context (lmdeploy/turbomind/turbomind.py L251-L256).
    this.#iters = Math.max(1, Math.ceil((s.maxModelLen ?? s.maxTokens) / s.maxTokens));
    this.#maxForward = s.maxTokens + s.maxSeqs;
    this.#window = new Array(this.#iters).fill(0);
  }

  /** The step's token budget over the batch (`AdjustMaxInputCount`). */
  #budget(run: readonly Request[]): number {
    const n = run.length;
    let pending = -n;
    for (const r of run) pending += r.input + r.generated - r.computed;
    const share = Math.ceil(pending / this.#iters);
    const w = this.#window;
    w.shift();
    w.push(share);
    for (let i = 0; i < w.length; i++) if (w[i] < share) w[i] = share;
    return Math.min(Math.max(w[0] + n, this.#e.spec.maxTokens), this.#maxForward);
  }

  /**
   * Forms the next step into the engine's batch shape.
   *
   * @returns 1 when tokens were scheduled, 0 when nothing can run
   */
  form(): number {
    const e = this.#e;
    const s = e.spec;
    const bs = s.blockSize;
    const run = e.running;
    // Queued requests take the free slots (arrival order: the batch stays sorted by arrival).
    while (e.waiting.size > 0 && run.length < s.maxSeqs) e.seat(e.waiting.shift()!);
    const n = run.length;
    if (n === 0) return 0;
    let remaining = this.#budget(run);
    let free = e.ledger.available;
    let surplus = 0; // blocks this pass's victims gave up beyond what their takers needed
    let evicted = 0;
    let last = n;
    const victims = this.#victims;
    const active = this.#active;
    for (let i = 0; i < last && remaining > 0; i++) {
      const r = run[i];
      const known = r.input + r.generated;
      const need = Math.max(0, Math.ceil((known + 1) / bs) - r.blocks);
      let count = need;
      const alloc = Math.min(free, count);
      count -= alloc;
      let evict = Math.min(surplus, count);
      count -= evict;
      let taken = 0;
      let gave = 0;
      let newLast = last;
      for (let v = last - 1; count > 0 && v > i; v--) {
        taken++;
        gave += run[v].blocks;
        if (count <= gave) {
          evict += count;
          count = 0;
          newLast = v;
        }
      }
      if (count > 0) continue; // it sits the step out, keeping its blocks
      free -= alloc;
      // Every block taken comes out of victims: those given up here, less all this sequence took of them.
      surplus += gave - evict;
      for (let v = last - 1; v >= last - taken; v--) victims.push(run[v]);
      evicted += evict;
      last = newLast;
      // It runs: its tokens join the step now, its blocks once the victims have given theirs up.
      active.push(r);
      const tokens = Math.min(known - r.computed, remaining);
      this.#former.take(r, tokens, e.shape);
      remaining -= tokens;
    }
    // Victims lose the blocks taken, the newest first, and keep the prefix the rest hold.
    for (const v of victims) {
      if (v.blocks === 0) continue;
      v.preemptions++;
      e.preemptions++;
      const take = Math.min(v.blocks, evicted);
      evicted -= take;
      v.blocks -= take;
      e.ledger.pool.release(take);
      const kept = Math.min(v.computed, v.blocks * bs);
      e.outstanding += v.computed - kept;
      v.computed = kept;
    }
    empty(victims);
    for (const r of active) {
      // The blocks of its context + 1 token (a running sequence is never a victim: its count is as in the pass).
      const need = Math.max(0, Math.ceil((r.input + r.generated + 1) / bs) - r.blocks);
      e.ledger.pool.allocate(need);
      r.blocks += need;
    }
    const ran = active.length;
    empty(active);
    return ran > 0 ? 1 : 0;
  }
}
