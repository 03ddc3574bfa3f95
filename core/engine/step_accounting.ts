/**
 * Step accounting of one engine: what a step costs while it runs
 * (occupancy, FLOPs, bytes), what it changes when it ends (tokens computed
 * and sampled, MTP drafts accepted, prompt blocks cached, requests
 * finished or handed off, inter-token gaps), and the engine's counters.
 * The lazy cohort (lazy_decode.ts) is advanced as one; every other running
 * request is applied one by one (the reference path).
 *
 * @module
 */
import type { EngineState } from "./engine_state.ts";
import type { Request } from "./request.ts";
import { empty } from "./arrays.ts";
import type { EngineStats } from "./types.ts";

/** Counts the step about to run on `e` for `dt` µs (occupancy and utilisation). */
export function accountStep(e: EngineState, dt: number): void {
  const b = e.shape;
  e.seqTime += b.seqs * dt;
  // KV occupancy counts what requests hold and what is set aside for them; cached blocks nobody references
  // (reclaimable at once) are counted apart.
  const ledger = e.ledger;
  const evictable = ledger.cachedEvictable;
  const held = ledger.pool.used - evictable + ledger.reserved;
  e.kvTime += held * dt;
  e.kvCachedTime += evictable * dt;
  if (held > e.peakKvHeld) e.peakKvHeld = held;
  const c = e.spec.cost;
  if (c.stepFlops) e.flops += c.stepFlops(b);
  if (c.stepBytes) e.hbmBytes += c.stepBytes(b);
}

/**
 * Applies `e`'s step in flight at time `now`: KV lands, tokens are sampled,
 * finished requests leave and free their blocks.
 *
 * @returns the requests that finished (valid until the next call)
 */
export function applyStep(e: EngineState, now: number): Request[] {
  const done = e.finished;
  empty(done);
  const run = e.running;
  e.steps++;
  e.busyTime += now - e.stepStart;
  e.batchedSeqs += e.shape.seqs;
  if (e.shape.seqs > e.peakBatch) e.peakBatch = e.shape.seqs;
  let w = 0;
  let processed = 0;
  // Tokens that follow this engine's previous step share its gap: counted once.
  const last = e.lastStepEnd;
  let sameGap = 0;
  const cache = e.ledger.cache;
  const lazy = e.lazy;
  const cohort = lazy.cohort;
  if (cohort > 0 && lazy.served) {
    processed = cohort;
    if (lazy.last === last) sameGap = cohort;
    else addItl(e, now - lazy.last, cohort);
    w = lazy.advance(now);
  } else w = cohort;
  // The cohort's finished requests have left `running` already: the rest follows its remaining cohort.
  for (let i = w; i < run.length; i++) {
    const r = run[i];
    const n = r.scheduled;
    if (n > 0) {
      r.scheduled = 0;
      let advance = n;
      if (n > 1 && r.generated > 0 && r.computed === r.input + r.generated - 1) {
        // Speculation: of n − 1 drafts, draft i is accepted with probability
        // p_1 · … · p_i (each needs its predecessors): a^i for MTP's one
        // rate, the product of the per-position rates otherwise. The
        // expected count is credited deterministically; whole accepted
        // drafts join the sequence.
        r.draftCredit += expectedDrafts(e.spec.draftAcceptance, e.spec.draftAcceptances, n - 1);
        const accepted = Math.floor(r.draftCredit);
        r.draftCredit -= accepted;
        r.generated += accepted;
        advance = 1 + accepted;
      }
      r.computed += advance;
      processed += advance;
      // Prefix caching: full prompt blocks just computed join the cache.
      const keys = r.cacheKeys;
      if (keys !== undefined && cache) {
        const full = Math.min(keys.length, Math.floor(r.computed / e.spec.blockSize));
        // A request never preempted here cannot find its own content cached (no other prompt
        // has it): its own blocks are held without an index entry (see KvLedger.release).
        while (r.cachedBlocks < full) {
          if (r.preemptions === 0 && r.cachedBlocks >= r.firstOwnBlock) {
            cache.holdOwn(full - r.cachedBlocks);
            r.cachedBlocks = full;
          } else if (cache.has(keys[r.cachedBlocks])) break;
          else cache.insert(keys[r.cachedBlocks++]);
        }
      }
      if (r.computed === r.input + r.generated) {
        r.generated++;
        if (r.firstToken < 0) r.firstToken = now;
        else if (r.lastToken === last) sameGap++;
        else addItl(e, now - r.lastToken, 1);
        r.lastToken = now;
        if (e.spec.role === "prefill" && r.generated === 1 && r.output > 1) {
          // Prompt done: the KV stays here until a decode engine has it.
          e.ledger.unreserve(r);
          r.heldBlocks = r.blocks;
          r.blocks = 0;
          r.handoffAt = now;
          e.active--;
          e.served++;
          e.handoff.push(r);
          continue;
        }
        if (r.generated === r.output && e.finish(r, now)) continue;
      }
    }
    if (w !== i) run[w] = r;
    w++;
  }
  if (w < run.length) run.length = w;
  if (w === 0) e.windowLeft = 0; // a multi-step window ends with its batch
  if (sameGap > 0) addItl(e, now - last, sameGap);
  e.lastStepEnd = now;
  e.outstanding -= processed;
  e.busy = false;
  lazy.join(now);
  return done;
}

