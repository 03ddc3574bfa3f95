/**
 * One serving engine (a DP rank): its queues, its batch, its KV ledger and
 * the life of a step (formed, run, applied).
 *
 * Each step is formed by the engine's batch formation (core/policy) over
 * its step former (step_former.ts): running requests first, in order, each
 * taking what it still needs (a prefill chunk or one decode token) from the
 * step's token budget; when a request needs a KV block and none is free,
 * the most recently admitted running request is preempted (its KV dropped,
 * to be recomputed) and put back at the front of the waiting queue. Then,
 * if nothing was preempted, waiting requests are admitted first-come-first-
 * served while the token budget, `max_num_seqs` and free blocks allow. The
 * KV blocks are counted by the ledger (kv_ledger.ts); plain decoders are
 * accounted lazily (lazy_decode.ts), which changes speed only.
 *
 * @module
 */
import { emptyBatch } from "../hardware/roofline.ts";
import type { BatchShape } from "../hardware/roofline.ts";
import type { EngineLoad, RouteRequest } from "../policy/router.ts";
import { ADMISSION_POLICY, mixedBatching, prefillFirstBatching, SCHEDULERS, withParts } from "../policy/mod.ts";
import type { Admission, BatchFormation, Scheduler } from "../policy/mod.ts";
import { empty } from "./arrays.ts";
import { Deque } from "./deque.ts";
import { EngineCounters } from "./engine_counters.ts";
import type { GapCounts } from "./gap_counts.ts";
import { KvLedger, ROOM_FREED, ROOM_LOST, ROOM_PREEMPTED } from "./kv_ledger.ts";
import { LAZY_AFTER, LazyDecode } from "./lazy_decode.ts";
import { dropKv } from "./preemption.ts";
import { blockKeys, routeKeys } from "./prefix_cache.ts";
import type { Request } from "./request.ts";
import { addDecodes, StepFormer } from "./step_former.ts";
import { runsSglangLoop, SglangFormer } from "./sglang_former.ts";
import { MindieFormer, runsMindieLoop } from "./mindie_former.ts";
import { LmdeployFormer, runsLmdeployLoop } from "./lmdeploy_former.ts";
import { accountStep, applyStep, engineStats } from "./step_accounting.ts";
import type { EngineSpec, EngineStats } from "./types.ts";
import type { EngineState } from "./engine_state.ts";
import { reservesLastToken, unservable, unservableCategory, unservableKey } from "./unservable.ts";
import type { Unservable } from "./unservable.ts";

export { LAZY_AFTER } from "./lazy_decode.ts";
export { unservableCategory, unservableReason } from "./unservable.ts";

/** The state of one engine during a simulation. */
export class Engine extends EngineCounters implements EngineLoad, EngineState {
  readonly index: number;
  readonly spec: EngineSpec;
  /** Its KV blocks: used, reserved and cached-evictable, and the prefix cache. */
  readonly ledger: KvLedger;
  readonly waiting: Deque<Request> = new Deque();
  readonly running: Request[] = [];
  /** True while a step is in flight. */
  busy = false;
  /** When the step in flight started, µs. */
  stepStart = 0;
  /** True while a wake-up event is pending. */
  wakePending = false;
  /** Its scheduler (core/policy/schedulers/), with the configuration's overrides. */
  readonly scheduler: Scheduler;
  /** How requests are admitted: the scheduler's. */
  readonly admission: Admission;
  /** How a step is filled: the scheduler's. */
  readonly batching: BatchFormation;
  /** What the batching policy drives to fill the next step. */
  readonly former: StepFormer;
  /** SGLang's own loop, when its scheduler is SGLang's (else the batching policy drives the step former). */
  readonly sglang?: SglangFormer;
  /** MindIE's own loop, when its scheduler is MindIE's. */
  readonly mindie?: MindieFormer;
  /** TurboMind's own loop, when its scheduler is LMDeploy's. */
  readonly lmdeploy?: LmdeployFormer;
  /** Lazy decode accounting over the front of `running`. */
  readonly lazy: LazyDecode;
  /** Prefill role: requests whose prompt is done, to hand to a decode engine (drained by the simulator). */
  readonly handoff: Request[] = [];
  /** Decode role: requests whose KV has landed, waiting for a seat in the batch. */
  readonly ready: Deque<Request> = new Deque();
  /** Decode role: requests waiting for KV room before their transfer can start. */
  readonly pendingKv: Deque<Request> = new Deque();
  /** Tokens of work assigned and not yet done (the least-loaded router's measure). */
  outstanding = 0;
  /**
   * Seconds of host-tier loads (KV offload) the next step waits for: the
   * blocks its admissions load over the host link, before its compute (no
   * overlap assumed; LMCache loads layer by layer, which hides part of it).
   */
  hostLoad = 0;
  /** Requests assigned and not finished. */
  active = 0;
  /** When a router last chose this engine: the run's count of choices then (0: never). */
  routed = 0;
  /** The shape of the step in flight. */
  readonly shape: BatchShape = emptyBatch();
  /** When this engine's previous step ended, µs (-1: none yet). */
  lastStepEnd = -1;
  /**
   * The requests the step being applied finished (reused from step to step;
   * the run's engines share one: only one step is applied at a time, and its
   * caller reads the list at once).
   */
  readonly finished: Request[];
  /** Steps left in the current multi-step window (0: the next step is scheduled afresh). */
  windowLeft = 0;
  /** Whether a lifetime reservation counts the last output token too (unservable.ts's rule). */
  readonly #lastToken: boolean;
  /** Seats given so far (see {@link Request.seat}). */
  #seats = 0;
  /**
   * The step's preempted requests, held out of the waiting queue until its
   * admissions are done (a scheduler that admits after preempting: vLLM V0).
   */
  readonly #victims?: Request[];

