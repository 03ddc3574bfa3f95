/**
 * Time series of a run, per instance group, in a bounded number of time
 * buckets: a collector fed by the simulator's step and transfer hooks, so
 * that its memory depends on the bucket count and the groups, never on the
 * request or step count. When the run outgrows the buckets, neighbouring
 * buckets merge pairwise and the bucket width doubles (every quantity kept
 * is a sum, so merging is exact).
 *
 * Quantities are measured over the engines' steps: a time-weighted sum of
 * the batch, the waiting queue and the KV blocks in use over each step's
 * span (split across the buckets it overlaps), the steps and sequences
 * started in a bucket, and preemptions. Besides the steps, KV transfers in
 * flight (PD) are time-weighted over their span, and the client's offered
 * and achieved rates come from the request table after the run.
 *
 * @module
 */
import type { BatchShape } from "../hardware/batch.ts";
import type { RequestTable, StepRecord, TransferRecord } from "../engine/types.ts";

/** Buckets kept at most (a chart's worth of points per series). */
export const MAX_BUCKETS = 256;
/** The first bucket width, µs (1/8 s; doubled as the run grows). */
const FIRST_WIDTH_US = 125_000;

/** The shape fields averaged into a typical step. */
const SHAPE_KEYS = [
  "tokens",
  "seqs",
  "logitsRows",
  "prefillTokens",
  "prefillPairs",
  "prefillContext",
  "decodeSeqs",
  "decodeTokens",
  "decodeContext",
] as const satisfies readonly (keyof BatchShape)[];

/** Σ of each shape field over some steps, and how many. */
class ShapeSum {
  readonly sums = new Float64Array(SHAPE_KEYS.length);
  count = 0;

  add(b: Readonly<BatchShape>): void {
    for (let k = 0; k < SHAPE_KEYS.length; k++) this.sums[k] += b[SHAPE_KEYS[k]];
    this.count++;
  }

  /** The mean step, with whole tokens and sequences (undefined when no step was added). */
  mean(): BatchShape | undefined {
    if (this.count === 0) return undefined;
    const m = Object.fromEntries(SHAPE_KEYS.map((k, i) => [k, this.sums[i] / this.count])) as unknown as BatchShape;
    for (const k of ["tokens", "seqs", "logitsRows", "prefillTokens", "decodeSeqs", "decodeTokens"] as const) {
      m[k] = Math.max(k === "prefillTokens" || k.startsWith("decode") ? 0 : 1, Math.round(m[k]));
    }
    m.hostShare = 1;
    return m;
  }
}

/** One group's bucketed sums. */
class GroupSeries {
  /** Σ batch sequences × µs. */
  running = new Float64Array(MAX_BUCKETS);
  /** Σ waiting requests × µs. */
  waiting = new Float64Array(MAX_BUCKETS);
  /** Σ KV blocks in use × µs. */
  kv = new Float64Array(MAX_BUCKETS);
  /** Steps started. */
  steps = new Float64Array(MAX_BUCKETS);
  /** Σ sequences of the steps started. */
  seqs = new Float64Array(MAX_BUCKETS);
  /** Preemptions. */
  preemptions = new Float64Array(MAX_BUCKETS);
  /** Σ KV transfers arriving here in flight × µs. */
  transfers = new Float64Array(MAX_BUCKETS);
  /** Prefill-carrying steps and decode-only steps, for the typical step of each. */
  readonly prefill = new ShapeSum();
  readonly decode = new ShapeSum();

  constructor(readonly name: string, readonly kvBlocks: number) {}

  arrays(): Float64Array[] {
    return [this.running, this.waiting, this.kv, this.steps, this.seqs, this.preemptions, this.transfers];
  }
}

/** A group's series, one value per bucket. */
export interface GroupTimeSeries {
  /** Instance-group name. */
  readonly group: string;
  /** Mean sequences in the running batch (all the group's engines). */
  readonly running: number[];
  /** Mean requests waiting in the engines' queues. */
  readonly waiting: number[];
  /** Mean share of the group's KV blocks in use (0-1). */
  readonly kvOccupancy: number[];
  /** Mean batch of the steps started (null: no step). */
  readonly batch: (number | null)[];
  /** Preemptions per second. */
  readonly preemptions: number[];
  /** Mean KV transfers in flight into the group (PD decode groups). */
  readonly transfersInFlight: number[];
  /** The mean prefill-carrying step of the group, when there was one. */
  readonly typicalPrefill?: BatchShape;
  /** The mean decode-only step of the group, when there was one. */
  readonly typicalDecode?: BatchShape;
}

/** A run's time series. */
export interface TimeSeries {
  /** Bucket width, seconds. */
  readonly bucketSeconds: number;
  /** Start of each bucket, seconds. */
  readonly time: number[];
  /** Requests arriving at the client, per second. */
  readonly offeredRate: number[];
  /** Requests finishing, per second. */
  readonly achievedRate: number[];
  /** Per instance group, in plan order. */
  readonly groups: readonly GroupTimeSeries[];
}

