/**
 * Multi-turn sessions (chat, agents): a session's turns go one after the
 * other, each sent a think time after the previous one's last token, and
 * each turn's prompt carries the whole conversation so far:
 *
 *     prompt(k) = system prompt + Σ_{j<k} (message(j) + reply(j)) + message(k)
 *
 * so a turn's prompt starts with the previous turn's prompt, and an engine
 * that still caches it computes only what is new (vLLM's automatic prefix
 * caching, SGLang's radix cache). The sessions start as the arrival process
 * says; their later turns are closed-loop, drawn when the simulator reports
 * the previous turn finished ({@link SessionSource.followUp}).
 *
 * `num_requests` counts turns: each session's turns are drawn when it
 * starts (cut so the run has exactly that many), its message and reply
 * lengths too (from the request class's `input_tokens` and
 * `output_tokens`), so its prefix ids are laid out once for all its turns.
 *
 * @module
 */
import { ArrivalClock } from "./arrival.ts";
import type { ArrivalSpec } from "./arrival.ts";
import { drawLength } from "./lengths.ts";
import type { LengthDist } from "./lengths.ts";
import { Rng } from "./rng.ts";
import { classPrefixBase, SYNTHETIC_PREFIX_BLOCK } from "./source.ts";
import type { PrefixIds, RequestClass, RequestDraw, RequestSource, SessionLink } from "./source.ts";

/** Seconds between a turn's last token and the user's next message. */
export type ThinkTime =
  | { readonly dist: "fixed"; readonly value: number }
  | { readonly dist: "exponential"; readonly mean: number }
  | { readonly dist: "uniform"; readonly min: number; readonly max: number }
  | { readonly dist: "lognormal"; readonly mean: number; readonly std: number };

/** How the sessions of a synthetic workload go. */
export interface SessionSpec {
  /** Turns per session (integers ≥ 1). */
  readonly turns: LengthDist;
  /** Think time between turns, seconds. */
  readonly thinkTime: ThinkTime;
  /**
   * The longest a turn's prompt plus reply may be, tokens: a session ends
   * before the turn that would pass it, as a chat client stops a
   * conversation at the model's context (Infinity: no limit).
   */
  readonly maxContext: number;
}

/** One conversation: its turns' lengths and think times, drawn when it starts. */
export class Session implements SessionLink {
  /** Session number, from 0 in start order. */
  readonly id: number;
  /** Each turn's prompt tokens (the history included). */
  readonly inputs: Int32Array;
  /** Each turn's reply tokens. */
  readonly outputs: Int32Array;
  /** Think time before turn k + 1, µs (integer), at k. */
  readonly thinks: Float64Array;
  /** Content ids of the whole conversation: every turn's prompt is covered by its start. */
  readonly prefix: PrefixIds;
  /** Turns sent so far. */
  sent = 1;
  /** The engine its last turn was routed to (−1: none yet), for session affinity. */
  engine = -1;

  constructor(id: number, inputs: Int32Array, outputs: Int32Array, thinks: Float64Array, prefix: PrefixIds) {
    this.id = id;
    this.inputs = inputs;
    this.outputs = outputs;
    this.thinks = thinks;
    this.prefix = prefix;
  }

  /** Turns in the session. */
  get turns(): number {
    return this.inputs.length;
  }
}

/** Session content ids start here, above every request class's shared-prefix ids (class index < 2,000). */
const SESSION_IDS = 2 ** 51;
/** Content ids per session (16M tokens of conversation). */
const IDS_PER_SESSION = 2 ** 20;

/** A think-time draw in seconds (≥ 0). */
export function drawThink(d: ThinkTime, rng: Rng): number {
  switch (d.dist) {
    case "fixed":
      return d.value;
    case "exponential":
      return rng.exponential(d.mean);
    case "uniform":
      return d.min + rng.uniform() * (d.max - d.min);
    case "lognormal": {
      if (d.std === 0) return d.mean;
      const s2 = Math.log(1 + (d.std * d.std) / (d.mean * d.mean));
      return Math.exp(Math.log(d.mean) - s2 / 2 + Math.sqrt(s2) * rng.normal());
    }
  }
}

/** A short description: `5 s`, `exponential(mean 5 s)`. */
export function describeThink(d: ThinkTime): string {
  switch (d.dist) {
    case "fixed":
      return `${d.value} s`;
    case "exponential":
      return `exponential(mean ${d.mean} s)`;
    case "uniform":
      return `uniform(${d.min}..${d.max} s)`;
    case "lognormal":
      return `lognormal(mean ${d.mean} s, std ${d.std} s)`;
  }
}

/** The mean of a think-time distribution, seconds. */
export function meanThink(d: ThinkTime): number {
  switch (d.dist) {
    case "fixed":
      return d.value;
    case "uniform":
      return (d.min + d.max) / 2;
    default:
      return d.mean;
  }
}

/**
 * Synthetic sessions: their starts from `arrival`, a class by weight per
 * session, its turns' message and reply lengths from the class, turn counts
 * and think times from the `sessions` stream of `seed`.
 */
