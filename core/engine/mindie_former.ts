/**
 * MindIE's own step loop, for engines whose scheduler is MindIE's
 * (core/policy/schedulers/mindie.ts). It follows Ascend/MindIE-LLM@8b4871a
 * src/scheduler/scheduler.cpp and src/scheduler/policy/fcfs_policy.cpp as
 * the derived streams of tests/conformance/mindie/ state them rule by rule
 * (tests/conformance/README.md, "mindie"):
 *
 * - **Rounds.** Each round is a prefill batch or a decode batch, never
 *   both. A round that yields nothing is no step: the loop turns again at
 *   once, deciding anew (an empty prefill is followed by a decode, which
 *   releases finished requests' blocks, and then by a prefill).
 * - **Kind** (`DecidePDPriority`). Decode after an empty round while
 *   requests run; decode while nothing waits, while the head of the waiting
 *   queue has waited less than the queue delay, or while fewer than 5% of
 *   the blocks are free; prefill otherwise.
 * - **Prefill batch.** The first 2 × `maxPrefillBatchSize` waiting requests
 *   are candidates, new ones before recomputations; in that order each is
 *   admitted whole (its prompt, and the tokens it generated before a
 *   preemption) while the token budget, `maxPrefillBatchSize` and the free
 *   blocks allow; the first that does not fit ends the batch (a
 *   recomputation needs a block more than it takes). The candidates left go
 *   back to the front of the queue in arrival order. Running requests are
 *   not counted against `maxBatchSize` here.
 * - **Decode batch.** Finished requests leave and free their blocks first.
 *   The first 2 × `maxBatchSize` running requests are candidates; up to
 *   `maxBatchSize` of them take one token each. One whose last block is
 *   full takes a new block; when none is free the last candidate still
 *   unserved is preempted (or the request itself), by recomputation, to
 *   the back of the waiting queue. The running queue becomes the unserved
 *   candidates, the requests beyond the candidates, then the decoded ones,
 *   each group in arrival order.
 * - **Finish.** A finished request keeps its blocks and its place in the
 *   running queue until the next decode round.
 *
 * @module
 */
import { SCHEDULERS } from "../policy/mod.ts";
import type { MindieLoop } from "../policy/mod.ts";
import type { EngineSpec } from "./types.ts";
import type { EngineState } from "./engine_state.ts";
import { dropKv } from "./preemption.ts";
import type { Request } from "./request.ts";
import { addDecodes } from "./step_former.ts";
import type { StepFormer } from "./step_former.ts";

/**
 * Whether an engine of this spec runs MindIE's own loop: its scheduler is
 * MindIE's with its own admission and prefill-first steps, without chunked
 * prefill (SplitFuse runs on the step former), on an aggregated engine
 * without MTP drafts or multi-step windows.
 */
export function runsMindieLoop(s: EngineSpec): boolean {
  const sched = SCHEDULERS[s.scheduler ?? "generic"];
  return sched.former === "mindie" && s.admission === sched.admission.name && !s.mixPrefillDecode &&
    !s.chunkedPrefill && s.role === "both" && s.draftTokens === 0 && (s.schedulerSteps ?? 1) <= 1;
}

/** By arrival (MindIE's sequence ids grow with arrival). */
const byArrival = (a: Request, b: Request) => a.id - b.id;

/**
 * Whether a prefill candidate needing `need` new blocks and `tokens` tokens
 * is admitted with `free` blocks and `budget` tokens left, `admitted`
 * already in the batch. A recomputation that would take every free block
 * waits (fcfs_policy.cpp L173-L177). One longer than the whole budget (a
 * recomputation of prompt + generated tokens; MindIE's budget,
 * max(maxSeqLen, maxPrefillTokens), holds any) goes alone.
 */
function fits(r: Request, need: number, free: number, tokens: number, budget: number, admitted: number): boolean {
  return need < free || (need === free && r.generated === 0) ? tokens <= budget || admitted === 0 : false;
}

/** Whether `run[from, to)` is in arrival order. */
function inArrivalOrder(run: readonly Request[], from: number, to: number): boolean {
  for (let i = from + 1; i < to; i++) if (run[i].id < run[i - 1].id) return false;
  return true;
}