/**
 * Collects a run's time series from the simulator's hooks (pass
 * {@link onStep} and {@link onTransfer} to `simulate`).
 */
export class TimeSeriesCollector {
  readonly #groups: GroupSeries[];
  readonly #engineGroup: readonly number[];
  readonly #lastPreempt: Float64Array;
  #width = FIRST_WIDTH_US;
  /** Buckets in use (the last one holds the latest time seen). */
  #used = 1;

  /**
   * @param groups instance-group names and the KV blocks of all their engines
   * @param engineGroup each engine's group index
   */
  constructor(groups: readonly { name: string; kvBlocks: number }[], engineGroup: readonly number[]) {
    this.#groups = groups.map((g) => new GroupSeries(g.name, g.kvBlocks));
    this.#engineGroup = engineGroup;
    this.#lastPreempt = new Float64Array(engineGroup.length);
  }

  /** Makes room for time `t` (µs): merges buckets pairwise while it lies past the last. */
  #reach(t: number): void {
    while (t >= MAX_BUCKETS * this.#width) {
      for (const g of this.#groups) {
        for (const a of g.arrays()) {
          for (let i = 0; i < MAX_BUCKETS / 2; i++) a[i] = a[2 * i] + a[2 * i + 1];
          a.fill(0, MAX_BUCKETS / 2);
        }
      }
      this.#width *= 2;
      this.#used = Math.ceil(this.#used / 2);
    }
    const b = Math.floor(t / this.#width) + 1;
    if (b > this.#used) this.#used = b;
  }

  /** Adds `value` × the overlap of [from, to) with each bucket to `a`. */
  #spread(a: Float64Array, from: number, to: number, value: number): void {
    const w = this.#width;
    for (let b = Math.floor(from / w); from < to; b++) {
      const end = Math.min(to, (b + 1) * w);
      a[b] += value * (end - from);
      from = end;
    }
  }

  /** The step hook: `simulate(input, { onStep: c.onStep })`. */
  readonly onStep = (s: StepRecord): void => {
    const end = s.start + s.duration;
    this.#reach(end - 1);
    const g = this.#groups[this.#engineGroup[s.engine]];
    this.#spread(g.running, s.start, end, s.seqs);
    this.#spread(g.waiting, s.start, end, s.waiting);
    // KV occupancy as the summary counts it: held by requests or set aside for them.
    this.#spread(g.kv, s.start, end, s.kvBlocks + s.reservedBlocks);
    const b = Math.floor(s.start / this.#width);
    g.steps[b]++;
    g.seqs[b] += s.seqs;
    g.preemptions[b] += s.preemptions - this.#lastPreempt[s.engine];
    this.#lastPreempt[s.engine] = s.preemptions;
    if (s.shape.prefillTokens > 0) g.prefill.add(s.shape);
    else g.decode.add(s.shape);
  };

  /** The transfer hook: `simulate(input, { onTransfer: c.onTransfer })`. */
  readonly onTransfer = (t: TransferRecord): void => {
    this.#reach(Math.max(t.start, t.end - 1));
    this.#spread(this.#groups[this.#engineGroup[t.to]].transfers, t.start, t.end, 1);
  };

  /**
   * The series, once the run has ended.
   *
   * @param requests the run's request table (for the client's rates)
   * @param endTime the run's last event, µs
   */
  result(requests: RequestTable, endTime: number): TimeSeries {
    this.#reach(Math.max(0, endTime - 1));
    const n = this.#used;
    const w = this.#width;
    const sec = w / 1e6;
    const offered = new Float64Array(n);
    const achieved = new Float64Array(n);
    // A thinned table's request stands for `stride` of them.
    const k = requests.stride ?? 1;
    for (let i = 0; i < requests.count; i++) {
      offered[Math.min(n - 1, Math.floor(requests.arrival[i] / w))] += k;
      if (requests.finish[i] >= 0) achieved[Math.min(n - 1, Math.floor(requests.finish[i] / w))] += k;
    }
    const per = (a: Float64Array, scale: number) => Array.from(a.subarray(0, n), (v) => v / scale);
    return {
      bucketSeconds: sec,
      time: Array.from({ length: n }, (_, i) => i * sec),
      offeredRate: per(offered, sec),
      achievedRate: per(achieved, sec),
      groups: this.#groups.map((g) => ({
        group: g.name,
        running: per(g.running, w),
        waiting: per(g.waiting, w),
        kvOccupancy: per(g.kv, w * Math.max(1, g.kvBlocks)),
        batch: Array.from(g.steps.subarray(0, n), (steps, i) => (steps > 0 ? g.seqs[i] / steps : null)),
        preemptions: per(g.preemptions, sec),
        transfersInFlight: per(g.transfers, w),
        ...(g.prefill.count ? { typicalPrefill: g.prefill.mean() } : {}),
        ...(g.decode.count ? { typicalDecode: g.decode.mean() } : {}),
      })),
    };
  }
}