  /**
   * @param index position in the simulation's engine list
   * @param spec what the engine is
   * @param lazyAfter steps after a fallback before decoders are accounted lazily again ({@link LAZY_AFTER};
   * Infinity: never, every request accounted at every step)
   * @param itl where it counts its inter-token gaps (the run's, shared by its engines; a fresh count when not given)
   * @param finished its list of the requests a step finished (the run's, shared by its engines; its own when not
   * given): a list per engine was a cache miss at every step across 512 engines
   */
  constructor(index: number, spec: EngineSpec, lazyAfter = LAZY_AFTER, itl?: GapCounts, finished: Request[] = []) {
    super(itl);
    this.finished = finished;
    this.index = index;
    this.spec = spec;
    this.ledger = new KvLedger(spec.kvBlocks, spec.prefixCaching, spec.hostKvBlocks ?? 0);
    this.scheduler = withParts(
      SCHEDULERS[spec.scheduler ?? "generic"],
      ADMISSION_POLICY[spec.admission],
      spec.mixPrefillDecode ? mixedBatching : prefillFirstBatching,
    );
    this.admission = this.scheduler.admission;
    this.batching = this.scheduler.batching;
    this.#lastToken = reservesLastToken(spec);
    if (this.scheduler.admitsAfterPreemption) this.#victims = [];
    this.former = new StepFormer(this);
    // SGLang's own loop on an aggregated engine without drafts or multi-step windows; elsewhere the step former.
    const own = runsSglangLoop(spec);
    if (own) {
      this.sglang = new SglangFormer(this, this.former, { ...this.scheduler.newTokenRatio!, ...spec.sglangTuning });
    }
    if (runsMindieLoop(spec)) {
      this.mindie = new MindieFormer(this, this.former, { ...this.scheduler.mindieLoop!, ...spec.mindieTuning });
    }
    if (runsLmdeployLoop(spec)) this.lmdeploy = new LmdeployFormer(this, this.former);
    // Not under SGLang's loop: its running batch and the engine's differ in order, which the cohort assumes alike;
    // nor under MindIE's, which reorders its running queue at every decode round, or TurboMind's, whose batch holds
    // sequences that do not run.
    const lazy = !own && !this.mindie && !this.lmdeploy && spec.draftTokens === 0 && spec.role !== "prefill" &&
      (spec.schedulerSteps ?? 1) <= 1;
    this.lazy = new LazyDecode(this, lazy, lazyAfter);
  }

  /** Tokens per KV block. */
  get blockSize(): number {
    return this.spec.blockSize;
  }

  /** Whether a running request may be preempted when blocks run out. */
  get preempts(): boolean {
    return this.admission.preempts;
  }

