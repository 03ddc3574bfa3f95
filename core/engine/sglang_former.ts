/**
 * SGLang's own step loop, for engines whose scheduler is SGLang's
 * (core/policy/schedulers/sglang.ts). It follows
 * sgl-project/sglang (0.4.6–0.5.4) python/sglang/srt/managers/
 * scheduler.py, schedule_policy.py and schedule_batch.py, as the derived
 * streams of tests/conformance/sglang/ state them rule by rule
 * (tests/conformance/README.md):
 *
 * - **Merge.** A step starts by merging the last prefill batch (less the
 *   request still chunking and those finished) into the running batch;
 *   a batch that lost requests is no longer full.
 * - **Prefill first** (`get_new_batch_prefill`). Unless the batch is full,
 *   a prefill batch is formed: the chunking request's next chunk first,
 *   then waiting requests in order (`PrefillAdder`). A new request needs
 *   its whole prompt plus its clipped output free beyond what the running
 *   requests reserve (their remaining output × `new_token_ratio`); the
 *   first that does not fit marks the batch full and ends admission until
 *   a request leaves; prompts beyond `max_prefill_tokens` (the first
 *   excepted) and the chunk budget end it for this step only. A prompt over
 *   the chunk budget is admitted as a chunk.
 * - **Else decode** every running request, one token each. When the free
 *   KV cannot hold one more token for each, requests are retracted — the
 *   fewest generated tokens first, ties to the longest prompt — until it
 *   can (at least one), to the back of the waiting queue; the running
 *   batch keeps that sorted order, and the ratio is reset from what the
 *   remaining requests have generated. A decode step that retracts
 *   nothing lowers the ratio by its decay, down to its floor.
 *
 * KV is counted in tokens as blocks of the engine's block size (SGLang's
 * page size is 1 token; with larger blocks a request's last block is
 * counted whole).
 *
 * @module
 */
import { SCHEDULERS } from "../policy/mod.ts";
import type { NewTokenRatio } from "../policy/mod.ts";
import type { EngineSpec } from "./types.ts";
import type { EngineState } from "./engine_state.ts";
import { dropKv } from "./preemption.ts";
import { ROOM_FREED, ROOM_LOST } from "./kv_ledger.ts";
import type { Request } from "./request.ts";
import type { StepFormer } from "./step_former.ts";

/** How admission ended (SGLang's AddReqResult): go on, no KV room (the batch is full), or out of budget. */
const CONTINUE = 0;
const NO_TOKEN = 1;
const OTHER = 2;

/**
 * Whether an engine of this spec runs SGLang's own loop: its scheduler is
 * SGLang's with its own admission and prefill-first steps (a configuration
 * that replaces either runs the step former), on an aggregated engine
 * without MTP drafts or multi-step windows.
 */
export function runsSglangLoop(s: EngineSpec): boolean {
  const sched = SCHEDULERS[s.scheduler ?? "generic"];
  return sched.former === "sglang" && s.admission === sched.admission.name &&
    s.mixPrefillDecode === (sched.batching.name === "mixed") && s.role === "both" && s.draftTokens === 0 &&
    (s.schedulerSteps ?? 1) <= 1;
}

/** SGLang's loop over one engine (see the module doc). */
export class SglangFormer {
  readonly #e: EngineState;
  readonly #former: StepFormer;
  readonly #c: NewTokenRatio;
  readonly #minRatio: number;
  readonly #decay: number;
  /** The new-token ratio. */
  ratio: number;
  /** SGLang's `batch_is_full`: no admission is tried until a request leaves. */
  batchIsFull = false;
  /** The request whose prompt is being prefilled in chunks, if any. */
  chunked?: Request;
  /** The running batch (SGLang's `running_batch`), in its order. */
  running: Request[] = [];
  /** The last prefill batch, merged into the running batch at the next step. */
  #lastPrefill: Request[] = [];
  /** True after an idle turn that cleared `batchIsFull` with requests waiting: the loop turns again at once. */
  #idleTurn = false;

  /** Whether the last step formed was an idle turn after which the loop turns again at once (and forgets it). */
  takeIdleTurn(): boolean {
    const t = this.#idleTurn;
    this.#idleTurn = false;
    return t;
  }

  /**
   * @param engine the engine
   * @param former its step former (for the step's batch shape)
   * @param constants the scheduler's new-token-ratio constants
   */
  constructor(engine: EngineState, former: StepFormer, constants: NewTokenRatio) {
    this.#e = engine;
    this.#former = former;
    this.#c = constants;
    this.ratio = constants.init;
    this.#minRatio = Math.min(constants.init * constants.minFactor, 1);
    this.#decay = (constants.init - this.#minRatio) / constants.decaySteps;
  }

