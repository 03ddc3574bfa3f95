/**
 * The per-request figures of a run as they stream in: each request adds
 * its latencies to one {@link LatencyDistribution} per column (exact up to
 * a count, then a sketch) and its counts to running totals, in bounded
 * memory however many requests a run has. {@link summarize} reads a run's
 * table through one (in request order: the figures are those of a loop
 * over the table, bit for bit); a long run feeds one as requests finish,
 * and keeps only a thinned table (core/engine's `keepEvery`).
 *
 * @module
 */
import type { RecordedRequest } from "../engine/types.ts";
import { LatencyDistribution } from "./sketch.ts";
import type { DistributionJson } from "./sketch.ts";

/** Per-request columns, in the guide's order. */
export const METRIC_COLUMNS = [
  "E2E_TIME(s)",
  "TTFT(s)",
  "TPOT(s)",
  "INPUT_TOKENS",
  "OUTPUT_TOKENS",
  "OUTPUT_TOKEN_THROUGHPUT(tok/s)",
] as const;

/** The latency columns a stream keeps: the guide's, then the ext ones per request. */
export const STREAM_COLUMNS = [
  ...METRIC_COLUMNS,
  "CLIENT_WAIT(s)",
  "TTFT_FROM_ARRIVAL(s)",
  "E2E_FROM_ARRIVAL(s)",
] as const;

/** A column a stream keeps. */
export type StreamColumn = (typeof STREAM_COLUMNS)[number];

/**
 * Per-request SLOs for goodput (seconds; a request meets them when every
 * stated one holds): TTFT and E2E from arrival, TPOT (1-token outputs have
 * none and meet it).
 */
export interface GoodputSlos {
  /** TTFT from arrival, s. */
  readonly ttft?: number;
  /** TPOT, s. */
  readonly tpot?: number;
  /** E2E from arrival, s. */
  readonly e2e?: number;
}

/** One request's figures, µs (-1: never); `engine` -1 when it was unservable. */
export type RequestFigures = Omit<RecordedRequest, "id">;

/** A {@link RequestStream} as JSON. */
export interface StreamJson {
  /** Values each column keeps exactly. */
  readonly exactUpTo: number;
  /** Goodput SLOs. */
  readonly slo?: GoodputSlos;
  /** The columns, in {@link STREAM_COLUMNS} order. */
  readonly columns: readonly DistributionJson[];
  /** Requests added. */
  readonly requests: number;
  /** Requests served. */
  readonly done: number;
  /** Served requests meeting every SLO. */
  readonly met: number;
  /** Whether a request waited at the client. */
  readonly waited: boolean;
  /** First send, µs (null: none served). */
  readonly firstSend: number | null;
  /** Last completion, µs (null: none served). */
  readonly lastFinish: number | null;
  /** Prompt tokens served. */
  readonly inputTokens: number;
  /** Output tokens served. */
  readonly outputTokens: number;
  /** Σ preemptions. */
  readonly preemptions: number;
}

/** Running figures of a run's requests. */
export class RequestStream {
  /** Each column's distribution, by {@link STREAM_COLUMNS} order. */
  get columns(): readonly LatencyDistribution[] {
    this.#apart();
    return this.#columns;
  }

  readonly #columns: LatencyDistribution[];
  /**
   * While every served request was sent as it arrived (no client limit held
   * it), its latencies from arrival are its latencies from sending, bit for
   * bit: the from-arrival columns would take TTFT's and E2E's values in the
   * same order. They are not kept apart until a request waits, or until they
   * are read ({@link columns}), when each becomes a copy of its twin: two
   * of a request's six sketched latencies (each a logarithm and a bucket; the
   * stream was 8% of an 8-engine run of a million requests).
   */
  #twinned: boolean;
  /** Requests added (served or not). */
  requests = 0;
  /** Requests served. */
  done = 0;
  /** Served requests that met every SLO. */
  met = 0;
  /** Whether any request waited at the client (max_concurrency). */
  waited = false;
  /** The first send of a served request, µs. */
  firstSend: number = Infinity;
  /** The last completion, µs. */
  lastFinish: number = -Infinity;
  /** Prompt tokens of the served requests. */
  inputTokens = 0;
  /** Output tokens of the served requests. */
  outputTokens = 0;
  /** Σ preemptions of the served requests. */
  preemptions = 0;
  /** How many values each column keeps exactly before it sketches them. */
  readonly exactUpTo: number;
  /** The goodput SLOs `met` counts against. */
  readonly slo?: GoodputSlos;