  /**
   * Tokens whose KV a request of these lengths ever holds here: a prefill
   * engine computes only the prompt (and samples the first token from it,
   * which needs no KV); otherwise the prompt and every output token but the
   * last.
   */
  kvTokens(input: number, output: number): number {
    // A lifetime reservation that counts the last token too (TensorRT-LLM's GUARANTEED_NO_EVICT) counts one more.
    return this.spec.role === "prefill" ? input : input + output - (this.#lastToken ? 0 : 1);
  }

  /** The text of each reason a request cannot run here, built once (routing asks per request). */
  #whyText = new Map<Unservable, string | undefined>();

  /** What decides which requests this engine can serve ({@link unservableKey}): engines alike answer alike. */
  get unservableKey(): string {
    return this.#unservableKey ??= unservableKey(this.spec);
  }
  #unservableKey: string | undefined;

  /** Whether a request of these lengths can ever complete here, or why not. */
  whyUnservable(input: number, output: number): string | undefined {
    const kind = unservable(this.spec, input, output);
    if (kind === undefined) return undefined;
    let text = this.#whyText.get(kind);
    if (text === undefined) this.#whyText.set(kind, text = unservableCategory(this.spec, input, output));
    return text;
  }

  /** Routers weigh outstanding work by this (seconds per token). */
  get weight(): number {
    return this.spec.tokenTime;
  }

  /** Queues a routed request (a prefill engine takes only its prompt's work). */
  enqueue(r: Request): void {
    this.assign(r);
    this.receive(r);
  }

  /** Counts a request routed here (the routers' measures) before it reaches the queue ({@link receive}). */
  assign(r: Request): void {
    r.engine = this.index;
    this.outstanding += this.spec.role === "prefill" ? r.input : r.work;
    this.active++;
  }

  /** An assigned request reaches the engine's queue (after the per-request latency). */
  receive(r: Request): void {
    this.waiting.push(r);
  }

  /**
   * KV blocks a new request could take now (for routers): free blocks not
   * set aside for admitted requests (guaranteed_no_evict), plus unreferenced
   * cached blocks, which admission reclaims.
   */
  get freeKvBlocks(): number {
    return this.ledger.available;
  }

  /** Requests routed here and not running yet (on their way, or waiting): the queue a router's queue scorer reads. */
  get queued(): number {
    // MindIE's loop keeps finished requests in its batch until its next round: never below 0.
    const q = this.active - this.running.length;
    return q > 0 ? q : 0;
  }

  /** Share of the KV blocks requests hold (cached blocks nobody uses count as free, as vLLM's usage gauge has it). */
  get kvUsage(): number {
    const total = this.ledger.pool.capacity;
    return total > 0 ? this.ledger.used / total : 0;
  }

  /**
   * Share of `r`'s full prompt blocks this engine's prefix cache holds now
   * (a router's prefix scorer; 0 without a cache or without content ids).
   */
  prefixHit(r: RouteRequest): number {
    const cache = this.ledger.cache;
    const bs = this.spec.blockSize;
    const blocks = Math.floor(r.input / bs);
    if (!cache || !r.prefix || blocks === 0) return 0;
    return cache.lookup(routeKeys(r, bs), blocks) / blocks;
  }

  /** True when there is anything to run. */
  get hasWork(): boolean {
    return this.running.length > 0 || this.waiting.size > 0 || this.ready.size > 0;
  }

  /** `r` joins the end of the batch. */
  seat(r: Request): void {
    r.seat = this.#seats++;
    this.running.push(r);
  }

  /**
   * Forms the next step's batch into {@link shape} at time `now` (µs; only
   * MindIE's loop reads it, for its queue delay).
   *
   * @returns false when nothing can run
   */
  schedule(now = 0): boolean {
    // A pass that preempted and scheduled nothing freed blocks and seats: the
    // engine passes again at once, as its loop schedules right after an empty
    // step (landed requests take the seats, a victim is readmitted). Nothing
    // else would wake it: a decode engine whose only request preempted itself
    // idled for ever with the request waiting (property test, seed 8). Each
    // pass that preempts leaves one running request fewer, so this ends.
    for (;;) {
      const ran = this.#formOnce(now);
      if (ran >= 0 || (this.ready.size === 0 && this.waiting.size === 0)) return ran > 0;
    }
  }

  /** Forms the step once: 1 when it scheduled tokens, 0 when not, -1 when not but it preempted. */
  #formOnce(now: number): number {
    const ran = this.#form(now);
    const victims = this.#victims;
    if (victims === undefined || victims.length === 0) return ran;
    // The step's admissions are done: its victims wait again, in preemption order, so that the last one
    // preempted is the first to wait (vLLM V0's extendleft).
    for (const v of victims) this.waiting.pushFront(v);
    empty(victims);
    return ran > 0 ? 1 : -1;
  }

