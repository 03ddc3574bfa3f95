/**
 * Where requests come from: a synthetic generator (arrival process, length
 * distributions, request classes with shared prompt prefixes) or a recorded
 * trace. Either way the simulator pulls one request at a time, so a run
 * never holds the whole workload.
 *
 * @module
 */
import { ArrivalClock } from "./arrival.ts";
import type { ArrivalSpec } from "./arrival.ts";
import { drawLength } from "./lengths.ts";
import type { LengthDist } from "./lengths.ts";
import { Rng } from "./rng.ts";

/** Content identity of a prompt's prefix, for prefix caching. */
export interface PrefixIds {
  /** One id per `blockTokens` tokens of the prompt's start; equal ids = equal content. */
  readonly ids: readonly number[];
  /** Tokens each id stands for. */
  readonly blockTokens: number;
}

/** One request as the client sees it. */
export interface RequestDraw {
  /** Arrival time, µs. */
  readonly arrival: number;
  /** Prompt tokens. */
  readonly input: number;
  /** Output tokens. */
  readonly output: number;
  /** Prefix content ids, when known. */
  readonly prefix?: PrefixIds;
  /** The conversation it is a turn of, in a session workload. */
  readonly session?: SessionLink;
}

/**
 * A conversation a request is a turn of, as the simulator and the routers
 * see it (core/workload/sessions.ts's `Session`; only its source reads the
 * rest).
 */
export interface SessionLink {
  /** The engine its last turn was routed to (−1: none yet), for session affinity. */
  engine: number;
}

/** A pull-based stream of requests, in arrival order. */
export interface RequestSource {
  /** Requests it will yield. */
  readonly count: number;
  /** The next request. Precondition: fewer than `count` were drawn (or {@link hasNext}, when given). */
  next(): RequestDraw;
  /**
   * Whether `next` has another request, when not every one of `count` comes
   * from it (sessions: their later turns come from {@link followUp}).
   */
  hasNext?(): boolean;
  /**
   * The turn after one of session `s` (one this source drew) that finished
   * at `finish` (µs), or undefined after its last.
   */
  followUp?(s: SessionLink, finish: number): RequestDraw | undefined;
}

/** A request class of a synthetic workload. */
export interface RequestClass {
  /** Name, for reports. */
  readonly name: string;
  /** Relative weight. */
  readonly weight: number;
  /** Prompt lengths. */
  readonly input: LengthDist;
  /** Output lengths. */
  readonly output: LengthDist;
  /** Leading prompt tokens shared by requests of the same prefix group (0 = none). */
  readonly sharedPrefixTokens: number;
  /** Distinct shared prefixes in the class (e.g. system prompts); each request picks one. */
  readonly prefixGroups: number;
}

/** Tokens each prefix id of a synthetic shared prefix stands for (also what `--dump_requests` writes). */
export const SYNTHETIC_PREFIX_BLOCK = 16;

/**
 * The first shared-prefix id of request class `classIndex`'s prefix group
 * `group`: ids are unique per (class, group, position), the class index and
 * the group in the high digits, a million ids per group (16M tokens).
 */
export function classPrefixBase(classIndex: number, group: number): number {
  return ((classIndex + 1) * 1_000_000 + group) * 1_000_000;
}

/**
 * Synthetic requests: arrivals from `arrival`, a class by weight, lengths
 * from the class, and prefix ids from the class's shared prefix. Random
 * draws come from the `arrivals` and `lengths` streams of `seed`.
 */
export class SyntheticSource implements RequestSource {
  readonly count: number;
  #clock: ArrivalClock;
  #rng: Rng;
  #classes: readonly RequestClass[];
  #total: number;
  #prefixes = new Map<number, PrefixIds>();

  /**
   * @param count requests to yield
   * @param arrival the arrival process
   * @param classes one or more request classes
   * @param seed the run's seed
   */
  constructor(count: number, arrival: ArrivalSpec, classes: readonly RequestClass[], seed: number) {
    this.count = count;
    this.#clock = new ArrivalClock(arrival, new Rng(seed, "arrivals"));
    this.#rng = new Rng(seed, "lengths");
    this.#classes = classes;
    this.#total = classes.reduce((s, c) => s + c.weight, 0);
  }

  next(): RequestDraw {
    const arrival = this.#clock.next();
    let c = this.#classes[0];
    if (this.#classes.length > 1) {
      let u = this.#rng.uniform() * this.#total;
      for (const k of this.#classes) {
        c = k;
        if (u < k.weight) break;
        u -= k.weight;
      }
    }
    const input = drawLength(c.input, this.#rng);
    const output = drawLength(c.output, this.#rng);
    if (c.sharedPrefixTokens <= 0) return { arrival, input, output };
    const group = c.prefixGroups > 1 ? Math.floor(this.#rng.uniform() * c.prefixGroups) : 0;
    const blocks = Math.floor(Math.min(input, c.sharedPrefixTokens) / SYNTHETIC_PREFIX_BLOCK);
    const base = classPrefixBase(this.#classes.indexOf(c), group);
    return { arrival, input, output, prefix: this.#prefix(base, blocks) };
  }

  /**
   * The prefix of `blocks` ids from `base`, one object shared by every request with it (the ids are read only):
   * a shared system prompt is the same prefix for thousands of requests.
   */
  #prefix(base: number, blocks: number): PrefixIds {
    // `base` ends in six zero digits: base + blocks is unique below a million blocks (16M tokens).
    const key = blocks < 1_000_000 ? base + blocks : undefined;
    let p = key === undefined ? undefined : this.#prefixes.get(key);
    if (p === undefined) {
      const ids = new Array<number>(blocks);
      for (let i = 0; i < blocks; i++) ids[i] = base + i;
      p = { ids, blockTokens: SYNTHETIC_PREFIX_BLOCK };
      if (key !== undefined) this.#prefixes.set(key, p);
    }
    return p;
  }
}
