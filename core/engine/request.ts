/**
 * A request as an engine sees it. Token accounting follows vLLM: `computed`
 * tokens have KV in the cache; `known` = prompt + tokens generated so far;
 * a step that brings `computed` up to `known` samples one new token.
 *
 * @module
 */

import type { PrefixIds, SessionLink } from "../workload/source.ts";

/**
 * One request in flight. Times are µs; -1 = not yet.
 *
 * The simulator reuses the object of a request that has left every engine
 * for a later one ({@link Request.reuse}): a million-request run otherwise
 * allocated, copied and promoted a million of them (11% of a run on 512
 * engines went to the young generation's collections).
 */
export class Request {
  /** Index in the workload (0-based, arrival order). */
  id = 0;
  /** Prompt tokens. */
  input = 0;
  /** Output tokens to generate. */
  output = 0;
  /** When it reached the client. */
  arrival = 0;
  /** When the client sent it (after any max_concurrency wait). */
  send = -1;
  /** When it reached its engine's waiting queue, µs (after the per-request latency). */
  queued = 0;
  /** When its first output token was produced. */
  firstToken = -1;
  /** When its last output token was produced. */
  finish = -1;
  /** When its latest output token so far was produced (for inter-token latency). */
  lastToken = -1;
  /** Engine it was routed to. */
  engine = -1;
  /** Tokens whose KV is in the cache. */
  computed = 0;
  /** Output tokens produced so far. */
  generated = 0;
  /** KV blocks held. */
  blocks = 0;
  /** Blocks set aside for it and not yet taken (guaranteed_no_evict; part of its engine's `reserved`). */
  reserved = 0;
  /** Tokens scheduled in the current step (0 = not in this step). */
  scheduled = 0;
  /** Times it lost its KV to preemption and was recomputed. */
  preemptions = 0;
  /** Fractional MTP drafts accepted, carried between steps. */
  draftCredit = 0;
  /** Decode engine (PD-disaggregated), or -1. */
  decodeEngine = -1;
  /** Blocks the prefill engine keeps until the prompt's KV has left. */
  heldBlocks = 0;
  /** When its KV was ready to leave the prefill engine, µs. */
  handoffAt = -1;
  /**
   * Prefix-cache keys of its prompt's full blocks (computed on first
   * admission; those of its own content only from its first preemption,
   * UNKEYED until then: see blockKeys).
   */
  cacheKeys: readonly number[] | undefined = undefined;
  /** The block size its keys were computed with. */
  keyBlockSize = 0;
  /** Its first blocks that are shared prefix-cache blocks. */
  cachedBlocks = 0;
  /** Its first prompt block holding its own content (blocks before it hold only the shared prefix). */
  firstOwnBlock = 0;
  /** Its place in its engine's running order (given as it joins the batch; the batch is in this order). */
  seat = 0;
  /**
   * In the lazy cohort, its KV blocks are counted by phase, not held in
   * `blocks` (which stays what it was when it joined: see lazy_decode.ts).
   */
  phased = false;
  /** In the lazy cohort: the number of its entry in the finish heap (0: none; see lazy_decode.ts). */
  lazyEntry = 0;
  /** Prefix content ids, for prefix caching. */
  prefix: PrefixIds | undefined = undefined;
  /** The conversation it is a turn of (session workloads). */
  session: SessionLink | undefined = undefined;

  constructor(id: number, input: number, output: number, arrival: number, prefix?: PrefixIds, session?: SessionLink) {
    this.reuse(id, input, output, arrival, prefix, session);
  }

  /** Makes this object request `id`, as new (every field as the constructor leaves it). */
  reuse(id: number, input: number, output: number, arrival: number, prefix?: PrefixIds, session?: SessionLink): this {
    this.id = id;
    this.input = input;
    this.output = output;
    this.arrival = arrival;
    this.send = -1;
    this.queued = 0;
    this.firstToken = -1;
    this.finish = -1;
    this.lastToken = -1;
    this.engine = -1;
    this.computed = 0;
    this.generated = 0;
    this.blocks = 0;
    this.reserved = 0;
    this.scheduled = 0;
    this.preemptions = 0;
    this.draftCredit = 0;
    this.decodeEngine = -1;
    this.heldBlocks = 0;
    this.handoffAt = -1;
    this.cacheKeys = undefined;
    this.keyBlockSize = 0;
    this.cachedBlocks = 0;
    this.firstOwnBlock = 0;
    this.seat = 0;
    this.phased = false;
    this.lazyEntry = 0;
    this.prefix = prefix;
    this.session = session;
    return this;
  }

  /** Prompt plus generated tokens: what a (re)computation must cover. */
  get known(): number {
    return this.input + this.generated;
  }

  /** Tokens this request processes in all, without preemption: prompt + output − 1. */
  get work(): number {
    return this.input + this.output - 1;
  }
}
