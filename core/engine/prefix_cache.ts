/**
 * The prefix cache of one engine (vLLM's automatic prefix caching): full KV
 * blocks of prompts, keyed by a chained hash of the content up to and
 * including the block, shared by every request whose prompt starts the same
 * way. A block's reference count is the requests using it; unreferenced
 * blocks stay cached until space is needed, then go least recently used
 * first.
 *
 * Invariant (checked): reference counts never go below 0.
 *
 * @module
 */
import type { PrefixIds } from "../workload/source.ts";
import { Deque } from "./deque.ts";

// 53-bit keys from two 32-bit FNV-1a lanes (collisions negligible at millions of blocks).
function mix(h: number, v: number, prime: number): number {
  let x = h;
  for (let k = 0; k < 4; k++) x = Math.imul(x ^ ((v >>> (8 * k)) & 0xff), prime);
  return x >>> 0;
}
function combine(key: number, v: number): number {
  const lo = mix((key % 0x100000000) >>> 0 ^ 0x811c9dc5, v, 0x01000193);
  const hi = mix(Math.floor(key / 0x100000000) ^ 0x9e3779b9, v ^ lo, 0x01000197) & 0x1fffff;
  return hi * 0x100000000 + lo;
}

/** Marks where a prompt's own content starts in a key chain (no shared-prefix id is chained before it). */
const OWN_CONTENT = 0x7fffffff;

/** The key of a block not keyed yet (see {@link blockKeys}): keys are ≥ 0, so no cached block has it. */
const UNKEYED = -1;

/**
 * The cache keys of a prompt's full KV blocks of `blockSize` tokens, as
 * vLLM hashes every full block: block j is keyed by the chain of content ids
 * up to the one covering its last token, and by j. Tokens the shared-prefix
 * ids do not cover are the request's own content (`own`, unique in the
 * run), so those blocks match only the same request: after a preemption it
 * finds its own prompt blocks still cached, unless they were evicted.
 *
 * With `ownKeys` false, the blocks of the request's own content get
 * {@link UNKEYED} instead of their keys: only the request itself can hit
 * them, and only once it has been preempted (core/engine/engine.ts), so a
 * request is keyed in full at its first preemption. Most never are: hashing
 * their own blocks up front took a tenth of a 100,000-request run with
 * vLLM's engine profile (prefix caching on, every prompt unique).
 *
 * @param prefix shared-prefix ids of the prompt's start, if any
 * @param own an id unique to the request
 * @param ownKeys whether the blocks of its own content are keyed too
 */
export function blockKeys(
  prefix: PrefixIds | undefined,
  blockSize: number,
  input: number,
  own: number,
  ownKeys = true,
): readonly number[] {
  const covered = prefix ? Math.min(input, prefix.ids.length * prefix.blockTokens) : 0;
  const blocks = Math.floor(input / blockSize);
  // No shared prefix and its own blocks unkeyed: every block UNKEYED, one array per length for the whole run (a
  // million requests allocated a million of them).
  if (!prefix && !ownKeys) {
    let keys = UNKEYED_BLOCKS.get(blocks);
    if (!keys) UNKEYED_BLOCKS.set(blocks, keys = Object.freeze(new Array<number>(blocks).fill(UNKEYED)));
    return keys;
  }
  const keys = new Array<number>(blocks);
  let chain = 0;
  let m = -1;
  let mine = false;
  for (let j = 0; j < blocks; j++) {
    const lastToken = (j + 1) * blockSize - 1;
    if (prefix) {
      // Chain every shared id covering a token of this block (within the covered prefix).
      const upTo = Math.floor(Math.min(lastToken, covered - 1) / prefix.blockTokens);
      while (m < upTo) chain = combine(chain, prefix.ids[++m] % 0x100000000 + Math.floor(prefix.ids[m] / 0x100000000));
    }
    if (lastToken >= covered && !mine) {
      if (!ownKeys) {
        keys.fill(UNKEYED, j);
        break;
      }
      chain = combine(combine(chain, OWN_CONTENT), own);
      mine = true;
    }
    keys[j] = combine(chain, j);
  }
  return keys;
}

/** The content a router asked keys for last ({@link routeKeys}). */
let routedPrefix: PrefixIds | undefined;
let routedInput = -1;
let routedBlockSize = -1;
let routedKeys: readonly number[] = [];

/**
 * The keys of a prompt's full blocks that another request may have cached
 * (its own content unkeyed), for a router's prefix scorer. The last answer
 * is remembered: a router asks every candidate engine in turn about one
 * request, and engines of one block size share its keys.
 */