/** Counts `n` output tokens that came `gap` µs after their previous one. */
function addItl(e: EngineState, gap: number, n: number): void {
  e.itl.add(gap, n);
}

/** `e`'s counters. */
export function engineStats(e: EngineState): EngineStats {
  return {
    label: e.spec.label,
    group: e.spec.group,
    kvBlocks: e.spec.kvBlocks,
    steps: e.steps,
    busy: e.busyTime,
    peakKvBlocks: e.peakKvHeld,
    kvCachedTime: e.kvCachedTime,
    preemptions: e.preemptions,
    served: e.served,
    batchedSeqs: e.batchedSeqs,
    peakBatch: e.peakBatch,
    role: e.spec.role,
    instance: e.spec.instance,
    transfers: e.transfers,
    transferBytes: e.transferBytes,
    transferTime: e.transferTime,
    kvWaits: e.kvWaits,
    kvWaitTime: e.kvWaitTime,
    cachePromptBlocks: e.ledger.promptBlocks,
    cacheHitBlocks: e.ledger.hitBlocks,
    cachePromptTokens: e.ledger.promptTokens,
    cacheHitTokens: e.ledger.hitTokens,
    ...(e.ledger.cache?.host
      ? { cacheHostHitTokens: e.ledger.hostHitTokens, hostBlocks: e.ledger.cache.host.size }
      : {}),
    cacheReferenced: e.ledger.cache?.referenced ?? 0,
    maxSeqs: e.spec.maxSeqs,
    seqTime: e.seqTime,
    kvTime: e.kvTime,
    flops: e.flops,
    hbmBytes: e.hbmBytes,
    peakFlops: e.spec.cost.peakFlops ?? 0,
    peakBandwidth: e.spec.cost.peakBandwidth ?? 0,
  };
}

/**
 * The expected drafts accepted of `drafts` verified: Σ_{i=1..drafts} Π_{j≤i}
 * p_j, each draft accepted only after every one before it. With one rate `a`
 * at every position (MTP), a · (1 − a^drafts) / (1 − a); with per-position
 * rates `perPosition` (EAGLE, n-gram), the sum of their running products.
 */
export function expectedDrafts(a: number, perPosition: readonly number[] | undefined, drafts: number): number {
  if (perPosition) {
    let p = 1, sum = 0;
    for (let i = 0; i < drafts; i++) {
      p *= perPosition[i];
      sum += p;
    }
    return sum;
  }
  return a >= 1 ? drafts : (a * (1 - Math.pow(a, drafts))) / (1 - a);
}