export class SessionSource implements RequestSource {
  readonly count: number;
  #clock: ArrivalClock;
  #lengths: Rng;
  #draws: Rng;
  #classes: readonly RequestClass[];
  #total: number;
  #spec: SessionSpec;
  /** Turns given to sessions started so far. */
  #allotted = 0;
  #sessions = 0;

  /**
   * @param count turns in all
   * @param arrival when sessions start
   * @param classes request classes (each session draws one)
   * @param spec turns, think times and the context limit
   * @param seed the run's seed
   */
  constructor(
    count: number,
    arrival: ArrivalSpec,
    classes: readonly RequestClass[],
    spec: SessionSpec,
    seed: number,
  ) {
    this.count = count;
    this.#clock = new ArrivalClock(arrival, new Rng(seed, "arrivals"));
    this.#lengths = new Rng(seed, "lengths");
    this.#draws = new Rng(seed, "sessions");
    this.#classes = classes;
    this.#total = classes.reduce((s, c) => s + c.weight, 0);
    this.#spec = spec;
  }

  /** Sessions started so far. */
  get sessions(): number {
    return this.#sessions;
  }

  /** Whether another session starts (its turns are not all given yet). */
  hasNext(): boolean {
    return this.#allotted < this.count;
  }

  /** The next session's first turn. Precondition: {@link hasNext}. */
  next(): RequestDraw {
    const arrival = this.#clock.next();
    const rng = this.#lengths;
    let c = this.#classes[0];
    let ci = 0;
    if (this.#classes.length > 1) {
      let u = rng.uniform() * this.#total;
      for (let i = 0; i < this.#classes.length; i++) {
        c = this.#classes[i];
        ci = i;
        if (u < c.weight) break;
        u -= c.weight;
      }
    }
    const group = c.sharedPrefixTokens > 0 && c.prefixGroups > 1 ? Math.floor(rng.uniform() * c.prefixGroups) : 0;
    const want = Math.min(drawLength(this.#spec.turns, this.#draws), this.count - this.#allotted);
    const inputs: number[] = [];
    const outputs: number[] = [];
    let history = c.sharedPrefixTokens;
    for (let k = 0; k < want; k++) {
      const input = history + drawLength(c.input, rng);
      const output = drawLength(c.output, rng);
      // A conversation ends before the turn that would pass the context limit (its first turn always runs).
      if (k > 0 && input + output > this.#spec.maxContext) break;
      inputs.push(input);
      outputs.push(output);
      history = input + output;
    }
    const n = inputs.length;
    const thinks = new Float64Array(Math.max(0, n - 1));
    // At least 1 µs: a turn goes after the instant the turn before it finished, never within it (the simulator forms
    // an engine's next step at a step's end when nothing else that instant can bring it a request).
    for (let k = 0; k + 1 < n; k++) {
      thinks[k] = Math.max(1, Math.round(drawThink(this.#spec.thinkTime, this.#draws) * 1e6));
    }
    this.#allotted += n;
    const id = this.#sessions++;
    const s = new Session(
      id,
      Int32Array.from(inputs),
      Int32Array.from(outputs),
      thinks,
      this.#ids(ci, c, group, id, inputs[n - 1]),
    );
    return { arrival, input: s.inputs[0], output: s.outputs[0], prefix: s.prefix, session: s };
  }

  /**
   * The turn after one of `s` whose last token came at `finish` (µs), sent
   * a think time later; undefined after its last turn.
   */
  followUp(link: SessionLink, finish: number): RequestDraw | undefined {
    if (!(link instanceof Session)) throw new TypeError("followUp: not a session of a SessionSource");
    const s = link;
    const k = s.sent;
    if (k >= s.turns) return undefined;
    s.sent++;
    return {
      arrival: finish + s.thinks[k - 1],
      input: s.inputs[k],
      output: s.outputs[k],
      prefix: s.prefix,
      session: s,
    };
  }

  /**
   * Content ids covering `tokens` of the conversation: the class's shared
   * system prompt (its group's ids, whole blocks of it), then the session's
   * own ids. Every turn's prompt is a start of it.
   */
  #ids(ci: number, c: RequestClass, group: number, session: number, tokens: number): PrefixIds {
    const shared = Math.floor(Math.min(tokens, c.sharedPrefixTokens) / SYNTHETIC_PREFIX_BLOCK);
    const own = Math.ceil((tokens - shared * SYNTHETIC_PREFIX_BLOCK) / SYNTHETIC_PREFIX_BLOCK);
    if (own > IDS_PER_SESSION) {
      throw new RangeError(`a session of ${tokens} tokens: at most 16M tokens of conversation`);
    }
    const ids = new Array<number>(shared + own);
    const base = classPrefixBase(ci, group);
    for (let i = 0; i < shared; i++) ids[i] = base + i;
    const mine = SESSION_IDS + session * IDS_PER_SESSION;
    for (let i = 0; i < own; i++) ids[shared + i] = mine + i;
    return { ids, blockTokens: SYNTHETIC_PREFIX_BLOCK };
  }
}