export function routeKeys(
  r: { readonly prefix?: PrefixIds; readonly input: number },
  blockSize: number,
): readonly number[] {
  if (r.prefix !== routedPrefix || r.input !== routedInput || blockSize !== routedBlockSize) {
    routedKeys = blockKeys(r.prefix, blockSize, r.input, 0, false);
    routedPrefix = r.prefix;
    routedInput = r.input;
    routedBlockSize = blockSize;
  }
  return routedKeys;
}

/** Shared all-UNKEYED key arrays by block count ({@link blockKeys}); frozen, as every caller only reads them. */
const UNKEYED_BLOCKS = new Map<number, readonly number[]>();

/**
 * Cached blocks with reference counts and an LRU of the unreferenced.
 *
 * The LRU is a queue of (key, stamp) entries with lazy deletion: a block
 * released again or taken back leaves its old entry behind, recognised by
 * a stamp that no longer matches, and eviction skips such entries. (A
 * JavaScript Set used as the LRU, deleting from its front, leaves holes its
 * iterator walks over again on every eviction: half the run time of a
 * 100,000-request run with prefix caching went there.)
 */
export class PrefixCache {
  /** The host tier evicted blocks move to (KV offload), when there is one. */
  readonly host?: HostTier;

  /** @param host the host tier evicted blocks move to, if any */
  constructor(host?: HostTier) {
    if (host) this.host = host;
  }

  #refs = new Map<number, number>();
  /** Unreferenced keys → the stamp of their live entry in the queue. */
  #lru = new Map<number, number>();
  /**
   * `#lru.size`, kept as the map changes: every step asks for the evictable
   * blocks (KV occupancy), and a map's size is read from its table, one more
   * cache miss per step across 512 engines.
   */
  #unreferenced = 0;
  /**
   * The LRU queue: each entry a key and its stamp, one after the other (one
   * queue, not one of keys beside one of stamps: across 512 engines each was
   * a cache miss at every eviction).
   */
  #queue = new Deque<number>();
  #stamp = 0;
  /** Unreferenced blocks no prompt can hit again, queued as anonymous runs (stamp 0, the key field their count). */
  #dead = 0;
  /**
   * The anonymous run at the very front of the LRU, ahead of every queued
   * entry, held here rather than in the queue: eviction takes from it first.
   * Without shared prefixes the whole LRU is one such run (finished requests'
   * runs merge), and reading it in the queue at each eviction, the queue's
   * object, its ring and the entry, was three cache misses a step across a
   * fleet (peek alone was 2.4% of a 512-engine run).
   */
  #frontDead = 0;
  /** Blocks of requests' own content held by them without an index entry (see {@link holdOwn}). */
  #heldOwn = 0;

  /** Cached blocks (referenced or not). */
  get size(): number {
    return this.#refs.size + this.#dead + this.#heldOwn;
  }

  /** Unreferenced cached blocks: reclaimable. */
  get evictable(): number {
    return this.#unreferenced + this.#dead;
  }

