/**
 * The KV ledger of one engine: its block pool, the blocks set aside for
 * admitted requests, and its prefix cache, with what each block is for
 * counted apart: **used** by requests (their own blocks and the cached
 * ones they reference), **reserved** (set aside for a request's growth,
 * not yet taken), and **cached-evictable** (held by the prefix cache with
 * no request referencing them: reclaimable at any time). The pool's
 * `used` is used-by-requests plus cached-evictable; free is the rest.
 *
 * Invariants: 0 ≤ reserved ≤ free, so a reserved block is always there to
 * take; a request's `reserved` sums to the ledger's.
 *
 * @module
 */
import { BlockPool } from "./kv_cache.ts";
import { HostTier, PrefixCache } from "./prefix_cache.ts";
import type { Request } from "./request.ts";

/** What one engine's KV blocks hold. */
export class KvLedger {
  /** The blocks. */
  readonly pool: BlockPool;
  /** The prefix cache, when prefix caching is on. */
  readonly cache?: PrefixCache;
  /**
   * Blocks set aside for running, ready and incoming requests and not yet
   * taken (by policies that set blocks aside): Σ of their `reserved`.
   */
  reserved = 0;
  /** Prompt blocks of requests admitted with prefix caching on. */
  promptBlocks = 0;
  /** Of them, blocks found in the prefix cache. */
  hitBlocks = 0;
  /** Prompt tokens of requests admitted with prefix caching on. */
  promptTokens = 0;
  /** Of them, tokens found in the prefix cache. */
  hitTokens = 0;
  /** Prompt tokens loaded from the host tier (KV offload) instead of computed. */
  hostHitTokens = 0;

  /**
   * @param blocks the engine's KV blocks
   * @param prefixCaching whether the engine caches prompt blocks
   * @param hostBlocks blocks of its host tier evicted prefix blocks move to (0: none)
   */
  constructor(blocks: number, prefixCaching: boolean, hostBlocks = 0) {
    this.pool = new BlockPool(blocks);
    if (prefixCaching) this.cache = new PrefixCache(hostBlocks > 0 ? new HostTier(hostBlocks) : undefined);
  }

  /** Blocks held by the prefix cache that no request references (reclaimable). */
  get cachedEvictable(): number {
    return this.cache?.evictable ?? 0;
  }

  /** Blocks requests hold (their own and the cached ones they reference). */
  get used(): number {
    return this.pool.used - this.cachedEvictable;
  }

  /** Free blocks nobody set aside. */
  get unreserved(): number {
    return this.pool.free - this.reserved;
  }

  /**
   * Blocks a new request could take now: free blocks not set aside for
   * admitted requests, plus unreferenced cached blocks, which admission
   * reclaims.
   */
  get available(): number {
    return this.pool.free - this.reserved + this.cachedEvictable;
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
  release(r: Request, blocks: number, gone = false): void {
    const cache = this.cache;
    const shared = r.cachedBlocks;
    this.pool.release(blocks - shared);
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
  unreserve(r: Request): void {
    this.reserved -= r.reserved;
    r.reserved = 0;
  }

  /** Evicts unreferenced cached blocks until `need` blocks are free (or none is left to evict). */
  makeRoom(need: number): void {
    if (this.cache && need > this.pool.free) this.pool.release(this.cache.evict(need - this.pool.free));
  }

  /**
   * An admitted request takes `need` blocks and has `full − need` more set
   * aside, reclaiming unreferenced cached blocks (least recently used
   * first) when the free ones nobody set aside are short. Precondition:
   * `full` fits in {@link available} once the request holds its hits.
   */
  take(r: Request, need: number, full: number): void {
    if (full > this.pool.free - this.reserved) {
      this.makeRoom(full + this.reserved);
      if (full > this.pool.free - this.reserved) throw new RangeError(`request ${r.id} admitted without room`);
    }
    this.pool.allocate(need);
    r.reserved = full - need;
    this.reserved += full - need;
  }

  /**
   * A running request starts taking `need` more blocks: first from its own
   * reservation (which then counts as free and unreserved).
   *
   * @returns whether the free blocks nobody set aside now hold `need`
   */
  drawOwn(r: Request, need: number): boolean {
    const own = need < r.reserved ? need : r.reserved;
    r.reserved -= own;
    this.reserved -= own;
    return need <= this.pool.free - this.reserved;
  }
}

/** What making room for a running request's growth did: freed cached blocks only (no one preempted). */
export const ROOM_FREED = 0;
/** What making room did: preempted other running requests. */
export const ROOM_PREEMPTED = 1;
/** What making room did: preempted the growing request itself (and every request after it). */
export const ROOM_LOST = 2;