  /**
   * Free KV tokens for a new request: free blocks and cached blocks no request references, × block size (SGLang's
   * pages are tokens; here a request takes whole blocks of its own, so the unused slots of others' blocks are not
   * free to it).
   */
  #free(): number {
    return this.#e.ledger.available * this.#e.spec.blockSize;
  }

  /**
   * Forms the next step into the engine's batch shape.
   *
   * @returns 1 when tokens were scheduled, 0 when nothing can run, -1 when it only retracted
   */
  form(): number {
    const e = this.#e;
    this.#idleTurn = false;
    // Merge the last prefill batch (finished requests have left the engine's batch).
    if (this.#lastPrefill.length > 0) {
      // (Nor those preempted since: they hold no blocks and wait again.)
      const kept = this.#lastPrefill.filter((r) => r.finish < 0 && r.blocks > 0 && r !== this.chunked);
      if (kept.length < this.#lastPrefill.length) this.batchIsFull = false;
      if (kept.length > 0) {
        if (this.running.length === 0) this.batchIsFull = false;
        this.running.push(...kept);
      }
      this.#lastPrefill = [];
    }
    if (this.#prefill()) return 1;
    // update_running_batch: finished requests leave the running batch only here (a prefill counts them as seated).
    const before = this.running.length;
    this.running = this.running.filter((r) => r.finish < 0);
    if (this.running.length === 0) {
      // Nothing runs: SGLang's loop clears the flag in this idle turn and tries a prefill at its next, at once
      // (the engine is woken again at the same instant: no event would wake it otherwise).
      if (this.batchIsFull && e.waiting.size > 0) this.#idleTurn = true;
      this.batchIsFull = false;
      return 0;
    }
    const code = this.#decode();
    if (this.running.length < before) this.batchIsFull = false;
    return code;
  }

  /** PrefillAdder: a prefill batch, or false when none can be formed. */
  #prefill(): boolean {
    const e = this.#e;
    const s = e.spec;
    const c = this.#c;
    if ((this.batchIsFull || e.waiting.size === 0) && this.chunked === undefined) return false;
    const runningBs = this.running.length;
    if (s.maxSeqs - runningBs <= 0 && this.chunked === undefined) {
      this.batchIsFull = true;
      return false;
    }
    // What the running requests reserve: their remaining output × the ratio. The lazy cohort stores its generated
    // counts `lag` behind.
    let offset = 0;
    const lag = e.lazy.lag;
    // The cohort is the front of the engine's batch, whose order may differ from the running batch's.
    const cohort = e.lazy.cohort > 0 && lag > 0 ? new Set(e.running.slice(0, e.lazy.cohort)) : undefined;
    for (const r of this.running) {
      const generated = cohort?.has(r) ? r.generated + lag : r.generated;
      offset += Math.min(r.output - generated, c.clip) * this.ratio;
    }
    let curOffset = 0;
    let remInput = c.maxPrefillTokens;
    let remChunk = s.chunkedPrefill ? s.maxTokens : Infinity;
    const free = this.#free();
    const remTotal = () => free - offset;
    const budgetState = () =>
      remTotal() <= 0 || free - curOffset <= 0 ? NO_TOKEN : remInput <= 0 || remChunk <= 0 ? OTHER : CONTINUE;
    const batch: [Request, number][] = [];
    // Blocks still free for this batch (SGLang counts tokens; a request here takes whole blocks of its own).
    let blocksLeft = e.ledger.available;
    const blocksOf = (n: number) => Math.ceil(n / s.blockSize);
    // A request's cached prefix blocks that no one references count among the free ones until it takes them.
    const cache = e.ledger.cache;
    const hitFreeOf = (r: Request, hit: number) => (hit > 0 ? cache!.unreferenced(r.cacheKeys!, hit) : 0);
    let chunking: Request | undefined;
    const ch = this.chunked;
    if (ch !== undefined) {
      const left = ch.input + ch.generated - ch.computed;
      // Its next chunk may also fill the unused slots of its own last block.
      const own = ch.blocks * s.blockSize - ch.computed;
      const room = Math.min(remChunk, Math.floor(remTotal() + own));
      let n = Math.min(left, room);
      // Whole blocks: no more than the free ones beyond its own last block hold.
      n = Math.min(n, own + blocksLeft * s.blockSize);
      // No room at all (only a running request's finish makes some): the chunk waits, decodes go on.
      if (n <= 0) return false;
      const grow = Math.ceil((ch.computed + n) / s.blockSize) - ch.blocks;
      blocksLeft -= Math.max(0, grow);
      // Blocks short of the count the free ones promised (cached blocks the chunk's own prefix holds are not
      // evictable) preempt the newest running requests: they leave the running batch, and the chunking request
      // itself, when it is the one preempted, waits again at the queue's head instead of prefilling.
      const made = grow > 0 ? e.grow(ch, grow) : ROOM_FREED;
      if (made !== ROOM_FREED) this.running = this.running.filter((r) => r.blocks > 0);
      if (made !== ROOM_LOST) {
        this.#former.take(ch, n, e.shape);
        batch.push([ch, n]);
        offset += n + (n < left ? 0 : Math.min(ch.output, c.clip));
        curOffset += n;
        remInput -= n;
        remChunk -= n;
        if (n < left) chunking = ch;
      }
    }
    this.chunked = undefined;
    while (e.waiting.size > 0) {
      if (batch.length >= s.maxSeqs - runningBs) this.batchIsFull = true;
      if (this.batchIsFull) break;
      const r = e.waiting.peek()!;
      // The radix cache's match: its cached prefix is not computed again (init_next_round_input).
      const hit = this.#former.cacheHit(r);
      const extend = r.input + r.generated - hit * s.blockSize;
      const total = extend + Math.min(Math.max(r.output - r.generated, 0), c.clip);
      let result: number;
      if (total >= remTotal()) result = NO_TOKEN;
      else if (extend >= remInput && batch.length > 0) result = OTHER;
      else if (blocksOf(Math.min(extend, remChunk)) > blocksLeft - hitFreeOf(r, hit)) result = NO_TOKEN;
      else if (extend <= remChunk) {
        blocksLeft -= blocksOf(extend) + hitFreeOf(r, hit);
        e.waiting.shift();
        this.#seat(r, hit, extend);
        batch.push([r, extend]);
        offset += extend + Math.min(r.output, c.clip);
        curOffset += extend;
        remInput -= extend;
        remChunk -= extend;
        result = budgetState();
      } else if (remChunk <= 0) result = OTHER;
      else {
        blocksLeft -= blocksOf(remChunk) + hitFreeOf(r, hit);
        e.waiting.shift();
        this.#seat(r, hit, remChunk);
        batch.push([r, remChunk]);
        chunking = r;
        offset += remChunk;
        curOffset += remChunk;
        remInput -= remChunk;
        remChunk = 0;
        result = budgetState();
      }
      if (result !== CONTINUE) {
        if (result === NO_TOKEN) this.batchIsFull = true;
        break;
      }
    }
    if (batch.length === 0) return false;
    this.chunked = chunking;
    this.#lastPrefill = batch.map(([r]) => r);
    return true;
  }

  /**
   * Admits `r` at once (its cached prefix acquired before a later admission could evict it) with its first chunk
   * of `n` tokens after its `hit` cached blocks.
   */
  #seat(r: Request, hit: number, n: number): void {
    const bs = this.#e.spec.blockSize;
    const need = Math.ceil((hit * bs + n) / bs) - hit;
    this.#former.admit(r, hit, need, need);
    this.#former.take(r, n, this.#e.shape);
  }

  /** Decodes every running request, retracting first when the KV cannot hold a token each. */
  #decode(): number {
    const e = this.#e;
    const bs = e.spec.blockSize;
    // Blocks the step's tokens need: one for each request at the end of its last block.
    const need = (rs: readonly Request[]) => rs.reduce((n, r) => n + (r.computed + 1 > r.blocks * bs ? 1 : 0), 0);
    let retracted = false;
    // Room a retraction makes: the next decode step (0.5.2 and later), or retractRoomSteps tokens for each request left.
    const steps = this.#c.retractRoomSteps;
    const enough = (rs: readonly Request[]) =>
      steps <= 1 ? e.ledger.available >= need(rs) : e.ledger.available * bs >= rs.length * steps;
    // Each request needs at most one block: only when fewer are free is the need counted (from true values: the
    // lazy cohort is written back first, as a retraction reorders the batch).
    if (e.ledger.available < this.running.length) e.lazy.materialize();
    if (e.ledger.available < this.running.length && e.ledger.available < need(this.running)) {
      // Retract the fewest generated tokens first, ties to the longest prompt, until the rest can decode.
      const order = [...this.running].sort((a, b) => b.generated - a.generated || a.input - b.input);
      do {
        if (order.length === 1) break;
        const victim = order.pop()!;
        const at = e.running.indexOf(victim);
        e.running.splice(at, 1);
        dropKv(e, victim);
        e.waiting.push(victim);
        retracted = true;
      } while (!enough(order));
      this.running = order;
      // The engine's batch follows the running batch's new order (seats renumbered so that it stays in seat order).
      // The chunking request (seated, but not yet in the running batch) keeps its place after them.
      const kept = new Set(order);
      const rest = e.running.filter((r) => !kept.has(r));
      e.running.length = 0;
      for (const r of order) e.seat(r);
      for (const r of rest) e.seat(r);
      let done = 0;
      let maxNew = 0;
      for (const r of order) {
        done += r.generated;
        maxNew += r.output;
      }
      this.ratio = Math.min(1, (done + this.#c.retractSteps * order.length) / (maxNew + 1));
    } else this.ratio = Math.max(this.ratio - this.#decay, this.#minRatio);
    // One token each (the chunking request, prefilling, is not served), the lazy cohort as one. Should a block still
    // be short (the check counts blocks, not SGLang's tokens), the engine preempts the newest: it leaves the batch.
    if (this.#former.serveDecodes(Number.MAX_SAFE_INTEGER, this.chunked) < 0) {
      this.running = this.running.filter((r) => r.blocks > 0);
      // The chunking request too may have been taken (the newest): it is back in the queue, to be admitted anew.
      if (this.chunked !== undefined && this.chunked.blocks === 0) this.chunked = undefined;
    }
    return this.running.length > 0 ? 1 : retracted ? -1 : 0;
  }
}