  /** Σ reference counts (0 once every request has left). */
  get referenced(): number {
    let n = this.#heldOwn;
    for (const r of this.#refs.values()) n += r;
    return n;
  }

  /** True when the block is cached. */
  has(key: number): boolean {
    return this.#refs.has(key);
  }

  /** How many leading keys (at most `max`) are cached. */
  lookup(keys: readonly number[], max: number): number {
    let h = 0;
    while (h < max && h < keys.length && this.#refs.has(keys[h])) h++;
    return h;
  }

  /** How many of the first `n` keys (cached) no request uses: evictable now, in use once a request takes them. */
  unreferenced(keys: readonly number[], n: number): number {
    let free = 0;
    for (let j = 0; j < n; j++) if (this.#refs.get(keys[j]) === 0) free++;
    return free;
  }

  /** A request starts using a cached block. */
  acquire(key: number): void {
    const r = this.#refs.get(key)!;
    if (r === 0) {
      this.#lru.delete(key); // its queue entry goes stale
      this.#unreferenced = this.#lru.size;
    }
    this.#refs.set(key, r + 1);
  }

  /**
   * A request's freshly computed block, or one loaded from the host tier,
   * becomes a cached block it uses (and leaves the host tier: a block is in
   * one tier at a time). Precondition: not cached.
   */
  insert(key: number): void {
    this.#refs.set(key, 1);
    this.host?.take(key);
  }

  /** A request stops using a cached block. */
  release(key: number): void {
    const r = this.#refs.get(key)! - 1;
    if (!(r >= 0)) throw new RangeError(`prefix cache: reference count of block ${key} below 0`);
    this.#refs.set(key, r);
    if (r === 0) {
      const stamp = ++this.#stamp;
      this.#lru.set(key, stamp);
      this.#unreferenced = this.#lru.size;
      this.#queue.push(key);
      this.#queue.push(stamp);
    }
  }

  /**
   * A request computed `n` blocks of its own content, which only it can
   * ever look up: they are cached and referenced by it, without an index
   * entry until it releases them ({@link indexReleased}, {@link releaseDead}).
   */
  holdOwn(n: number): void {
    this.#heldOwn += n;
  }

  /** A request releases its own blocks `keys[from..to)` held by {@link holdOwn}: they are indexed, unreferenced. */
  indexReleased(keys: readonly number[], from: number, to: number): void {
    this.#heldOwn -= to - from;
    for (let j = from; j < to; j++) {
      this.#refs.set(keys[j], 1);
      this.release(keys[j]);
    }
  }

  /**
   * A finished request's blocks `keys[from..to)` (referenced by it alone)
   * that no prompt can hit again: they leave the index (or were never in it:
   * `held`, see {@link holdOwn}) and wait in the LRU as one anonymous run,
   * reclaimable like any unreferenced block.
   */
  releaseDead(keys: readonly number[], from: number, to: number, held: boolean): void {
    if (held) this.#heldOwn -= to - from;
    else {
      for (let j = from; j < to; j++) {
        if (this.#refs.get(keys[j]) !== 1) throw new RangeError(`prefix cache: block ${keys[j]} is not held once`);
        this.#refs.delete(keys[j]);
      }
    }
    this.#dead += to - from;
    // Right behind another anonymous run, it joins it: which dead block goes first does not matter, and a fleet's
    // queue of one run per finished request was read at its cold front at every eviction (9% of a 512-engine run).
    const q = this.#queue;
    const n = q.size;
    if (n === 0) this.#frontDead += to - from; // right behind the front run (or the first)
    else if (q.at(n - 1) === 0) q.set(n - 2, q.at(n - 2)! + (to - from));
    else {
      q.push(to - from);
      q.push(0);
    }
  }

  /**
   * Drops up to `n` unreferenced blocks, least recently used first.
   *
   * @returns how many were dropped (their blocks are free again)
   */
  evict(n: number): number {
    let k = 0;
    const q = this.#queue;
    while (k < n && this.evictable > 0) {
      if (this.#frontDead > 0) {
        const take = this.#frontDead < n - k ? this.#frontDead : n - k;
        this.#frontDead -= take;
        this.#dead -= take;
        k += take;
        continue;
      }
      const key = q.shift()!;
      const stamp = q.shift()!;
      if (stamp === 0) {
        // An anonymous run of `key` dead blocks comes to the front: taken from there (above).
        this.#frontDead = key;
        continue;
      }
      if (this.#lru.get(key) !== stamp) continue; // taken back or released again since
      this.#lru.delete(key);
      this.#unreferenced = this.#lru.size;
      this.#refs.delete(key);
      this.host?.put(key); // offloaded: a later hit loads it instead of recomputing it
      k++;
    }
    return k;
  }
}

/**
 * A second KV tier in host memory (KV offload: vLLM's CPU offloading,
 * LMCache, SGLang's HiCache): the prefix blocks the device cache evicts move
 * here, least recently evicted dropped first when it is full, and a prompt
 * that finds its next blocks here loads them over the host link instead of
 * recomputing them. A block is in one tier at a time: loading one moves it
 * back to the device.
 *
 * Invariant (tested): at most `capacity` blocks; none also in the device
 * cache's index.
 */
export class HostTier {
  /** Blocks it holds at most. */
  readonly capacity: number;
  /** Keys held, least recently put first (a Map keeps insertion order). */
  readonly #keys = new Map<number, true>();
  /** Blocks put here so far (offloaded). */
  offloaded = 0;
  /** Blocks dropped because it was full. */
  dropped = 0;

  /** @param capacity blocks it holds at most (≥ 0) */
  constructor(capacity: number) {
    this.capacity = capacity;
  }

  /** Blocks held. */
  get size(): number {
    return this.#keys.size;
  }

  /** Whether block `key` is here. */
  has(key: number): boolean {
    return this.#keys.has(key);
  }

  /** An evicted device block moves here (the least recently put goes when full). */
  put(key: number): void {
    if (this.capacity <= 0) return;
    this.#keys.delete(key);
    if (this.#keys.size >= this.capacity) {
      const oldest = this.#keys.keys().next().value!;
      this.#keys.delete(oldest);
      this.dropped++;
    }
    this.#keys.set(key, true);
    this.offloaded++;
  }

  /** Block `key` leaves (loaded back to the device, or computed there again). */
  take(key: number): boolean {
    return this.#keys.delete(key);
  }

  /** How many of `keys[from..max)` follow on here, from `from`. */
  run(keys: readonly number[], from: number, max: number): number {
    let n = 0;
    while (from + n < max && from + n < keys.length && this.#keys.has(keys[from + n])) n++;
    return n;
  }
}