  /**
   * An empty stream.
   *
   * @param exactUpTo values each column keeps exactly
   * @param expected requests expected (room is taken for them up to `exactUpTo`)
   * @param slo goodput SLOs, when goodput is counted
   * @param columns its columns' distributions so far (default: empty)
   */
  constructor(exactUpTo: number, expected: number, slo?: GoodputSlos, columns?: readonly LatencyDistribution[]) {
    this.exactUpTo = exactUpTo;
    this.#columns = columns ? [...columns] : STREAM_COLUMNS.map(() => new LatencyDistribution(exactUpTo, expected));
    this.#twinned = columns === undefined;
    this.slo = slo;
  }

  /** Adds every request of `other` (another shard of the run): its distributions merged, its counts summed. */
  merge(other: RequestStream): void {
    this.columns.forEach((c, i) => c.merge(other.columns[i]));
    this.requests += other.requests;
    this.done += other.done;
    this.met += other.met;
    this.waited ||= other.waited;
    this.firstSend = Math.min(this.firstSend, other.firstSend);
    this.lastFinish = Math.max(this.lastFinish, other.lastFinish);
    this.inputTokens += other.inputTokens;
    this.outputTokens += other.outputTokens;
    this.preemptions += other.preemptions;
  }

  /** Its state as JSON (a shard's file). */
  toJSON(): StreamJson {
    return {
      exactUpTo: this.exactUpTo,
      ...(this.slo ? { slo: this.slo } : {}),
      columns: this.columns.map((c) => c.toJSON()),
      requests: this.requests,
      done: this.done,
      met: this.met,
      waited: this.waited,
      firstSend: this.done > 0 ? this.firstSend : null,
      lastFinish: this.done > 0 ? this.lastFinish : null,
      inputTokens: this.inputTokens,
      outputTokens: this.outputTokens,
      preemptions: this.preemptions,
    };
  }

  /** A stream from {@link toJSON}'s output. */
  static fromJSON(j: StreamJson): RequestStream {
    const s = new RequestStream(j.exactUpTo, 1, j.slo, j.columns.map((c) => LatencyDistribution.fromJSON(c)));
    s.requests = j.requests;
    s.done = j.done;
    s.met = j.met;
    s.waited = j.waited;
    s.firstSend = j.firstSend ?? Infinity;
    s.lastFinish = j.lastFinish ?? -Infinity;
    s.inputTokens = j.inputTokens;
    s.outputTokens = j.outputTokens;
    s.preemptions = j.preemptions;
    return s;
  }

  /** The distribution of a column. */
  column(c: StreamColumn): LatencyDistribution {
    return this.columns[STREAM_COLUMNS.indexOf(c)];
  }

  /** Whether every column is exact. */
  get exact(): boolean {
    return this.columns.every((c) => c.exact);
  }

  /** The from-arrival columns as their own distributions (copies of their twins while {@link #twinned}). */
  #apart(): void {
    if (!this.#twinned) return;
    this.#twinned = false;
    const c = this.#columns;
    c[7] = c[1].copy();
    c[8] = c[0].copy();
  }

  /** Adds one request's figures. */
  add(r: RequestFigures): void {
    const c = this.#columns;
    this.requests++;
    if (r.send >= 0) {
      c[6].add((r.send - r.arrival) / 1e6);
      if (r.send > r.arrival) this.waited = true;
    }
    if (r.engine < 0 || r.finish < 0) return;
    // A request sent later than it arrived parts the twins, before its own figures go in.
    if (this.#twinned && r.send !== r.arrival) this.#apart();
    this.done++;
    const e2e = (r.finish - r.send) / 1e6;
    const ttft = (r.firstToken - r.send) / 1e6;
    const out = r.output;
    c[0].add(e2e);
    c[1].add(ttft);
    const tpot = out > 1 ? (e2e - ttft) / (out - 1) : NaN;
    if (out > 1) c[2].add(tpot);
    const ttftA = (r.firstToken - r.arrival) / 1e6;
    const e2eA = (r.finish - r.arrival) / 1e6;
    if (!this.#twinned) {
      c[7].add(ttftA);
      c[8].add(e2eA);
    }
    const slo = this.slo;
    if (
      slo && !(ttftA > (slo.ttft ?? Infinity)) && !(tpot > (slo.tpot ?? Infinity)) && !(e2eA > (slo.e2e ?? Infinity))
    ) this.met++;
    c[3].add(r.input);
    c[4].add(out);
    if (e2e > ttft) c[5].add(out / (e2e - ttft));
    this.inputTokens += r.input;
    this.outputTokens += out;
    this.preemptions += r.preemptions;
    if (r.send < this.firstSend) this.firstSend = r.send;
    if (r.finish > this.lastFinish) this.lastFinish = r.finish;
  }
}