/** MindIE's loop over one engine (see the module doc). */
export class MindieFormer {
  readonly #e: EngineState;
  readonly #former: StepFormer;
  readonly #c: MindieLoop;
  /** Blocks below which the loop decodes rather than prefills. */
  readonly #reserve: number;
  /** Whether the last round yielded nothing (`lastScheduleEmpty_`). */
  #lastEmpty = false;
  /** When the head of the queue is due for a prefill, µs, if the last step formed waited for it (-1: none). */
  due = -1;
  /** Finished requests still in the running queue, holding their blocks until the next decode round. */
  lingering = 0;

  /**
   * @param engine the engine
   * @param former its step former (admission and the batch shape)
   * @param constants the loop's constants
   */
  constructor(engine: EngineState, former: StepFormer, constants: MindieLoop) {
    this.#e = engine;
    this.#former = former;
    this.#c = constants;
    this.#reserve = Math.floor(constants.decodeReserve * engine.spec.kvBlocks);
  }

  /**
   * Forms the next step at time `now` (µs) into the engine's batch shape:
   * rounds until one yields a batch, or until nothing can change without
   * an event.
   *
   * @returns 1 when tokens were scheduled, 0 when nothing can run, -1 when it only preempted
   */
  form(now: number): number {
    const e = this.#e;
    this.due = -1;
    const preemptions = e.preemptions;
    // At most three rounds change anything: an empty prefill, a decode that frees finished requests' blocks (or
    // preempts), and a prefill that may then fit.
    for (let round = 0; round < 3; round++) {
      const ran = this.#prefillRound(now) ? this.#prefill() : this.#decode();
      if (ran) {
        this.#lastEmpty = false;
        return 1;
      }
      this.#lastEmpty = true;
    }
    return e.preemptions > preemptions ? -1 : 0;
  }

  /** Whether this round is a prefill round (`DecidePDPriority`, without swapping or stage policies). */
  #prefillRound(now: number): boolean {
    const e = this.#e;
    if (this.#lastEmpty && e.running.length > 0) return false;
    const head = e.waiting.peek();
    if (head === undefined) return false;
    // ShouldImmediatePrefill: the head has waited the queue delay (else the engine looks again when it has).
    const due = head.queued + this.#c.queueDelayUs;
    if (now < due) {
      this.due = due;
      return false;
    }
    return e.ledger.available >= this.#reserve;
  }

