/**
 * One serving engine (a DP rank): a vLLM-v1-style continuous-batching
 * scheduler over a paged KV cache.
 *
 * Each step: running requests first, in order, each taking what it still
 * needs (a prefill chunk or one decode token) from the step's token budget;
 * when a request needs a KV block and none is free, the most recently
 * admitted running request is preempted (its KV dropped, to be recomputed)
 * and put back at the front of the waiting queue. Then, if nothing was
 * preempted, waiting requests are admitted first-come-first-served while the
 * token budget, `max_num_seqs` and free blocks allow.
 *
 * @module
 */
import { emptyBatch } from "../hardware/roofline.ts";
import type { BatchShape } from "../hardware/roofline.ts";
import type { EngineLoad } from "../policy/router.ts";
import { ADMISSION_POLICY, mixedBatching, prefillFirstBatching } from "../policy/mod.ts";
import type { Admission, BatchFormation, Phase, StepBuilder } from "../policy/mod.ts";
import { Deque } from "./deque.ts";
import { BlockPool } from "./kv_cache.ts";
import { blockKeys, PrefixCache } from "./prefix_cache.ts";
import type { Request } from "./request.ts";
import type { EngineSpec, EngineStats } from "./types.ts";

// Which running requests a scheduling pass serves (bit flags).
const PREFILL_ONLY = 1;
const DECODE_ONLY = 2;
const ALL = PREFILL_ONLY | DECODE_ONLY;

/**
 * Steps after an engine falls back to per-request accounting (the step's
 * budget could not hold its lazy decoders, or blocks ran short on an engine
 * that never preempts) before running decoders join the lazy prefix again.
 * Joining costs two bucket entries per request, so rejoining at once would
 * redo that for the whole batch at each fallback. The choice changes speed
 * only, never a result.
 */
export const LAZY_AFTER = 16;

/** What {@link Engine}'s `#room` did: freed cached blocks only, preempted others, or preempted the request itself. */
const ROOM_FREED = 0;
const ROOM_PREEMPTED = 1;
const ROOM_LOST = 2;

/** Adds `r` to the bucket of `key`. */
function due(buckets: Map<number, Request[]>, key: number, r: Request): void {
  const list = buckets.get(key);
  if (list === undefined) buckets.set(key, [r]);
  else list.push(r);
}

/** Removes `r` from the bucket of `key` (where it is). */
function undue(buckets: Map<number, Request[]>, key: number, r: Request): void {
  const list = buckets.get(key);
  if (list === undefined) return;
  const i = list.indexOf(r);
  if (i >= 0) list.splice(i, 1);
  if (list.length === 0) buckets.delete(key);
}

/**
 * The lazy prefix's block steps: lag → the prefix requests that need a new
 * KV block at that step. A request's next block is at most `blockSize` steps
 * ahead, so the live lags span at most `blockSize + 1` values: a ring of
 * lists indexed by lag, reused as the lag moves on, instead of a Map of
 * new arrays (a Map entry and an array for every block boundary of a
 * decoding batch took 4% of a run). A list is cleared by its count, not its
 * length (an array length write is a runtime call).
 */
class BlockSteps {
  readonly #mask: number;
  readonly #lists: Request[][] = [];
  readonly #counts: Int32Array;

  /** @param blockSize the engine's tokens per KV block */
  constructor(blockSize: number) {
    let size = 1;
    while (size <= blockSize + 1) size *= 2;
    this.#mask = size - 1;
    this.#counts = new Int32Array(size);
  }

  /** Adds `r` to the requests due at `lag`. */
  add(lag: number, r: Request): void {
    const i = lag & this.#mask;
    const list = this.#lists[i] ?? (this.#lists[i] = []);
    const n = this.#counts[i]++;
    if (n < list.length) list[n] = r;
    else list.push(r);
  }

  /** How many requests are due at `lag` (they are `list(lag)[0, count)`). */
  count(lag: number): number {
    return this.#counts[lag & this.#mask];
  }

  /** The list holding the requests due at `lag` (only its first {@link count} entries are). */
  list(lag: number): readonly Request[] {
    return this.#lists[lag & this.#mask];
  }

  /** Empties the step `lag` (its list stays readable until something is added to it). */
  drop(lag: number): void {
    this.#counts[lag & this.#mask] = 0;
  }

  /** Removes `r` from the requests due at `lag` (where it is), keeping the order of the others. */
  remove(lag: number, r: Request): void {
    const i = lag & this.#mask;
    const list = this.#lists[i];
    const n = this.#counts[i];
    if (list === undefined) return;
    const at = list.indexOf(r);
    if (at < 0 || at >= n) return;
    list.copyWithin(at, at + 1, n);
    this.#counts[i] = n - 1;
  }

  /** Empties every step. */
  clear(): void {
    this.#counts.fill(0);
  }
}

/** The index of the request with seat `seat` in `run[0, end)`, which is in seat order. */
function seatIndex(run: readonly Request[], end: number, seat: number): number {
  let lo = 0;
  let hi = end - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (run[mid].seat < seat) lo = mid + 1;
    else hi = mid;
  }
  if (run[lo].seat !== seat) throw new Error(`engine: no running request has seat ${seat}`);
  return lo;
}

/** Why a request can never complete on an engine. */
type Unservable = "context" | "kv" | "budget";

