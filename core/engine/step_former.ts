/**
 * How one engine's next step is formed: the mechanism a scheduler's batch
 * formation drives (core/policy `StepBuilder`). Running requests take
 * their tokens in order (a prefill chunk, one decode token, or a decode
 * with MTP drafts), growing into new KV blocks and, when blocks run out,
 * preempting the newest running requests; waiting requests are admitted
 * first-come-first-served while the budget, the seats and the blocks
 * allow, starting from their longest cached prefix. Which phases a step
 * serves and in what order is the scheduler's choice; what a request
 * takes and what admission sets aside are the policies'.
 *
 * @module
 */
import type { BatchShape } from "../hardware/roofline.ts";
import { watermarkBlocks } from "../policy/mod.ts";
import type { Phase, StepBuilder } from "../policy/mod.ts";
import type { EngineState } from "./engine_state.ts";
import { ROOM_FREED, ROOM_LOST } from "./kv_ledger.ts";
import { blockKeys } from "./prefix_cache.ts";
import type { Request } from "./request.ts";

// Which running requests a scheduling pass serves (bit flags).
const PREFILL_ONLY = 1;
const DECODE_ONLY = 2;
const ALL = PREFILL_ONLY | DECODE_ONLY;
const ONLY: Record<Phase, number> = { prefill: PREFILL_ONLY, decode: DECODE_ONLY, all: ALL };

/** Adds `n` one-token decodes over `context` tokens of KV in all to a step's shape (counted in a loop, added once). */
export function addDecodes(b: BatchShape, n: number, context: number): void {
  b.tokens += n;
  b.seqs += n;
  b.logitsRows += n;
  b.decodeSeqs += n;
  b.decodeTokens += n;
  b.decodeContext += context;
}

/** Forms one engine's steps (see the module doc). */
export class StepFormer implements StepBuilder {
  readonly maxTokens: number;
  readonly #e: EngineState;
  /** The most prompt tokens of one request per step (Infinity: the budget alone). */
  readonly #chunkCap: number;
  /** Whether a prompt chunk cut short by the budget is rounded down to whole blocks. */
  readonly #inBlocks: boolean;
  /** Blocks admission leaves free (the scheduler's watermark). */
  readonly #watermark: number;
  /** Whether a running request needs every block its new tokens touch free (vLLM V0). */
  readonly #touched: boolean;
  /** Whether admission goes on in a step that preempted (vLLM V0 with chunked prefill). */
  readonly #admitsAfter: boolean;
  /** Whether admission takes the blocks of the whole (re)computation (vLLM V0). */
  readonly #wholePrompt: boolean;

  /** @param engine the engine whose steps this forms */
  constructor(engine: EngineState) {
    this.#e = engine;
    this.maxTokens = engine.spec.maxTokens;
    this.#chunkCap = engine.spec.prefillChunkCap || Infinity;
    // A budget under one block could never take a rounded chunk: chunks are then cut in tokens.
    this.#inBlocks = engine.scheduler.chunkInBlocks && engine.spec.maxTokens >= engine.spec.blockSize;
    this.#watermark = watermarkBlocks(engine.scheduler, engine.spec.kvBlocks);
    this.#touched = engine.scheduler.countsTouchedBlocks;
    this.#admitsAfter = engine.scheduler.admitsAfterPreemption;
    this.#wholePrompt = engine.scheduler.admitsWholePrompt;
  }

  /** Tokens scheduled so far in this step. */
  scheduledTokens(): number {
    return this.#e.shape.tokens;
  }

  /** Gives the running requests of `phase` their tokens (see {@link serve}). */
  serveRunning(budget: number, phase: Phase): number {
    return this.serve(budget, ONLY[phase]);
  }

  /**
   * Serves the decodes only (a multi-step window's steps; SGLang's decode
   * batch, which leaves out `skip`, its chunking request: one whose
   * recomputation has a token left looks like a decoder but is prefilling).
   */
  serveDecodes(budget: number, skip?: Request): number {
    return this.serve(budget, DECODE_ONLY, skip);
  }

