/**
 * Lazy decode accounting: an optional layer over the engine's reference
 * path that changes speed only, never a result.
 *
 * The first `cohort` running requests are plain decoders (one token per
 * step, no drafts, their prompt's cache blocks all indexed) that have
 * advanced together at every step since they joined, so a step changes
 * each of them the same way: one more token computed and generated,
 * emitted at the step's end. The layer counts those steps in `lag` instead
 * of touching each: a cohort request's true `computed` and `generated` are
 * its stored ones plus `lag`, and its `lastToken` is `last`. What differs
 * between them waits by lag: the step at which each needs its next KV block
 * (in buckets) and the step at which each finishes (in a heap). A step then costs the
 * requests it changes and the rest of the batch (prompts, new decoders),
 * not the whole batch.
 *
 * A cohort request that has no blocks set aside is not touched at its
 * block boundaries at all: it needs a block every `blockSize` steps, at
 * the lags of one residue modulo `blockSize` (its **phase**), so the layer
 * counts such requests by phase and a step takes as many blocks as its
 * phase counts, at once. Their `blocks` are written back with the rest
 * (the blocks their true computed tokens need). A step whose blocks would
 * run short is left to the per-request path, which preempts exactly (a
 * 512-engine fleet spent 20% of its run touching requests at their block
 * boundaries). Requests behind the cohort are accounted one by one
 * as before, and join it once they decode. Preemption takes requests from
 * the end of the batch as the per-request path does (a cohort request is
 * written back first); the whole cohort is written back
 * ({@link LazyDecode.materialize}) only when the step's budget cannot hold
 * it. The per-request path is the reference: results are the same bit for
 * bit (tests/invariants_test.ts compares them, step by step, on random
 * runs).
 *
 * @module
 */
import type { Scheduler } from "../policy/mod.ts";
import type { KvLedger } from "./kv_ledger.ts";
import { ROOM_FREED, ROOM_LOST } from "./kv_ledger.ts";
import type { Request } from "./request.ts";
import { dropFront, empty } from "./arrays.ts";

/**
 * Steps after an engine falls back to per-request accounting (the step's
 * budget could not hold its lazy decoders, or blocks ran short on an engine
 * that never preempts) before running decoders join the lazy cohort again.
 * Joining costs two bucket entries per request, so rejoining at once would
 * redo that for the whole batch at each fallback. The choice changes speed
 * only, never a result.
 */
export const LAZY_AFTER = 16;

/** What the layer needs of its engine. */
export interface LazyHost {
  /** The batch, in seat order; the cohort is its front. */
  readonly running: Request[];
  /** The engine's KV blocks. */
  readonly ledger: KvLedger;
  /** Tokens per KV block. */
  readonly blockSize: number;
  /** Whether the engine may preempt a running request when blocks run out. */
  readonly preempts: boolean;
  /** Its scheduler (whether a decode needs a free block even when it takes none). */
  readonly scheduler: Pick<Scheduler, "countsTouchedBlocks">;
  /** Steps run so far. */
  readonly steps: number;
  /** Gives running request `r` `need` more blocks, preempting when short (a ROOM_ value). */
  grow(r: Request, need: number): number;
  /** `r` produced its last token at `now`: it leaves. */
  finish(r: Request, now: number): void;
}

/**
 * Entries of the finish heaps so far (of every engine and run in the
 * process: an entry's number is never given twice, so a request object
 * reused for a later request, or on another engine, never matches an entry
 * it left behind).
 */
let entries = 0;

/**
 * The cohort requests by the step whose end produces their last token: a
 * min-heap of (finish lag, seat), each entry with the number it gave its
 * request (`lazyEntry`). A request that leaves the cohort drops its
 * number, and its entry lingers until reached. (A map from lag to a list of
 * requests, with a heap of its lags beside it, cost three cache misses per
 * finishing request across 512 engines: the map's table, the list and the
 * request; the heap's top is one.) An entry's three numbers lie side by
 * side in one array: three arrays side by side were three misses more.
 */
class FinishHeap {
  /** Entry i's lag, seat and number at 3i, 3i + 1, 3i + 2. */
  #keys = new Float64Array(48);
  readonly #reqs: Request[] = [];
  #n = 0;

  /** The least lag listed (Infinity: none). */
  get least(): number {
    return this.#n > 0 ? this.#keys[0] : Infinity;
  }