  /**
   * Decode fast-forward across a step's end: when the step ending at `now`
   * served the lazy cohort alone and ends nobody's request, and the next
   * one forms as the quiet step (nothing waits; {@link LazyDecode.quietNext}),
   * ends the step and forms the next one, as {@link completeStep} and
   * {@link schedule} would, without their general passes; the caller starts
   * it. False, changing nothing, otherwise.
   */
  quietStep(now: number): boolean {
    const lazy = this.lazy;
    const cohort = lazy.cohort;
    if (cohort === 0 || cohort !== this.running.length || this.waiting.size !== 0 || this.ready.size !== 0) {
      return false;
    }
    const phased = lazy.quietNext(this.spec.maxTokens);
    if (phased < 0) return false;
    // The end (applyStep's, for the cohort alone): its gap is the cohort's, whether or not it is the engine's last.
    const b = this.shape;
    this.steps++;
    this.busyTime += now - this.stepStart;
    this.batchedSeqs += b.seqs;
    if (b.seqs > this.peakBatch) this.peakBatch = b.seqs;
    this.itl.add(now - lazy.last, cohort);
    lazy.advance(now);
    this.lastStepEnd = now;
    this.outstanding -= cohort;
    // The next step (#form's quiet step); nobody joins the cohort, which is the whole batch.
    this.#clearShape();
    this.#formQuiet(phased);
    return true;
  }