  /** A prefill batch (`ApplyToWaitingQueue`): whether it admitted anything. */
  #prefill(): boolean {
    const e = this.#e;
    const s = e.spec;
    const cap = this.#c.maxPrefillBatchSize;
    // The candidates: new requests, then recomputations, each in queue order.
    const window = Math.min(2 * cap, e.waiting.size);
    // Most prefill rounds under load admit nothing: the first candidate does not fit. With the window in arrival
    // order such a round changes nothing, which is seen without dequeuing it.
    if (!this.#firstFits(window)) {
      let sorted = true;
      for (let i = 1; i < window && sorted; i++) sorted = e.waiting.at(i)!.id > e.waiting.at(i - 1)!.id;
      if (sorted) return false;
    }
    const fresh: Request[] = [];
    const again: Request[] = [];
    for (let i = 0; i < window; i++) {
      const r = e.waiting.shift()!;
      (r.generated > 0 ? again : fresh).push(r);
    }
    const candidates = fresh.concat(again);
    let budget = s.maxTokens;
    let admitted = 0;
    for (; admitted < candidates.length && admitted < cap; admitted++) {
      const r = candidates[admitted];
      const a = this.#admission(r, budget, admitted);
      if (a === undefined) break;
      this.#former.admit(r, a.hit, a.need, a.need);
      this.#former.take(r, a.tokens, e.shape);
      budget -= a.tokens;
    }
    const left = candidates.slice(admitted).sort(byArrival);
    for (let i = left.length - 1; i >= 0; i--) e.waiting.pushFront(left[i]);
    return admitted > 0;
  }

  /** Whether the first candidate of a prefill round over the first `window` waiting requests would be admitted. */
  #firstFits(window: number): boolean {
    const e = this.#e;
    const q = e.waiting;
    let r = q.peek()!;
    // The first new request of the window, else the first recomputation.
    for (let i = 0; i < window; i++) {
      if (q.at(i)!.generated === 0) {
        r = q.at(i)!;
        break;
      }
    }
    return this.#admission(r, e.spec.maxTokens, 0) !== undefined;
  }

  /**
   * What admitting `r` now takes, with `budget` tokens left and `admitted`
   * prompts already in the batch: its cached prefix blocks, the new blocks
   * of its whole (re)computation and the tokens it computes; undefined when
   * it does not fit ({@link fits}).
   */
  #admission(r: Request, budget: number, admitted: number): { hit: number; need: number; tokens: number } | undefined {
    const e = this.#e;
    const bs = e.spec.blockSize;
    const hit = this.#former.cacheHit(r);
    // Cached blocks no one else holds count as free until `r` takes them.
    const hitFree = hit > 0 ? e.ledger.cache!.unreferenced(r.cacheKeys!, hit) : 0;
    const tokens = r.input + r.generated - hit * bs;
    const need = Math.ceil((r.input + r.generated) / bs) - hit;
    return fits(r, need, e.ledger.available - hitFree, tokens, budget, admitted) ? { hit, need, tokens } : undefined;
  }

  /** A decode batch (`ApplyToRunningQueue`): whether it scheduled anything. */
  #decode(): boolean {
    const e = this.#e;
    const s = e.spec;
    const bs = s.blockSize;
    const run = e.running;
    // Finished requests leave as the running queue is dequeued, freeing their blocks.
    if (this.lingering > 0) {
      let w = 0;
      for (const r of run) {
        if (r.finish >= 0) this.#release(r);
        else run[w++] = r;
      }
      run.length = w;
      this.lingering = 0;
    }
    const n = run.length;
    if (n === 0) return false;
    // Candidates: run[0, limit). Served: run[0, next) (less the last, should it have preempted itself); unserved:
    // run[next, end); preempted from the end: run[end, limit); beyond the candidates: run[limit, n).
    const limit = Math.min(2 * s.maxSeqs, n);
    const cap = Math.min(s.maxSeqs, s.maxTokens);
    let next = 0;
    let end = limit;
    let lost = false;
    let decodeContext = 0;
    while (next < end && next < cap) {
      const r = run[next++];
      if (r.computed + 1 > r.blocks * bs) {
        // CanAppendSlot: a new block only when its last block is full; preempt from the end until one is free.
        while (e.ledger.available < 1) {
          const victim = next < end ? run[--end] : r;
          dropKv(e, victim);
          e.waiting.push(victim);
          if (victim === r) {
            lost = true;
            break;
          }
        }
        if (lost) break;
        // A block is there now (a free one, or a cached one no one holds, which the engine reclaims).
        e.grow(r, 1);
      }
      r.scheduled = 1;
      decodeContext += r.computed + 1;
    }
    const served = lost ? next - 1 : next;
    addDecodes(e.shape, served, decodeContext);
    // The running queue: unserved candidates, the rest, then the served ones, each group in arrival order. Most
    // rounds serve every request of a queue already in that order: nothing moves then.
    if (next < n || lost || !inArrivalOrder(run, 0, n)) {
      const unserved = run.slice(next, end);
      if (!inArrivalOrder(unserved, 0, unserved.length)) unserved.sort(byArrival);
      const beyond = run.slice(limit);
      const decoded = run.slice(0, served);
      if (!inArrivalOrder(decoded, 0, decoded.length)) decoded.sort(byArrival);
      run.length = 0;
      for (const r of unserved) e.seat(r);
      for (const r of beyond) e.seat(r);
      for (const r of decoded) e.seat(r);
    }
    return served > 0;
  }

  /** A finished request leaves the running queue: its blocks come back (`ClearSeq`). */
  #release(r: Request): void {
    const ledger = this.#e.ledger;
    ledger.unreserve(r);
    ledger.release(r, r.blocks, true);
    r.blocks = 0;
  }
}