  /** Lists cohort request `r` as finishing at the end of step `lag`. */
  add(lag: number, r: Request): void {
    const seat = r.seat;
    const entry = ++entries;
    r.lazyEntry = entry;
    if (3 * (this.#n + 1) > this.#keys.length) {
      const grown = new Float64Array(2 * this.#keys.length);
      grown.set(this.#keys);
      this.#keys = grown;
    }
    const q = this.#keys;
    let i = this.#n++;
    this.#reqs.push(r);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pl = q[3 * parent];
      if (pl < lag || (pl === lag && q[3 * parent + 1] < seat)) break;
      this.#move(parent, i);
      i = parent;
    }
    this.#put(i, lag, seat, entry, r);
  }

  /**
   * Takes the entries up to step `k`, in (lag, seat) order, and lists in
   * `into` those of step `k` whose requests still hold them (an earlier
   * step's entry still held would be a finish missed).
   */
  takeUpTo(k: number, into: Request[]): void {
    const q = this.#keys, rq = this.#reqs;
    while (this.#n > 0 && q[0] <= k) {
      const r = rq[0];
      if (r.lazyEntry === q[2]) {
        if (q[0] < k) throw new Error(`engine: request ${r.id} was due to finish at step ${q[0]}, before ${k}`);
        into.push(r);
      }
      const n = --this.#n;
      const lastReq = rq.pop()!;
      if (n === 0) break;
      const lastLag = q[3 * n], lastSeat = q[3 * n + 1], lastEntry = q[3 * n + 2];
      let i = 0;
      for (;;) {
        let c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n) {
          const a = q[3 * c], b = q[3 * c + 3];
          if (b < a || (b === a && q[3 * c + 4] < q[3 * c + 1])) c++;
        }
        const cl = q[3 * c];
        if (lastLag < cl || (lastLag === cl && lastSeat < q[3 * c + 1])) break;
        this.#move(c, i);
        i = c;
      }
      this.#put(i, lastLag, lastSeat, lastEntry, lastReq);
    }
  }

  /** Drops every entry. */
  clear(): void {
    this.#n = 0;
    empty(this.#reqs);
  }

  /** Moves the entry at slot `from` to slot `to`. */
  #move(from: number, to: number): void {
    const q = this.#keys;
    q[3 * to] = q[3 * from];
    q[3 * to + 1] = q[3 * from + 1];
    q[3 * to + 2] = q[3 * from + 2];
    this.#reqs[to] = this.#reqs[from];
  }

  /** Writes an entry into slot `i`. */
  #put(i: number, lag: number, seat: number, entry: number, r: Request): void {
    const q = this.#keys;
    q[3 * i] = lag;
    q[3 * i + 1] = seat;
    q[3 * i + 2] = entry;
    this.#reqs[i] = r;
  }
}

/**
 * The cohort's block steps: lag → the cohort requests that need a new KV
 * block at that step. A request's next block is at most `blockSize` steps
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
  /**
   * Requests due at any step: most cohorts have none (their blocks are
   * counted by phase), and then a step's question is answered without
   * reading the counts (a cache miss at every step across 512 engines).
   */
  #due = 0;

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
    this.#due++;
    if (n < list.length) list[n] = r;
    else list.push(r);
  }

  /** How many requests are due at `lag` (they are `list(lag)[0, count)`). */
  count(lag: number): number {
    return this.#due === 0 ? 0 : this.#counts[lag & this.#mask];
  }

  /** The list holding the requests due at `lag` (only its first {@link count} entries are). */
  list(lag: number): readonly Request[] {
    return this.#lists[lag & this.#mask];
  }

  /** Empties the step `lag` (its list stays readable until something is added to it). */
  drop(lag: number): void {
    const i = lag & this.#mask;
    this.#due -= this.#counts[i];
    this.#counts[i] = 0;
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
    this.#due--;
  }

  /** Empties every step. */
  clear(): void {
    this.#counts.fill(0);
    this.#due = 0;
  }
}