  /** Empties the step being formed. */
  #clearShape(): void {
    const b = this.shape;
    b.tokens =
      b.seqs =
      b.logitsRows =
      b.prefillTokens =
      b.prefillPairs =
      b.prefillContext =
        0;
    b.decodeSeqs = b.decodeTokens = b.decodeContext = 0;
    this.lazy.served = false;
  }

  /** Forms the quiet step: the lazy cohort alone, one token each, taking `phased` blocks ({@link LazyDecode.quietBlocks}). */
  #formQuiet(phased: number): void {
    const lazy = this.lazy;
    lazy.serveQuiet(phased);
    addDecodes(this.shape, lazy.cohort, lazy.computed + lazy.cohort * (lazy.lag + 1));
    this.shape.hostShare = 1;
  }

  /** {@link #formOnce} before the step's victims wait again. */
  #form(now: number): number {
    const s = this.spec;
    const b = this.shape;
    const lazy = this.lazy;
    this.#clearShape();
    // Decode fast-forward: only the steady decoders run and nothing waits (lazy accounting rules out the engines'
    // own loops and multi-step windows). Their step is what the batching policy's passes would form, the same shape
    // and blocks, unless its blocks need the general path.
    if (
      lazy.allowed && lazy.cohort > 0 && lazy.cohort === this.running.length && this.waiting.size === 0 &&
      this.ready.size === 0
    ) {
      const phased = lazy.quietBlocks(s.maxTokens);
      if (phased >= 0) {
        this.#formQuiet(phased);
        return 1;
      }
    }
    // Multi-step scheduling: inside a window the same decode batch runs on
    // without a scheduling pass (no admission, no host step cost); a
    // decode-only step opens a new window.
    if (this.windowLeft > 0) {
      this.windowLeft--;
      b.hostShare = 0;
      const preempted = this.former.serveDecodes(s.maxTokens) < 0;
      if (b.tokens > 0) return 1;
      // Nothing left to decode: the window ends (and the engine schedules afresh unless it just preempted).
      this.windowLeft = 0;
      if (preempted) return -1;
    }
    // Transferred requests join the batch as seats free up, ahead of new ones
    // (at a scheduling pass: a multi-step window keeps its batch).
    while (this.ready.size > 0 && this.running.length < s.maxSeqs) this.seat(this.ready.shift()!);
    b.hostShare = 1;
    if (this.sglang) return this.sglang.form();
    if (this.mindie) return this.mindie.form(now);
    if (this.lmdeploy) return this.lmdeploy.form();
    const left = this.batching.form(this.former);
    const steps = s.schedulerSteps ?? 1;
    if (steps > 1 && b.prefillTokens === 0 && b.tokens > 0) this.windowLeft = steps - 1;
    return b.tokens > 0 ? 1 : left < 0 ? -1 : 0;
  }

  /**
   * Gives running request `r` `need` more KV blocks: from its own
   * reservation first (0 ≤ reserved ≤ free), then from the free blocks
   * nobody else set aside, making room when they are short ({@link #makeRoomFor}).
   * A scheduler that counts touched blocks may ask for `room` > `need`
   * free blocks before `r` continues (none of which it takes beyond `need`).
   *
   * @returns what making room did ({@link ROOM_LOST}: `r` was preempted and got nothing)
   */
  grow(r: Request, need: number, room = need): number {
    let made = ROOM_FREED;
    if (!this.ledger.drawOwn(r, need) || room > this.ledger.unreserved) {
      if (!this.admission.preempts) throw new RangeError(`request ${r.id} outgrew the KV blocks set aside for it`);
      made = this.#makeRoomFor(r, need > room ? need : room);
      if (made === ROOM_LOST) return made;
    }
    this.ledger.pool.allocate(need);
    r.blocks += need;
    return made;
  }

  /**
   * Makes `need` blocks free for running request `r`: unreferenced cached
   * blocks first, then the newest running requests, preempted one at a time
   * (a lazy cohort request written back first), reclaiming each victim's
   * cache blocks before preempting anyone else (vLLM frees them likewise).
   *
   * @returns {@link ROOM_FREED} when no one was preempted, {@link ROOM_PREEMPTED}
   * when others were, {@link ROOM_LOST} when `r` itself was (and every request after it)
   */
  #makeRoomFor(r: Request, need: number): number {
    const ledger = this.ledger;
    const run = this.running;
    ledger.makeRoom(need + ledger.reserved);
    let made = ROOM_FREED;
    while (need > ledger.unreserved) {
      // The scheduler's victim: `newest`, the end of the batch (the only rule so far).
      const victim = run.pop()!;
      if (run.length < this.lazy.cohort) this.lazy.leave(victim);
      dropKv(this, victim);
      // Back to the front of the waiting queue: now, or after the step's admissions (vLLM V0).
      if (this.#victims) this.#victims.push(victim);
      else this.waiting.pushFront(victim);
      if (victim === r) return ROOM_LOST;
      made = ROOM_PREEMPTED;
      ledger.makeRoom(need + ledger.reserved);
    }
    return made;
  }

  /**
   * `r` produced its last token at `now`: it is done (listed for
   * {@link completeStep}'s caller) and leaves, its blocks freed — except
   * under MindIE's loop, which keeps it in the batch with its blocks until
   * its next decode round.
   *
   * @returns whether it left the batch
   */
  finish(r: Request, now: number): boolean {
    r.finish = now;
    this.active--;
    this.served++;
    this.finished.push(r);
    if (this.mindie) {
      this.mindie.lingering++;
      return false;
    }
    this.ledger.unreserve(r);
    this.#cacheReply(r);
    this.ledger.release(r, r.blocks, true);
    r.blocks = 0;
    return true;
  }

  /**
   * A finished request whose content ids go on past its prompt (a session's
   * turn: the next turn's prompt holds this reply) keeps its reply's full
   * blocks cached as vLLM V1 and SGLang keep every full block, so the next
   * turn finds the reply as well as the prompt. Only the next turn can hit
   * them, and it comes after this one finished: keying them now rather than
   * as they fill gives the same hits. They join the cache after its prompt
   * blocks, which must all be this request's (no gap in the chain).
   */
  #cacheReply(r: Request): void {
    const cache = this.ledger.cache;
    const p = r.prefix;
    const prompt = r.cacheKeys;
    if (!cache || !p || !prompt || p.ids.length * p.blockTokens <= r.input || r.cachedBlocks !== prompt.length) return;
    const bs = this.spec.blockSize;
    // Tokens with KV: the prompt and every output token but the last (sampled, never fed back).
    const full = Math.min(r.blocks, Math.floor((r.input + r.generated - 1) / bs));
    if (full <= r.cachedBlocks) return;
    const keys = blockKeys(p, bs, r.input + r.generated, r.id, false);
    while (r.cachedBlocks < full && keys[r.cachedBlocks] >= 0 && !cache.has(keys[r.cachedBlocks])) {
      cache.insert(keys[r.cachedBlocks++]);
    }
    r.cacheKeys = keys;
    if (r.firstOwnBlock < r.cachedBlocks) r.firstOwnBlock = r.cachedBlocks;
  }

  /** Counts the step about to run for `dt` µs (occupancy and utilisation). */
  account(dt: number): void {
    accountStep(this, dt);
  }

  /**
   * Applies the step in flight at time `now`: KV lands, tokens are sampled,
   * finished requests leave and free their blocks.
   *
   * @returns the requests that finished (valid until the next call)
   */
  completeStep(now: number): Request[] {
    return applyStep(this, now);
  }

  /** This engine's counters. */
  stats(): EngineStats {
    return engineStats(this);
  }
}