function unservable(s: EngineSpec, input: number, output: number): Unservable | undefined {
  if (s.maxModelLen !== undefined && input + output > s.maxModelLen) return "context";
  if (Math.ceil((input + output - 1) / s.blockSize) > s.kvBlocks) return "kv";
  if (!s.chunkedPrefill && input > s.maxTokens) return "budget";
  return undefined;
}

/**
 * Why a request of `input` prompt and `output` generated tokens can never
 * complete on an engine of this spec, with the request's own numbers, or
 * undefined when it can.
 */
export function unservableReason(s: EngineSpec, input: number, output: number): string | undefined {
  switch (unservable(s, input, output)) {
    case "context":
      return `prompt + output (${input + output} tokens) exceeds the model's context length (${s.maxModelLen})`;
    case "kv": {
      const blocks = Math.ceil((input + output - 1) / s.blockSize);
      return `needs ${blocks} KV blocks (${input + output - 1} tokens) but an engine holds ${s.kvBlocks} (${
        s.kvBlocks * s.blockSize
      } tokens)`;
    }
    case "budget":
      return `prompt of ${input} tokens exceeds max_tokens_budget (${s.maxTokens}) with chunked prefill off`;
  }
  return undefined;
}

/**
 * The same as {@link unservableReason} without the request's numbers, so
 * that requests unservable for one reason are counted under one line.
 */
export function unservableCategory(s: EngineSpec, input: number, output: number): string | undefined {
  switch (unservable(s, input, output)) {
    case "context":
      return `prompt + output exceeds the model's context length (${s.maxModelLen} tokens)`;
    case "kv":
      return `prompt + output exceeds the KV cache of an engine (${s.kvBlocks} blocks of ${s.blockSize} = ${
        (s.kvBlocks * s.blockSize).toLocaleString("en-US")
      } tokens)`;
    case "budget":
      return `prompt exceeds max_tokens_budget (${s.maxTokens}) with chunked prefill off`;
  }
  return undefined;
}

/** The state of one engine during a simulation. */
export class Engine implements EngineLoad {
  readonly index: number;
  readonly spec: EngineSpec;
  readonly kv: BlockPool;
  readonly waiting: Deque<Request> = new Deque();
  readonly running: Request[] = [];
  /** True while a step is in flight. */
  busy = false;
  /** When the step in flight started, µs. */
  stepStart = 0;
  /** True while a wake-up event is pending. */
  wakePending = false;
  /**
   * Blocks set aside for running, ready and incoming requests and not yet
   * taken (by policies that set blocks aside): Σ of their `reserved`.
   * Invariant: 0 ≤ reserved ≤ kv.free, so a reserved block is always there
   * to take.
   */
  reserved = 0;
  /** How requests are admitted (core/policy). */
  readonly admission: Admission;
  /** How a step is filled (core/policy). */
  readonly batching: BatchFormation;
  /** What the batching policy may do to the next step (built once: the scheduler's hot path). */
  readonly #step: StepBuilder;
  /** Prefill role: requests whose prompt is done, to hand to a decode engine (drained by the simulator). */
  readonly handoff: Request[] = [];
  /** Decode role: requests whose KV has landed, waiting for a seat in the batch. */
  readonly ready: Deque<Request> = new Deque();
  /** Decode role: requests waiting for KV room before their transfer can start. */
  readonly pendingKv: Deque<Request> = new Deque();
  /** The prefix cache, when prefix caching is on. */
  readonly cache?: PrefixCache;
  cachePromptBlocks = 0;
  cacheHitBlocks = 0;
  cachePromptTokens = 0;
  cacheHitTokens = 0;
  transfers = 0;
  transferBytes = 0;
  transferTime = 0;
  kvWaits = 0;
  kvWaitTime = 0;
  /** Tokens of work assigned and not yet done (the least-loaded router's measure). */
  outstanding = 0;
  /** Requests assigned and not finished. */
  active = 0;
  /** The shape of the step in flight. */
  readonly shape: BatchShape = emptyBatch();
  // Counters for the report.
  steps = 0;
  busyTime = 0;
  preemptions = 0;
  served = 0;
  batchedSeqs = 0;
  peakBatch = 0;
  /** Σ sequences in the batch × step µs (mean batch occupancy = this / time). */
  seqTime = 0;
  /** Σ KV blocks held by requests × step µs (mean KV occupancy = this / time). */
  kvTime = 0;
  /** Σ model FLOPs of the steps (when the cost model counts them). */
  flops = 0;
  /** Σ HBM bytes of the steps (when the cost model counts them). */
  hbmBytes = 0;
  /**
   * Inter-token latencies: gap µs → how many output tokens came after such
   * a gap (one sample per token emission after the first; with MTP, the
   * tokens accepted in one step arrive together, as a streaming client sees
   * them). Integer-µs gaps repeat across a batch, so counts stay small.
   */
  readonly itl = new Map<number, number>();
  #lastStepEnd = -1;
  #finished: Request[] = [];
  /** Steps left in the current multi-step window (0: the next step is scheduled afresh). */
  #windowLeft = 0;
  /**
   * Lazy decode accounting. The first `#prefix` running requests are plain
   * decoders (one token per step, no drafts, their prompt's cache blocks all
   * indexed) that have advanced together at every step since they joined,
   * so a step changes each of them the same way: one more token computed
   * and generated, emitted at the step's end. The engine counts those steps
   * in `#lag` instead of touching each: a prefix request's true `computed`
   * and `generated` are its stored ones plus `#lag`, and its `lastToken` is
   * `#prefixLast`. What differs between them waits in buckets by lag: the
   * step at which each needs its next KV block and the step at which each
   * finishes. A step then costs the requests it changes and the rest of the
   * batch (prompts, new decoders), not the whole batch. Requests behind the
   * prefix are accounted one by one as before, and join it once they
   * decode. Preemption takes requests from the end of the batch as the
   * per-request path does (a prefix request is written back first); the
   * whole prefix is written back ({@link #materialize}) only when the step's
   * budget cannot hold it. The per-request path is the
   * reference: results are the same bit for bit (tests/invariants_test.ts
   * compares them, step by step, on random runs).
   */
  readonly #lazyAllowed: boolean;
  readonly #lazyAfter: number;
  /** Running requests accounted lazily: `running[0, #prefix)`. */
  #prefix = 0;
  /** Steps the prefix has advanced (its requests' stored values lag their true ones by this much). */
  #lag = 0;
  /** When the prefix last produced tokens (its requests' `lastToken`). */
  #prefixLast = -1;
  /** Σ stored `computed` of the prefix (its decode context is this + prefix × (lag + 1)). */
  #lazyComputed = 0;
  /** True when the step in flight serves the prefix. */
  #prefixServed = false;
  /** Seats given so far (see {@link Request.seat}). */
  #seats = 0;
  /** No request joins the prefix before this many steps (see {@link LAZY_AFTER}). */
  #joinAfter = 0;
  /** Lag → the prefix requests that need a new KV block at that step. */
  readonly #blockDue: BlockSteps;
  /** Lag → the prefix requests whose last token that step produces. */
  readonly #finishDue = new Map<number, Request[]>();