/** The index of the request with seat `seat` in `run[0, end)`, which is in seat order. */
function seatIndex(run: readonly Request[], end: number, seat: number): number {
  // Nearly always the front (the oldest request finishes first): the request itself, touched already, not the five or
  // six a bisection reads, each a cache miss across a fleet.
  if (run[0].seat === seat) return 0;
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

/** The lazy cohort of one engine's batch (see the module doc). */
export class LazyDecode {
  /** Whether this engine accounts decoders lazily at all (no drafts, no prefill role, no multi-step windows). */
  readonly allowed: boolean;
  /** Running requests accounted lazily: `running[0, cohort)`. */
  cohort = 0;
  /** Steps the cohort has advanced (its requests' stored values lag their true ones by this much). */
  lag = 0;
  /** When the cohort last produced tokens (its requests' `lastToken`). */
  last = -1;
  /** Σ stored `computed` of the cohort (its decode context is this + cohort × (lag + 1)). */
  computed = 0;
  /** True when the step in flight serves the cohort. */
  served = false;
  readonly #host: LazyHost;
  readonly #after: number;
  /** Whether each decode needs a free block (vLLM V0's touched-block count). */
  readonly #touched: boolean;
  /** No request joins the cohort before this many steps (see {@link LAZY_AFTER}). */
  #joinAfter = 0;
  /** Lag → the cohort requests that need a new KV block at that step. */
  readonly #blockDue: BlockSteps;
  /** The cohort requests by the step whose end produces their last token. */
  readonly #finishes = new FinishHeap();
  /** {@link #finishes}' least lag: a step that ends nobody's request compares this field and reads nothing else. */
  #nextFinish = Infinity;
  /** The requests finishing at the step being applied (reused from step to step). */
  readonly #ending: Request[] = [];
  /** Phase → the cohort requests counted by phase (see the module doc); none where blocks are counted as touched. */
  readonly #phase?: Int32Array;
  /** Tokens per KV block. */
  readonly #bs: number;

  /**
   * @param host the engine
   * @param allowed whether the engine's requests may be accounted lazily
   * @param after steps after a fallback before decoders join again (Infinity: never)
   */
  constructor(host: LazyHost, allowed: boolean, after: number) {
    this.#host = host;
    this.allowed = allowed && after < Infinity;
    this.#after = after;
    this.#touched = host.scheduler.countsTouchedBlocks;
    this.#blockDue = new BlockSteps(this.allowed ? host.blockSize : 0);
    this.#bs = host.blockSize;
    // vLLM V0 asks for a free block at every decode, due or not: its growth stays per request.
    if (this.allowed && !this.#touched) this.#phase = new Int32Array(host.blockSize);
  }

  /**
   * Serves the cohort in the step being formed: one token each, and a
   * block for each at a block boundary. When the blocks run out, the
   * newest running requests are preempted exactly as the per-request path
   * does it: the boundary requests take their blocks in running order, each
   * preempting from the end of the batch (the tail first, then the end of
   * the cohort, written back first) until its block fits.
   *
   * @returns 0 when served, 1 when served after preempting, -1 (changing nothing) when the cohort cannot be
   * served lazily: the budget is short of it, or blocks are short on an engine that never preempts
   */
  serve(budget: number): number {
    if (budget < this.cohort) return -1;
    const host = this.#host;
    const k = this.lag;
    const blockSteps = this.#blockDue;
    const n = blockSteps.count(k);
    const ledger = host.ledger;
    // A listed request with blocks set aside takes its own (free and reserved both drop by one); each other one
    // takes one of the free blocks nobody set aside.
    const listed = blockSteps.list(k);
    let unreserved = 0;
    for (let i = 0; i < n; i++) if (listed[i].reserved === 0) unreserved++;
    const phased = this.#phase === undefined ? 0 : this.#phase[k % this.#bs];
    if (phased > 0) {
      // The phased requests due take `phased` free blocks nobody set aside too: the free ones first, then evicted
      // cached ones, as each request's growth would take them. Short of that, the per-request path preempts
      // (changing nothing here).
      const want = phased + unreserved;
      if (!this.#room(want)) return -1;
      this.#takePhased(phased, want);
    }
    let preempted = false;
    // vLLM V0 lets each decode go on only while a block is free, even one that needs none: the cohort is served
    // lazily when one block is still free after its growth (then each of its decodes saw one), else one by one.
    if (n === 0 && this.#touched && ledger.unreserved < 1) return -1;
    if (n > 0) {
      let growing = listed;
      if (this.#touched && ledger.unreserved - unreserved < 1) return -1;
      const short = unreserved > ledger.unreserved;
      if (short && !host.preempts) return -1;
      // The list stays readable: what is added below goes to later steps (a block lasts at least one).
      blockSteps.drop(k);
      // In running order (only preemption depends on it).
      if (short) growing = growing.slice(0, n).sort((a, b) => a.seat - b.seat);
      for (let i = 0; i < n; i++) {
        const r = growing[i];
        if (r.blocks === 0) break; // preempted for an earlier one, as every one after it
        const grown = host.grow(r, 1);
        if (grown !== ROOM_FREED) preempted = true;
        if (grown === ROOM_LOST) break;
        const next = this.#blockLag(r);
        if (next <= this.#finishLag(r)) blockSteps.add(next, r);
      }
    }
    if (this.cohort === 0) {
      this.lag = 0;
      return 1;
    }
    this.served = true;
    return preempted ? 1 : 0;
  }

  /**
   * Decode fast-forward (the engine's step formation): when the cohort is all that
   * runs and nothing waits, the phased blocks the step being formed takes, as
   * {@link serve} would take them without preempting (evicting unreferenced
   * cached blocks when free ones are short, as it does); -1 when
   * {@link serve} must form it (the budget is short, a listed request takes
   * a block of its own, or free and evictable blocks are short).
   */
  quietBlocks(budget: number, k: number = this.lag): number {
    if (budget < this.cohort || this.#blockDue.count(k) > 0) return -1;
    const ledger = this.#host.ledger;
    if (this.#touched) return ledger.unreserved >= 1 ? 0 : -1;
    const phased = this.#phase![k % this.#bs];
    // Short of free blocks, unreferenced cached ones are evicted for them, as serve does (a prefix-caching engine's
    // pool is full of them once warm: without this, 45% of its steps went to the general path).
    return this.#room(phased) ? phased : -1;
  }

  /**
   * Whether `want` blocks nobody set aside can be had: free ones, then unreferenced cached ones evicted. (The cache
   * is read only when the free blocks fall short: it is one more cache miss per step across a fleet.)
   */
  #room(want: number): boolean {
    const ledger = this.#host.ledger;
    const free = ledger.unreserved;
    return want <= free || want <= free + ledger.cachedEvictable;
  }

  /**
   * The cohort's step in flight (served lazily) produces nobody's last token,
   * and the step after it forms as the quiet one: its phased blocks
   * ({@link quietBlocks} at the next lag, the ledger as the step's end leaves
   * it: no request leaves), or -1.
   */
  quietNext(budget: number): number {
    const k = this.lag;
    return this.served && k < this.#nextFinish ? this.quietBlocks(budget, k + 1) : -1;
  }

  /** Serves the cohort as {@link serve} does when {@link quietBlocks} gave `phased` (≥ 0). */
  serveQuiet(phased: number): void {
    if (phased > 0) this.#takePhased(phased, phased);
    this.served = true;
  }

  /**
   * The phased requests due take `phased` blocks, when the step's growth
   * wants `want` free blocks nobody set aside in all (which free and
   * evictable blocks hold): the free ones first, then unreferenced cached
   * ones evicted for the rest.
   */
  #takePhased(phased: number, want: number): void {
    const ledger = this.#host.ledger;
    if (want > ledger.unreserved) ledger.makeRoom(want + ledger.reserved);
    ledger.pool.allocate(phased);
  }

  /**
   * The last request of the cohort leaves it (to be preempted): its true
   * values are written back and its bucket entries dropped.
   */
  leave(r: Request): void {
    // Its entries: its finish step (left to linger, no longer its own), and its phase or its next block step unless
    // that is the step being formed.
    r.lazyEntry = 0;
    const block = this.#blockLag(r);
    if (r.phased) this.#phase![block % this.#bs]--;
    else if (block > this.lag) this.#blockDue.remove(block, r);
    // A phased request served in the step being formed holds the block of the token it computes there.
    this.#writeBack(r, this.served ? 1 : 0);
    this.cohort--;
  }

  /** The lag of the step at which cohort request `r` needs its next KV block (from its stored values). */
  #blockLag(r: Request): number {
    return r.blocks * this.#host.blockSize - r.computed;
  }

  /** The lag of the step that produces cohort request `r`'s last token (from its stored values). */
  #finishLag(r: Request): number {
    return r.output - r.generated - 1;
  }

  /**
   * Cohort request `r`'s true values, written into it (it is accounted one
   * by one from here): a phased one holds the blocks of its computed tokens
   * and of the `inFlight` ones the step being formed computes.
   */
  #writeBack(r: Request, inFlight = 0): void {
    this.computed -= r.computed;
    r.computed += this.lag;
    r.generated += this.lag;
    r.lastToken = this.last;
    if (r.phased) {
      r.phased = false;
      const blocks = Math.ceil((r.computed + inFlight) / this.#bs);
      if (blocks > r.blocks) r.blocks = blocks;
    }
  }

  /**
   * The cohort's step has ended at `now`: the lag grows, and its requests
   * that produced their last token leave (in running order, as the
   * per-request path releases them: the prefix cache's LRU order).
   *
   * They are found by seat, not by a walk over the cohort: `running` is in
   * seat order (a request is seated at its end, and leaves keep the order).
   * The oldest requests finish first, so those leaving are nearly always at
   * the front (measured over the bundled scenarios and the 100,000-request
   * bench: 0.2 on average, for a cohort of 84), and the requests before the
   * last of them move up over the gaps, which costs a few moves where the
   * walk touched every request of the batch.
   *
   * @returns how many cohort requests remain (at the front of `running`, the others right behind them)
   */
  advance(now: number): number {
    const run = this.#host.running;
    const cohort = this.cohort;
    const k = this.lag;
    this.lag = k + 1;
    this.last = now;
    if (k < this.#nextFinish) return cohort;
    const ending = this.#ending;
    this.#finishes.takeUpTo(k, ending);
    this.#nextFinish = this.#finishes.least;
    const gone = ending.length;
    if (gone === 0) return cohort;
    // In seat order (the heap's, within a step).
    for (let i = 0; i < gone; i++) {
      const r = ending[i];
      r.lazyEntry = 0;
      if (r.phased) this.#phase![this.#blockLag(r) % this.#bs]--;
      this.#writeBack(r); // the lag and the cohort's last token already count this step
      this.#host.finish(r, now);
    }
    // The gaps close from the shorter side, keeping the order: the requests before the last one leaving move
    // back over them and the front slots are dropped, or those after the first one leaving move forward.
    const firstAt = seatIndex(run, cohort, ending[0].seat);
    const lastAt = gone === 1 ? firstAt : seatIndex(run, cohort, ending[gone - 1].seat);
    if (lastAt < run.length - firstAt) {
      let j = gone - 1;
      let w = lastAt;
      for (let i = lastAt; i >= 0; i--) {
        const r = run[i];
        if (j >= 0 && r === ending[j]) j--;
        else run[w--] = r;
      }
      dropFront(run, gone);
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
    empty(ending);
    const left = cohort - gone;
    this.cohort = left;
    if (left === 0) this.lag = 0;
    return left;
  }

  /**
   * After a step ending at `now`: the plain decoders right behind the
   * cohort that produced a token in it join the cohort (when the cohort
   * produced one too, so that they all share their last token's time), once
   * the fallback's wait ({@link LAZY_AFTER}) is over.
   */
  join(now: number): void {
    if (!this.allowed || this.#host.steps < this.#joinAfter) return;
    const run = this.#host.running;
    let p = this.cohort;
    if (p === run.length || (p > 0 && this.last !== now)) return;
    const k = this.lag;
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
      this.computed += r.computed;
      const finish = this.#finishLag(r);
      const block = this.#blockLag(r);
      // Counted by phase when it has no blocks set aside and needs its next one within a block's steps (not
      // when it holds more than its tokens need).
      if (this.#phase !== undefined && r.reserved === 0 && block - k < this.#bs) {
        this.#phase[block % this.#bs]++;
        r.phased = true;
      } else if (block <= finish) this.#blockDue.add(block, r);
      this.#finishes.add(finish, r);
      if (finish < this.#nextFinish) this.#nextFinish = finish;
    }
    if (p > this.cohort) {
      this.cohort = p;
      this.last = now;
    }
  }

  /** Writes the lag back into the cohort's requests, which are accounted one by one from here. */
  materialize(): void {
    const run = this.#host.running;
    for (let i = 0; i < this.cohort; i++) this.#writeBack(run[i]);
    this.#blockDue.clear();
    this.#phase?.fill(0);
    this.#finishes.clear();
    this.#nextFinish = Infinity;
    this.cohort = 0;
    this.lag = 0;
    this.#joinAfter = this.#host.steps + this.#after;
  }
}
