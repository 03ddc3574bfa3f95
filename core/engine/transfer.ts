/**
 * KV-cache transfers from prefill to decode engines over shared links.
 *
 * Each engine has one link out (its devices' device-to-device bandwidth,
 * summed) and one link in. A transfer's rate is its fair share of both ends:
 * min(out / transfers on the sender, in / transfers on the receiver), so two
 * transfers at once on one link each take twice as long as one alone. Rates
 * change whenever a transfer starts or ends on a link; the manager then
 * re-plans the finish time of every transfer it touched (stale finish events
 * carry an old version and are ignored).
 *
 * @module
 */
import type { Request } from "./request.ts";

/** One transfer in flight. */
export interface Transfer {
  /** Identity, for the event queue. */
  readonly id: number;
  /** The request whose prompt KV moves. */
  readonly request: Request;
  /** Sending (prefill) engine. */
  readonly from: number;
  /** Receiving (decode) engine. */
  readonly to: number;
  /** Bytes in all. */
  readonly bytes: number;
  /** When it started, µs. */
  readonly started: number;
  /** Bytes still to move. */
  remaining: number;
  /** Current rate, bytes/µs. */
  rate: number;
  /** When `remaining` was last brought up to date, µs. */
  updated: number;
  /** When the fixed latency is over and bytes start to move, µs. */
  readonly flowStart: number;
  /** Bumped whenever the finish time is re-planned. */
  version: number;
}

/** Bandwidth of one engine's links, bytes/µs. */
export interface LinkSpec {
  /** Outgoing. */
  readonly out: number;
  /** Incoming. */
  readonly in: number;
}

/** Tracks transfers and their fair shares of the links. */
export class TransferManager {
  #links: readonly LinkSpec[];
  #out: Set<Transfer>[];
  #in: Set<Transfer>[];
  #byId = new Map<number, Transfer>();
  #nextId = 0;

  /** @param links bandwidth per engine, by engine index */
  constructor(links: readonly LinkSpec[]) {
    this.#links = links;
    this.#out = links.map(() => new Set());
    this.#in = links.map(() => new Set());
  }

  /** Transfers in flight. */
  get active(): number {
    return this.#byId.size;
  }

  /** The transfer with this id, if still in flight. */
  get(id: number): Transfer | undefined {
    return this.#byId.get(id);
  }

  #advance(t: Transfer, now: number): void {
    if (now > t.updated) {
      const from = t.updated > t.flowStart ? t.updated : t.flowStart;
      if (now > from) t.remaining = Math.max(0, t.remaining - (now - from) * t.rate);
      t.updated = now;
    }
  }

  /**
   * Brings every transfer on the links of `engines` up to date at its old
   * rate (a newcomer has nothing to catch up), then recomputes their rates.
   */
  #replan(engines: Iterable<number>, now: number, changed: Set<Transfer>): void {
    const touched = new Set<Transfer>();
    for (const e of engines) {
      for (const t of this.#out[e]) touched.add(t);
      for (const t of this.#in[e]) touched.add(t);
    }
    for (const t of touched) this.#advance(t, now);
    for (const t of touched) {
      const rate = Math.min(
        this.#links[t.from].out / this.#out[t.from].size,
        this.#links[t.to].in / this.#in[t.to].size,
      );
      if (rate !== t.rate) {
        t.rate = rate;
        t.version++;
        changed.add(t);
      }
    }
  }

  /** When `t` finishes at its current rate, µs (integer). */
  finishTime(t: Transfer, now: number): number {
    const start = t.flowStart > now ? t.flowStart : now;
    return Math.ceil(start + t.remaining / t.rate);
  }

  /**
   * Starts a transfer.
   *
   * @param latency fixed µs before bytes move
   * @returns the transfers whose finish time must be (re)scheduled, the new one included
   */
  start(request: Request, from: number, to: number, bytes: number, latency: number, now: number): Transfer[] {
    const t: Transfer = {
      id: this.#nextId++,
      request,
      from,
      to,
      bytes,
      started: now,
      remaining: bytes,
      rate: 0,
      updated: now,
      flowStart: now + latency,
      version: 0,
    };
    this.#byId.set(t.id, t);
    const changed = new Set<Transfer>();
    this.#out[from].add(t);
    this.#in[to].add(t);
    this.#replan([from, to], now, changed);
    changed.add(t);
    return [...changed];
  }

  /**
   * Ends a transfer.
   *
   * @returns the transfers whose finish time changed
   */
  finish(t: Transfer, now: number): Transfer[] {
    const changed = new Set<Transfer>();
    this.#out[t.from].delete(t);
    this.#in[t.to].delete(t);
    this.#byId.delete(t.id);
    this.#replan([t.from, t.to], now, changed);
    return [...changed];
  }
}