  /**
   * @param index position in the simulation's engine list
   * @param spec what the engine is
   * @param lazyAfter steps after a fallback before decoders are accounted lazily again ({@link LAZY_AFTER};
   * Infinity: never, every request accounted at every step)
   */
  constructor(index: number, spec: EngineSpec, lazyAfter = LAZY_AFTER) {
    this.index = index;
    this.spec = spec;
    this.#lazyAfter = lazyAfter;
    this.#lazyAllowed = lazyAfter < Infinity && spec.draftTokens === 0 && spec.role !== "prefill" &&
      (spec.schedulerSteps ?? 1) <= 1;
    this.kv = new BlockPool(spec.kvBlocks);
    this.#blockDue = new BlockSteps(this.#lazyAllowed ? spec.blockSize : 0);
    this.admission = ADMISSION_POLICY[spec.admission];
    this.batching = spec.mixPrefillDecode ? mixedBatching : prefillFirstBatching;
    const only: Record<Phase, number> = { prefill: PREFILL_ONLY, decode: DECODE_ONLY, all: ALL };
    this.#step = {
      maxTokens: spec.maxTokens,
      serveRunning: (budget, phase) => this.#scheduleRunning(budget, only[phase]),
      admitWaiting: (budget) => this.#admit(budget),
      scheduledTokens: () => this.shape.tokens,
    };
    if (spec.prefixCaching) this.cache = new PrefixCache();
  }

  /**
   * Returns a request's blocks: private ones to the pool, cached ones to the
   * prefix cache (unreferenced, in prompt order). The cached blocks of its
   * own content are kept out of the cache's index while it has never been
   * preempted here (no other prompt can hit them); when it is preempted they
   * are indexed as it releases them, so that it finds them again. When it
   * leaves for good (`gone`: finished, or handed off to a decode engine)
   * they can never be hit again and join the LRU as one anonymous run, in
   * the same place.
   */
  #releaseBlocks(r: Request, blocks: number, gone = false): void {
    const cache = this.cache;
    const shared = r.cachedBlocks;
    this.kv.release(blocks - shared);
    r.cachedBlocks = 0;
    if (shared === 0) return;
    const keys = r.cacheKeys;
    if (!cache || !keys) throw new Error(`request ${r.id} holds cached blocks on an engine without a prefix cache`);
    const own = shared < r.firstOwnBlock ? shared : r.firstOwnBlock;
    for (let j = 0; j < own; j++) cache.release(keys[j]);
    if (shared === own) return;
    const unindexed = r.preemptions === 0;
    if (gone) cache.releaseDead(keys, own, shared, unindexed);
    else if (unindexed) cache.indexReleased(keys, own, shared);
    else for (let j = own; j < shared; j++) cache.release(keys[j]);
  }

  /** Gives back what is still set aside for a request leaving this engine (or losing its KV). */
  #unreserve(r: Request): void {
    this.reserved -= r.reserved;
    r.reserved = 0;
  }

  /**
   * Tokens whose KV a request of these lengths ever holds here: a prefill
   * engine computes only the prompt (and samples the first token from it,
   * which needs no KV); otherwise the prompt and every output token but the
   * last.
   */
  #kvTokens(input: number, output: number): number {
    return this.spec.role === "prefill" ? input : input + output - 1;
  }

  /**
   * Prefill role: the prompt's KV has left; its blocks are free. The
   * blocks of its own content leave as a finished request's do (one
   * anonymous run in the LRU, not indexed): only this request could hit
   * them, and it never comes back here (preempted on its decode engine, it
   * is recomputed there).
   */
  releaseHeld(r: Request): void {
    this.#releaseBlocks(r, r.heldBlocks, true);
    r.heldBlocks = 0;
  }

  /** Evicts unreferenced cached blocks until `need` blocks are free (or none is left to evict). */
  #makeRoom(need: number): void {
    if (this.cache && need > this.kv.free) this.kv.release(this.cache.evict(need - this.kv.free));
  }

  /** The text of each reason a request cannot run here, built once (routing asks per request). */
  #whyText = new Map<Unservable, string | undefined>();

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
    this.waiting.push(r);
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
   * Decode role: takes the KV blocks of a prompt about to arrive.
   *
   * @returns false when there is no room yet (the request waits: backpressure)
   */
  reserveIncoming(r: Request): boolean {
    const s = this.spec;
    const blocks = Math.ceil(r.input / s.blockSize);
    // The admission policy sets aside what it does for the rest of the
    // sequence (guaranteed_no_evict: all of it, so the decode engine never
    // preempts; greedy: nothing).
    const full = this.admission.admitBlocks(blocks, Math.ceil(this.#kvTokens(r.input, r.output) / s.blockSize));
    // The engine caches landed prompts' blocks: unreferenced ones are reclaimed, but only for a prompt that fits
    // (as an admission, a transfer that must wait changes nothing).
    if (full > this.freeKvBlocks) return false;
    this.#takeBlocks(r, blocks, full);
    r.blocks = blocks;
    r.decodeEngine = this.index;
    this.outstanding += r.output - 1;
    this.active++;
    return true;
  }

  /** Decode role: the prompt's KV has landed; the request decodes from here. */
  landed(r: Request): void {
    r.computed = r.input;
    this.ready.push(r);
  }

  /**
   * KV blocks a new request could take now (for routers): free blocks not
   * set aside for admitted requests (guaranteed_no_evict), plus unreferenced
   * cached blocks, which admission reclaims.
   */
  get freeKvBlocks(): number {
    return this.kv.free - this.reserved + (this.cache?.evictable ?? 0);
  }

  /** True when there is anything to run. */
  get hasWork(): boolean {
    return this.running.length > 0 || this.waiting.size > 0 || this.ready.size > 0;
  }

  #preempt(victim: Request): void {
    // From its first preemption it may find its own blocks cached again (#releaseBlocks indexes them): it needs
    // their keys, as its first admission computed the others (with that engine's block size).
    if (victim.preemptions === 0 && victim.cacheKeys !== undefined) {
      victim.cacheKeys = blockKeys(victim.prefix, victim.keyBlockSize, victim.input, victim.id);
    }
    this.#releaseBlocks(victim, victim.blocks);
    this.#unreserve(victim);
    this.outstanding += victim.computed;
    victim.blocks = 0;
    victim.computed = 0;
    victim.scheduled = 0;
    victim.preemptions++;
    this.preemptions++;
    this.waiting.pushFront(victim);
  }

  /**
   * An admitted request takes `need` blocks and has `full − need` more set
   * aside, reclaiming unreferenced cached blocks (least recently used
   * first) when the free ones nobody set aside are short. Precondition:
   * `full` fits in {@link freeKvBlocks} once the request holds its hits.
   */
  #takeBlocks(r: Request, need: number, full: number): void {
    if (full > this.kv.free - this.reserved) {
      this.#makeRoom(full + this.reserved);
      if (full > this.kv.free - this.reserved) throw new RangeError(`request ${r.id} admitted without room`);
    }
    this.kv.allocate(need);
    r.reserved = full - need;
    this.reserved += full - need;
  }

  /** `r` joins the end of the batch. */
  #seat(r: Request): void {
    r.seat = this.#seats++;
    this.running.push(r);
  }

  /** Adds `n` tokens of `r` to the step; decodes are counted inline in {@link #scheduleRunning}. */
  #take(r: Request, n: number, b: BatchShape): void {
    r.scheduled = n;
    b.tokens += n;
    b.seqs++;
    const past = r.computed;
    const known = r.input + r.generated;
    if (past + n === known) b.logitsRows++;
    if (r.generated > 0 && past === known - 1) {
      // A decode (1 token, or 1 + drafts with MTP): every position gets logits.
      if (n > 1) b.logitsRows += n - 1;
      b.decodeSeqs++;
      b.decodeTokens += n;
      b.decodeContext += past + n;
    } else {
      b.prefillTokens += n;
      b.prefillPairs += n * (past + (n + 1) / 2);
      b.prefillContext += past + n;
    }
  }

  /**
   * Forms the next step's batch into {@link shape}.
   *
   * @returns false when nothing can run
   */
  schedule(): boolean {
    // Decode role: a pass that preempted and scheduled nothing frees seats
    // that landed requests (which hold their KV) take in a second pass at
    // once, as an engine's loop reschedules right after an empty step;
    // nothing else would wake the engine for them. Each repeat moves a
    // ready request into the batch, so this ends. (Preempted requests wait
    // for the next step or event, as before: retrying them at once would
    // only recompute and preempt them again.)
    for (;;) {
      const ran = this.#pass();
      if (ran >= 0 || this.ready.size === 0) return ran > 0;
    }
  }

  /** One scheduling pass: 1 when it scheduled tokens, 0 when not, -1 when not but it preempted. */
  #pass(): number {
    const s = this.spec;
    const b = this.shape;
    b.tokens =
      b.seqs =
      b.logitsRows =
      b.prefillTokens =
      b.prefillPairs =
      b.prefillContext =
        0;
    b.decodeSeqs = b.decodeTokens = b.decodeContext = 0;
    this.#prefixServed = false;
    // Multi-step scheduling: inside a window the same decode batch runs on
    // without a scheduling pass (no admission, no host step cost); a
    // decode-only step opens a new window.
    if (this.#windowLeft > 0) {
      this.#windowLeft--;
      b.hostShare = 0;
      const preempted = this.#scheduleRunning(s.maxTokens, DECODE_ONLY) < 0;
      if (b.tokens > 0) return 1;
      // Nothing left to decode: the window ends (and the engine schedules afresh unless it just preempted).
      this.#windowLeft = 0;
      if (preempted) return -1;
    }
    // Transferred requests join the batch as seats free up, ahead of new ones
    // (at a scheduling pass: a multi-step window keeps its batch).
    while (this.ready.size > 0 && this.running.length < s.maxSeqs) this.#seat(this.ready.shift()!);
    b.hostShare = 1;
    const left = this.batching.form(this.#step);
    const steps = s.schedulerSteps ?? 1;
    if (steps > 1 && b.prefillTokens === 0 && b.tokens > 0) this.#windowLeft = steps - 1;
    return b.tokens > 0 ? 1 : left < 0 ? -1 : 0;
  }

  /**
   * Gives running requests (those matching `only`) their tokens in order,
   * preempting the newest running request when KV blocks run out.
   *
   * @returns the token budget left, or -1 when something was preempted
   */
  #scheduleRunning(budget: number, only: number): number {
    const bs = this.spec.blockSize;
    const run = this.running;
    const drafts = this.spec.draftTokens;
    let preempted = false;
    let decodes = 0; // plain one-token decodes, counted here and added to the shape at the end
    let decodeContext = 0;
    // The lazy prefix first (it is the front of the running list): all of it or, when that cannot be done
    // lazily, none of it (written back, it is served one by one below).
    let first = 0;
    const prefix = this.#prefix;
    if (prefix > 0) {
      if ((only & DECODE_ONLY) === 0) first = prefix;
      else {
        const served = this.#servePrefix(budget);
        if (served < 0) this.#materialize();
        else {
          // Preemption may have taken the tail and the end of the prefix.
          preempted = served > 0;
          first = this.#prefix;
          budget -= first;
          decodes = first;
          decodeContext = this.#lazyComputed + first * (this.#lag + 1);
        }
      }
    }
    // The hot loop of a run (once per running request per step): no getters.
    for (let i = first; i < run.length; i++) {
      const r = run[i];
      r.scheduled = 0;
      if (budget === 0) continue;
      const left = r.input + r.generated - r.computed;
      const decoding = r.generated > 0 && left === 1;
      if ((decoding ? DECODE_ONLY : PREFILL_ONLY) & ~only) continue;
      // A decode step verifies up to `draftTokens` MTP drafts beside the last token.
      const want = decoding && drafts > 0 ? 1 + Math.min(drafts, r.output - r.generated - 1) : left;
      const n = want < budget ? want : budget;
      // Most steps stay inside the request's last block: no division then.
      if (r.computed + n > r.blocks * bs) {
        const grown = this.#grow(r, Math.ceil((r.computed + n) / bs) - r.blocks);
        if (grown !== ROOM_FREED) preempted = true;
        if (grown === ROOM_LOST) break; // r itself was preempted, and every request after it
      }
      if (n === 1 && decoding) {
        r.scheduled = 1;
        decodes++;
        decodeContext += r.computed + 1;
      } else this.#take(r, n, this.shape);
      budget -= n;
    }
    const b = this.shape;
    b.tokens += decodes;
    b.seqs += decodes;
    b.logitsRows += decodes;
    b.decodeSeqs += decodes;
    b.decodeTokens += decodes;
    b.decodeContext += decodeContext;
    return preempted ? -1 : budget;
  }

  /** Admits waiting requests first-come-first-served while budget, seats and blocks allow. */
  #admit(budget: number): void {
    const s = this.spec;
    const bs = s.blockSize;
    const run = this.running;
    const cache = this.cache;
    while (budget > 0 && run.length < s.maxSeqs) {
      const r = this.waiting.peek();
      if (!r) break;
      // Prefix caching: start from the longest cached prefix (at least the
      // last prompt token is computed, to produce the first output token).
      let hit = 0;
      // Hit blocks no request uses: they count among the evictable blocks until this request takes them.
      let hitFree = 0;
      if (cache && r.computed === 0) {
        if (r.cacheKeys === undefined) {
          // Its own blocks are keyed only once it has been preempted (see #preempt).
          r.cacheKeys = blockKeys(r.prefix, bs, r.input, r.id, r.preemptions > 0);
          r.keyBlockSize = bs;
          const covered = r.prefix ? Math.min(r.input, r.prefix.ids.length * r.prefix.blockTokens) : 0;
          r.firstOwnBlock = Math.floor(covered / bs);
        }
        hit = cache.lookup(r.cacheKeys, Math.floor((r.input - 1) / bs));
        if (hit > 0) hitFree = cache.unreferenced(r.cacheKeys, hit);
      }
      const past = hit * bs;
      const remaining = r.known - past;
      // Chunked prefill off: a (re)computation goes in one step. One longer
      // than the whole budget (only a preempted request's recomputation of
      // prompt + generated tokens can be: prompts are checked up front) runs
      // alone in an otherwise empty step, as SGLang admits the first request
      // of a prefill batch over its budget; waiting for a budget it can
      // never get would stall the engine.
      const alone = !s.chunkedPrefill && remaining > s.maxTokens && this.shape.tokens === 0;
      const n = alone ? remaining : Math.min(remaining, budget);
      const need = Math.ceil((past + n) / bs) - hit;
      // The admission policy decides what is set aside beside the chunk
      // (GUARANTEED_NO_EVICT: every block the request will hold here); hit
      // blocks are cached already: only the rest is new.
      const full = this.admission.admitBlocks(need, Math.ceil(this.#kvTokens(r.input, r.output) / bs) - hit);
      // It fits in the free blocks nobody set aside plus the unreferenced cached blocks but its own hits, as
      // vLLM's allocate_slots counts them. One that does not fit changes nothing (vLLM returns before touching
      // the cache): no block is evicted for it and its hits keep their place in the LRU.
      const fits = (s.chunkedPrefill || n === remaining) && full <= this.freeKvBlocks - hitFree;
      if (!fits) break;
      const keys = r.cacheKeys;
      if (cache && keys) { for (let j = 0; j < hit; j++) cache.acquire(keys[j]); }
      this.#takeBlocks(r, need, full);
      this.waiting.shift();
      r.blocks = hit + need;
      r.cachedBlocks = hit;
      r.computed = past;
      this.outstanding -= past; // cached tokens are never computed: no longer outstanding work
      if (cache && r.cacheKeys) {
        this.cachePromptBlocks += Math.ceil(r.input / bs);
        this.cacheHitBlocks += hit;
        this.cachePromptTokens += r.input;
        this.cacheHitTokens += past;
      }
      this.#seat(r);
      this.#take(r, n, this.shape);
      budget -= n;
    }
  }

  /** Counts the step about to run for `dt` µs (occupancy and utilisation). */
  account(dt: number): void {
    const b = this.shape;
    this.seqTime += b.seqs * dt;
    this.kvTime += (this.kv.used - (this.cache?.evictable ?? 0)) * dt;
    const c = this.spec.cost;
    if (c.stepFlops) this.flops += c.stepFlops(b);
    if (c.stepBytes) this.hbmBytes += c.stepBytes(b);
  }

  /**
   * Applies the step in flight at time `now`: KV lands, tokens are sampled,
   * finished requests leave and free their blocks.
   *
   * @returns the requests that finished (valid until the next call)
   */
  completeStep(now: number): Request[] {
    const done = this.#finished;
    // Writing an array's length costs a runtime call (65 ns in Deno 2.9.6, even when unchanged): only when it changes.
    if (done.length > 0) done.length = 0;
    const run = this.running;
    this.steps++;
    this.busyTime += now - this.stepStart;
    this.batchedSeqs += this.shape.seqs;
    if (this.shape.seqs > this.peakBatch) this.peakBatch = this.shape.seqs;
    let w = 0;
    let processed = 0;
    // Tokens that follow this engine's previous step share its gap: counted once.
    const last = this.#lastStepEnd;
    let sameGap = 0;
    const prefix = this.#prefix;
    if (prefix > 0 && this.#prefixServed) {
      processed = prefix;
      if (this.#prefixLast === last) sameGap = prefix;
      else this.#addItl(now - this.#prefixLast, prefix);
      w = this.#advancePrefix(now);
    } else w = prefix;
    // The prefix's finished requests have left `running` already: the rest follows its remaining prefix.
    for (let i = w; i < run.length; i++) {
      const r = run[i];
      const n = r.scheduled;
      if (n > 0) {
        r.scheduled = 0;
        let advance = n;
        if (n > 1 && r.generated > 0 && r.computed === r.input + r.generated - 1) {
          // MTP: of n − 1 drafts, draft i is accepted with probability a^i
          // (each needs its predecessors). The expected count is credited
          // deterministically; whole accepted drafts join the sequence.
          const a = this.spec.draftAcceptance;
          r.draftCredit += a >= 1 ? n - 1 : (a * (1 - Math.pow(a, n - 1))) / (1 - a);
          const accepted = Math.floor(r.draftCredit);
          r.draftCredit -= accepted;
          r.generated += accepted;
          advance = 1 + accepted;
        }
        r.computed += advance;
        processed += advance;
        // Prefix caching: full prompt blocks just computed join the cache.
        const keys = r.cacheKeys;
        if (keys !== undefined && this.cache) {
          const full = Math.min(keys.length, Math.floor(r.computed / this.spec.blockSize));
          // A request never preempted here cannot find its own content cached (no other prompt
          // has it): its own blocks are held without an index entry (see #releaseBlocks).
          while (r.cachedBlocks < full) {
            if (r.preemptions === 0 && r.cachedBlocks >= r.firstOwnBlock) {
              this.cache.holdOwn(full - r.cachedBlocks);
              r.cachedBlocks = full;
            } else if (this.cache.has(keys[r.cachedBlocks])) break;
            else this.cache.insert(keys[r.cachedBlocks++]);
          }
        }
        if (r.computed === r.input + r.generated) {
          r.generated++;
          if (r.firstToken < 0) r.firstToken = now;
          else if (r.lastToken === last) sameGap++;
          else this.#addItl(now - r.lastToken, 1);
          r.lastToken = now;
          if (this.spec.role === "prefill" && r.generated === 1 && r.output > 1) {
            // Prompt done: the KV stays here until a decode engine has it.
            this.#unreserve(r);
            r.heldBlocks = r.blocks;
            r.blocks = 0;
            r.handoffAt = now;
            this.active--;
            this.served++;
            this.handoff.push(r);
            continue;
          }
          if (r.generated === r.output) {
            this.#finish(r, now);
            continue;
          }
        }
      }
      if (w !== i) run[w] = r;
      w++;
    }
    if (w < run.length) run.length = w;
    if (w === 0) this.#windowLeft = 0; // a multi-step window ends with its batch
    if (sameGap > 0) this.#addItl(now - last, sameGap);
    this.#lastStepEnd = now;
    this.outstanding -= processed;
    this.busy = false;
    if (this.#lazyAllowed && this.steps >= this.#joinAfter) this.#join(now);
    return done;
  }

  /**
   * Serves the lazy prefix in the step being formed: one token each, and a
   * block for each at a block boundary. When the blocks run out, the
   * newest running requests are preempted exactly as the per-request path
   * does it: the boundary requests take their blocks in running order, each
   * preempting from the end of the batch (the tail first, then the end of
   * the prefix, written back first) until its block fits.
   *
   * @returns 0 when served, 1 when served after preempting, -1 (changing nothing) when the prefix cannot be
   * served lazily: the budget is short of it, or blocks are short on an engine that never preempts
   */
  #servePrefix(budget: number): number {
    if (budget < this.#prefix) return -1;
    const k = this.#lag;
    const blockSteps = this.#blockDue;
    const n = blockSteps.count(k);
    let preempted = false;
    if (n > 0) {
      let growing = blockSteps.list(k);
      // A request with blocks set aside takes its own (free and reserved both drop by one); each other
      // one takes one of the free blocks nobody set aside.
      let unreserved = 0;
      for (let i = 0; i < n; i++) if (growing[i].reserved === 0) unreserved++;
      const short = unreserved > this.kv.free - this.reserved;
      if (short && !this.admission.preempts) return -1;
      // The list stays readable: what is added below goes to later steps (a block lasts at least one).
      blockSteps.drop(k);
      // In running order (only preemption depends on it).
      if (short) growing = growing.slice(0, n).sort((a, b) => a.seat - b.seat);
      for (let i = 0; i < n; i++) {
        const r = growing[i];
        if (r.blocks === 0) break; // preempted for an earlier one, as every one after it
        const grown = this.#grow(r, 1);
        if (grown !== ROOM_FREED) preempted = true;
        if (grown === ROOM_LOST) break;
        const next = this.#blockLag(r);
        if (next <= this.#finishLag(r)) blockSteps.add(next, r);
      }
    }
    if (this.#prefix === 0) {
      this.#lag = 0;
      return 1;
    }
    this.#prefixServed = true;
    return preempted ? 1 : 0;
  }

  /**
   * Gives running request `r` `need` more KV blocks: from its own
   * reservation first (0 ≤ reserved ≤ kv.free), then from the free blocks
   * nobody else set aside, making room when they are short ({@link #room}).
   *
   * @returns what making room did ({@link ROOM_LOST}: `r` was preempted and got nothing)
   */
  #grow(r: Request, need: number): number {
    const own = need < r.reserved ? need : r.reserved;
    r.reserved -= own;
    this.reserved -= own;
    let made = ROOM_FREED;
    if (need > this.kv.free - this.reserved) {
      if (!this.admission.preempts) throw new RangeError(`request ${r.id} outgrew the KV blocks set aside for it`);
      made = this.#room(r, need);
      if (made === ROOM_LOST) return made;
    }
    this.kv.allocate(need);
    r.blocks += need;
    return made;
  }

  /**
   * Makes `need` blocks free for running request `r`: unreferenced cached
   * blocks first, then the newest running requests, preempted one at a time
   * (a lazy prefix request written back first), reclaiming each victim's
   * cache blocks before preempting anyone else (vLLM frees them likewise).
   *
   * @returns {@link ROOM_FREED} when no one was preempted, {@link ROOM_PREEMPTED}
   * when others were, {@link ROOM_LOST} when `r` itself was (and every request after it)
   */
  #room(r: Request, need: number): number {
    const kv = this.kv;
    const run = this.running;
    this.#makeRoom(need + this.reserved);
    let made = ROOM_FREED;
    while (need > kv.free - this.reserved) {
      const victim = run.pop()!;
      if (run.length < this.#prefix) this.#leavePrefix(victim);
      this.#preempt(victim);
      if (victim === r) return ROOM_LOST;
      made = ROOM_PREEMPTED;
      this.#makeRoom(need + this.reserved);
    }
    return made;
  }

  /**
   * The last request of the prefix leaves it (to be preempted): its true
   * values are written back and its bucket entries dropped.
   */
  #leavePrefix(r: Request): void {
    // Its entries: its finish step, and its next block step unless that is the step being formed.
    undue(this.#finishDue, this.#finishLag(r), r);
    const block = this.#blockLag(r);
    if (block > this.#lag) this.#blockDue.remove(block, r);
    this.#writeBack(r);
    this.#prefix--;
  }

  /** The lag of the step at which prefix request `r` needs its next KV block (from its stored values). */
  #blockLag(r: Request): number {
    return r.blocks * this.spec.blockSize - r.computed;
  }

  /** The lag of the step that produces prefix request `r`'s last token (from its stored values). */
  #finishLag(r: Request): number {
    return r.output - r.generated - 1;
  }

  /** Prefix request `r`'s true values, written into it (it is accounted one by one from here). */
  #writeBack(r: Request): void {
    this.#lazyComputed -= r.computed;
    r.computed += this.#lag;
    r.generated += this.#lag;
    r.lastToken = this.#prefixLast;
  }

  /**
   * The prefix's step has ended at `now`: the lag grows, and its requests
   * that produced their last token leave (in running order, as the
   * per-request path releases them: the prefix cache's LRU order).
   *
   * They are found by seat, not by a walk over the prefix: `running` is in
   * seat order (a request is seated at its end, and leaves keep the order).
   * The oldest requests finish first, so those leaving are nearly always at
   * the front (measured over the bundled scenarios and the 100,000-request
   * bench: 0.2 on average, for a prefix of 84), and the requests before the
   * last of them move up over the gaps, which costs a few moves where the
   * walk touched every request of the batch.
   *
   * @returns how many prefix requests remain (at the front of `running`, the others right behind them)
   */
  #advancePrefix(now: number): number {
    const run = this.running;
    const prefix = this.#prefix;
    const k = this.#lag;
    this.#lag = k + 1;
    this.#prefixLast = now;
    const ending = this.#finishDue.get(k);
    if (ending === undefined) return prefix;
    this.#finishDue.delete(k);
    const gone = ending.length;
    if (gone > 1) ending.sort((a, b) => a.seat - b.seat);
    for (const r of ending) {
      this.#writeBack(r); // the lag and the prefix's last token already count this step
      this.#finish(r, now);
    }
    // The gaps close from the shorter side, keeping the order: the requests before the last one leaving move
    // back over them and the front slots are dropped, or those after the first one leaving move forward.
    const firstAt = seatIndex(run, prefix, ending[0].seat);
    const lastAt = gone === 1 ? firstAt : seatIndex(run, prefix, ending[gone - 1].seat);
    if (lastAt < run.length - firstAt) {
      let j = gone - 1;
      let w = lastAt;
      for (let i = lastAt; i >= 0; i--) {
        const r = run[i];
        if (j >= 0 && r === ending[j]) j--;
        else run[w--] = r;
      }
      if (gone === 1) run.shift();
      else run.splice(0, gone);
    } else {
      let j = 0;
      let w = firstAt;
      for (let i = firstAt; i < run.length; i++) {
        const r = run[i];
        if (j < gone && r === ending[j]) j++;
        else run[w++] = r;
      }
      run.length = w;
    }
    const left = prefix - gone;
    this.#prefix = left;
    if (left === 0) this.#lag = 0;
    return left;
  }

  /**
   * After a step ending at `now`: the plain decoders right behind the
   * prefix that produced a token in it join the prefix (when the prefix
   * produced one too, so that they all share their last token's time).
   */
  #join(now: number): void {
    const run = this.running;
    let p = this.#prefix;
    if (p === run.length || (p > 0 && this.#prefixLast !== now)) return;
    const k = this.#lag;
    for (; p < run.length; p++) {
      const r = run[p];
      const keys = r.cacheKeys;
      if (
        !(r.lastToken === now && r.generated > 0 && r.computed === r.input + r.generated - 1 &&
          (keys === undefined || r.cachedBlocks >= keys.length))
      ) break;
      // Stored so that stored + lag is the true value.
      r.computed -= k;
      r.generated -= k;
      this.#lazyComputed += r.computed;
      const finish = this.#finishLag(r);
      const block = this.#blockLag(r);
      if (block <= finish) this.#blockDue.add(block, r);
      due(this.#finishDue, finish, r);
    }
    if (p > this.#prefix) {
      this.#prefix = p;
      this.#prefixLast = now;
    }
  }

  /** Writes the lag back into the prefix's requests and accounts them one by one from here. */
  #materialize(): void {
    const run = this.running;
    for (let i = 0; i < this.#prefix; i++) this.#writeBack(run[i]);
    this.#blockDue.clear();
    this.#finishDue.clear();
    this.#prefix = 0;
    this.#lag = 0;
    this.#joinAfter = this.steps + this.#lazyAfter;
  }

  /** `r` produced its last token at `now`: it leaves, its blocks freed (listed for {@link completeStep}'s caller). */
  #finish(r: Request, now: number): void {
    r.finish = now;
    this.#unreserve(r);
    this.#releaseBlocks(r, r.blocks, true);
    r.blocks = 0;
    this.active--;
    this.served++;
    this.#finished.push(r);
  }

  #addItl(gap: number, n: number): void {
    this.itl.set(gap, (this.itl.get(gap) ?? 0) + n);
  }

  /** This engine's counters. */
  stats(): EngineStats {
    return {
      label: this.spec.label,
      group: this.spec.group,
      kvBlocks: this.spec.kvBlocks,
      steps: this.steps,
      busy: this.busyTime,
      peakKvBlocks: this.kv.peak,
      preemptions: this.preemptions,
      served: this.served,
      batchedSeqs: this.batchedSeqs,
      peakBatch: this.peakBatch,
      role: this.spec.role,
      instance: this.spec.instance,
      transfers: this.transfers,
      transferBytes: this.transferBytes,
      transferTime: this.transferTime,
      kvWaits: this.kvWaits,
      kvWaitTime: this.kvWaitTime,
      cachePromptBlocks: this.cachePromptBlocks,
      cacheHitBlocks: this.cacheHitBlocks,
      cachePromptTokens: this.cachePromptTokens,
      cacheHitTokens: this.cacheHitTokens,
      cacheReferenced: this.cache?.referenced ?? 0,
      maxSeqs: this.spec.maxSeqs,
      seqTime: this.seqTime,
      kvTime: this.kvTime,
      flops: this.flops,
      hbmBytes: this.hbmBytes,
      peakFlops: this.spec.cost.peakFlops ?? 0,
      peakBandwidth: this.spec.cost.peakBandwidth ?? 0,
      itl: this.itl,
    };
  }
}