  /** Adds `n` tokens of `r` to the step; decodes are counted inline in {@link serve}. */
  take(r: Request, n: number, b: BatchShape): void {
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
   * Gives running requests (those matching `only`, but `skip`) their tokens
   * in order, preempting the newest running request when KV blocks run out.
   *
   * @returns the token budget left, or -1 when something was preempted
   * (and the scheduler admits nothing after a preemption)
   */
  serve(budget: number, only: number, skip?: Request): number {
    const e = this.#e;
    const bs = e.spec.blockSize;
    const run = e.running;
    const drafts = e.spec.draftTokens;
    const lazy = e.lazy;
    let preempted = false;
    let decodes = 0; // plain one-token decodes, counted here and added to the shape at the end
    let decodeContext = 0;
    // The lazy cohort first (it is the front of the running list): all of it or, when that cannot be done
    // lazily, none of it (written back, it is served one by one below).
    let first = 0;
    const cohort = lazy.cohort;
    if (cohort > 0) {
      if ((only & DECODE_ONLY) === 0) first = cohort;
      else {
        const served = lazy.serve(budget);
        if (served < 0) lazy.materialize();
        else {
          // Preemption may have taken the tail and the end of the cohort.
          preempted = served > 0;
          first = lazy.cohort;
          budget -= first;
          decodes = first;
          decodeContext = lazy.computed + first * (lazy.lag + 1);
        }
      }
    }
    // The hot loop of a run (once per running request per step): no getters.
    for (let i = first; i < run.length; i++) {
      const r = run[i];
      r.scheduled = 0;
      if (budget === 0 || r === skip) continue;
      const left = r.input + r.generated - r.computed;
      const decoding = r.generated > 0 && left === 1;
      if ((decoding ? DECODE_ONLY : PREFILL_ONLY) & ~only) continue;
      // A decode step verifies up to `draftTokens` MTP drafts beside the last token.
      const want = decoding
        ? (drafts > 0 ? 1 + Math.min(drafts, r.output - r.generated - 1) : left)
        : left < this.#chunkCap
        ? left
        : this.#chunkCap;
      let n = want < budget ? want : budget;
      if (n < want && !decoding && this.#inBlocks) {
        // A prompt chunk cut short by the budget, in whole blocks (TensorRT-LLM); none: it waits for the next step.
        n -= n % bs;
        if (n === 0) continue;
      }
      // Most steps stay inside the request's last block: no division then.
      if (this.#touched) {
        // vLLM V0 counts every block the new tokens touch as needing a free one (can_append_slots): a decode's
        // tokens from its last block on; a later prompt chunk, whose blocks admission took, none but the
        // prompt's last block when it is partly filled.
        const grow = r.computed + n > r.blocks * bs ? Math.ceil((r.computed + n) / bs) - r.blocks : 0;
        const room = decoding ? 1 + Math.ceil((n - bs + r.computed % bs) / bs) : (left + r.computed) % bs > 0 ? 1 : 0;
        if (grow > 0 || room > e.ledger.unreserved) {
          const grown = e.grow(r, grow, room);
          if (grown !== ROOM_FREED) preempted = true;
          if (grown === ROOM_LOST) break;
        }
      } else if (r.computed + n > r.blocks * bs) {
        const grown = e.grow(r, Math.ceil((r.computed + n) / bs) - r.blocks);
        if (grown !== ROOM_FREED) preempted = true;
        if (grown === ROOM_LOST) break; // r itself was preempted, and every request after it
      }
      if (n === 1 && decoding) {
        r.scheduled = 1;
        decodes++;
        decodeContext += r.computed + 1;
      } else this.take(r, n, e.shape);
      budget -= n;
    }
    addDecodes(e.shape, decodes, decodeContext);
    // vLLM V0 admits prompts in a step that preempted (chunked prefill: its running requests and new prompts share the
    // step). A prefill-only pass that preempted admits none: its own victim, or the prompt admitted in its place, would
    // take the freed blocks back at once, step after step, while the decodes that prefill-first steps hold back never
    // ran (a livelock the property test found: V0 with chunked prefill and mix_prefill_decode false, 4 blocks).
    return preempted && (!this.#admitsAfter || only === PREFILL_ONLY) ? -1 : budget;
  }

  /**
   * Prefix caching: the blocks of `r`'s longest cached prefix, at most all but its last prompt token's (computed
   * to produce the first output token); 0 without a cache or for a request part-computed here.
   */
  cacheHit(r: Request): number {
    const e = this.#e;
    const cache = e.ledger.cache;
    if (!cache || r.computed !== 0) return 0;
    const bs = e.spec.blockSize;
    if (r.cacheKeys === undefined) {
      // Its own blocks are keyed only once it has been preempted (see preemption.ts).
      r.cacheKeys = blockKeys(r.prefix, bs, r.input, r.id, r.preemptions > 0);
      r.keyBlockSize = bs;
      const covered = r.prefix ? Math.min(r.input, r.prefix.ids.length * r.prefix.blockTokens) : 0;
      r.firstOwnBlock = Math.floor(covered / bs);
    }
    return cache.lookup(r.cacheKeys, Math.floor((r.input - 1) / bs));
  }

  /**
   * Seats `r` (out of the waiting queue already) holding its `hit` cached blocks and `need` new ones, with
   * `full − need` more set aside; its cached tokens count as computed. The first `loaded` of its new blocks come from
   * the host tier (KV offload): they join the device cache as it loads them, before the step that computes the rest.
   */
  admit(r: Request, hit: number, need: number, full: number, loaded = 0): void {
    const e = this.#e;
    const ledger = e.ledger;
    const cache = ledger.cache;
    const bs = e.spec.blockSize;
    const keys = r.cacheKeys;
    if (cache && keys) { for (let j = 0; j < hit; j++) cache.acquire(keys[j]); }
    // The loaded blocks join the device cache (leaving the host tier) before room is made below: making room may
    // offload other blocks into the tier, and a full tier would drop its oldest, which could be these.
    for (let j = hit; j < hit + loaded; j++) {
      if (!cache!.host!.has(keys![j])) {
        throw new RangeError(`request ${r.id}: block ${j} loaded from the host tier is not there`);
      }
      cache!.insert(keys![j]);
    }
    ledger.take(r, need, full);
    if (loaded > 0) {
      e.hostLoad += loaded * (e.spec.hostBlockLoadSeconds ?? 0);
      ledger.hostHitTokens += loaded * bs;
    }
    const past = (hit + loaded) * bs;
    r.blocks = hit + need;
    r.cachedBlocks = hit + loaded;
    r.computed = past;
    e.outstanding -= past; // cached and loaded tokens are never computed: no longer outstanding work
    if (cache && keys) {
      ledger.promptBlocks += Math.ceil(r.input / bs);
      ledger.hitBlocks += hit;
      ledger.promptTokens += r.input;
      ledger.hitTokens += hit * bs;
    }
    e.seat(r);
  }

  /** Admits waiting requests first-come-first-served while budget, seats and blocks allow. */
  admitWaiting(budget: number): void {
    const e = this.#e;
    const s = e.spec;
    const bs = s.blockSize;
    const run = e.running;
    const ledger = e.ledger;
    const cache = ledger.cache;
    // Passed over (chunked prefill off, too long for the budget left), to go back to the queue's head in order.
    let skipped: Request[] | undefined;
    while (budget > 0 && run.length < s.maxSeqs) {
      const r = e.waiting.peek();
      if (!r) break;
      const hit = this.cacheHit(r);
      // Hit blocks no request uses: they count among the evictable blocks until this request takes them.
      const hitFree = hit > 0 ? cache!.unreferenced(r.cacheKeys!, hit) : 0;
      // The blocks after them that the host tier holds are loaded, not computed (new device blocks all the same).
      const loaded = cache?.host && r.computed === 0
        ? cache.host.run(r.cacheKeys!, hit, Math.floor((r.input - 1) / bs))
        : 0;
      const past = (hit + loaded) * bs;
      const remaining = r.known - past;
      // Chunked prefill off: a (re)computation goes in one step. One longer
      // than the whole budget (only a preempted request's recomputation of
      // prompt + generated tokens can be: prompts are checked up front) runs
      // alone in an otherwise empty step, as SGLang admits the first request
      // of a prefill batch over its budget; waiting for a budget it can
      // never get would stall the engine.
      const alone = !s.chunkedPrefill && remaining > s.maxTokens && e.shape.tokens === 0;
      const cap = remaining < this.#chunkCap ? remaining : this.#chunkCap;
      let n = alone ? remaining : Math.min(cap, budget);
      if (n < remaining && s.chunkedPrefill && this.#inBlocks) {
        // A first chunk cut short by the budget, in whole blocks (TensorRT-LLM); none: it waits, later prompts
        // that fit whole may still go.
        n -= n % bs;
        if (n === 0) {
          (skipped ??= []).push(e.waiting.shift()!);
          continue;
        }
      }
      // vLLM V0 allocates the whole (re)computation's blocks at admission, chunked or not.
      const need = Math.ceil((past + (this.#wholePrompt ? remaining : n)) / bs) - hit;
      // The admission policy decides what is set aside beside the chunk
      // (GUARANTEED_NO_EVICT: every block the request will hold here); hit
      // blocks are cached already: only the rest is new.
      const full = e.admission.admitBlocks(need, Math.ceil(e.kvTokens(r.input, r.output) / bs) - hit);
      // It fits in the free blocks nobody set aside plus the unreferenced cached blocks but its own hits, as
      // vLLM's allocate_slots counts them. One that does not fit changes nothing (vLLM returns before touching
      // the cache): no block is evicted for it and its hits keep their place in the LRU.
      const whole = s.chunkedPrefill || n === remaining;
      if (!whole && e.scheduler.skipOversized) {
        (skipped ??= []).push(e.waiting.shift()!);
        continue;
      }
      const fits = whole && full <= ledger.available - hitFree - this.#watermark;
      if (!fits) break;
      e.waiting.shift();
      this.admit(r, hit, need, full, loaded);
      this.take(r, n, e.shape);
      budget -= n;
    }
    if (skipped) { for (let i = skipped.length - 1; i >= 0; i--) e.waiting.pushFront(skipped[i]); }
  }
}
