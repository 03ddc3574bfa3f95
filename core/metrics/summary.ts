/**
 * Per-request metrics and the overall summary, with the contract's
 * definitions (those of vLLM's `benchmark_serving` and SGLang's
 * `bench_serving`):
 *
 * - TTFT = first token − send; E2E = last token − send;
 * - TPOT = (E2E − TTFT) / (output − 1), undefined (left out) for 1-token outputs;
 * - OUTPUT_TOKEN_THROUGHPUT = output / (E2E − TTFT), left out where undefined;
 * - benchmark_duration = last completion − first send.
 *
 * Beside them (ext): latencies as the user sees them, from arrival (the
 * client's own wait under `max_concurrency` included), the client wait,
 * inter-token latency per token, offered against achieved load, goodput,
 * and how much of the engines' batch, KV cache, compute and bandwidth the
 * run used.
 *
 * @module
 */
import type { EngineStats, RequestTable, SimulationResult } from "../engine/types.ts";
import { quantileAt, quantileCounted, quantileRanks, quantileSorted, valueAtRank } from "./percentile.ts";
import { loadStats } from "./load.ts";
import type { LoadStats } from "./load.ts";
import { METRIC_COLUMNS, RequestStream } from "./stream.ts";
import type { GoodputSlos, StreamColumn } from "./stream.ts";
import type { LatencyDistribution } from "./sketch.ts";
import { EXACT_UP_TO, SKETCH_RELATIVE_ACCURACY } from "./sketch.ts";

export type { GoodputSlos } from "./stream.ts";

export { METRIC_COLUMNS } from "./stream.ts";

/** Statistics of each column, in the guide's order (the console table's rows). */
export const STATISTICS = ["AVERAGE", "MIN", "MAX", "MEDIAN", "P75", "P90", "P99"] as const;

/** Every statistic computed (ext: P95 and P99.9 besides the guide's). */
export const ALL_STATISTICS = ["AVERAGE", "MIN", "MAX", "MEDIAN", "P75", "P90", "P95", "P99", "P99.9"] as const;

/**
 * Per-request (or per-token) distributions beyond the guide's columns (ext):
 *
 * - ITL: the gap before each output token after the first, as a streaming
 *   client sees it (MTP tokens accepted together arrive together: one gap);
 * - CLIENT_WAIT: send − arrival, the time `max_concurrency` held a request;
 * - TTFT_FROM_ARRIVAL, E2E_FROM_ARRIVAL: TTFT and E2E as the user sees
 *   them, counted from arrival.
 */
export const EXT_COLUMNS = ["ITL(s)", "CLIENT_WAIT(s)", "TTFT_FROM_ARRIVAL(s)", "E2E_FROM_ARRIVAL(s)"] as const;

/** Overall-summary keys, in the guide's order. */
export const OVERALL_KEYS = [
  "benchmark_duration(s)",
  "total_requests",
  "request_throughput(req/s)",
  "total_input_tokens",
  "input_token_throughput(tok/s)",
  "total_output_tokens",
  "output_token_throughput(tok/s)",
] as const;

/** The latency columns whose CDF a report draws. */
export const CDF_COLUMNS: readonly (MetricColumn | ExtColumn)[] = [
  "TTFT(s)",
  "TPOT(s)",
  "ITL(s)",
  "E2E_TIME(s)",
  "CLIENT_WAIT(s)",
];
/** A column name. */
export type MetricColumn = (typeof METRIC_COLUMNS)[number];
/** An ext column name. */
export type ExtColumn = (typeof EXT_COLUMNS)[number];
/** A statistic name. */
export type Statistic = (typeof ALL_STATISTICS)[number];
/** An overall-summary key. */
export type OverallKey = (typeof OVERALL_KEYS)[number];

/** The statistics of one column; NaN where the column has no defined value. */
export type ColumnStats = Record<Statistic, number>;

/** Goodput (DistServe; vLLM's `--goodput`): the rate of requests that meet every per-request SLO. */
export interface GoodputStats {
  /** The SLOs. */
  readonly slos: GoodputSlos;
  /** Requests meeting all of them. */
  readonly met: number;
  /** met / benchmark_duration, req/s. */
  readonly rate: number;
  /** met / all requests (unservable ones included). */
  readonly attainment: number;
}

/** How much of what the engines have the run used (time averages over the run, from the first arrival). */
export interface Headroom {
  /** Mean sequences in a batch / max_num_seqs (idle time counts as empty). */
  readonly batchOccupancy: number;
  /** Mean KV blocks held by requests or set aside for them / KV blocks (cached, unreferenced blocks are free). */
  readonly kvOccupancy: number;
  /** Most KV blocks held by requests or set aside for them at once / KV blocks, the fullest engine. */
  readonly kvOccupancyPeak: number;
  /** Mean cached KV blocks no request references (reclaimable at once) / KV blocks. */
  readonly kvCached: number;
  /** Share of the time the engines had a step running (wall time with a step / engines × window). */
  readonly busyFraction: number;
  /** Model FLOPs / peak FLOPs of all devices (NaN when the cost model does not count FLOPs). */
  readonly mfu: number;
  /** HBM bytes moved / peak bandwidth of all devices (NaN when not counted). */
  readonly mbu: number;
}

/** The numbers the report shows. */
export interface Summary {
  /** Per-request statistics by column. */
  readonly perMetric: Record<MetricColumn, ColumnStats>;
  /** Ext distributions by column. */
  readonly extMetric: Record<ExtColumn, ColumnStats>;
  /** Offered against achieved load. */
  readonly load: LoadStats;
  /** Batch, KV, compute and bandwidth use. */
  readonly headroom: Headroom;
  /** Goodput, when per-request SLOs were given. */
  readonly goodput?: GoodputStats;
  /** The overall summary by key. */
  readonly overall: Record<OverallKey, number>;
  /** Requests that could never be served, by reason. */
  readonly unservable: ReadonlyArray<{ reason: string; count: number }>;
  /** Σ preemptions over requests. */
  readonly preemptions: number;
  /**
   * Requests the busiest engine served / the engines' mean (1: even; NaN
   * when none served): how evenly routing spread the work.
   */
  readonly loadImbalance: number;
  /** Simulated time of the last event, seconds. */
  readonly simulatedSeconds: number;
  /** Prefix-cache hits, when prefix caching looked anything up. */
  readonly prefixCache?: PrefixCacheStats;
  /** Evenly spaced quantiles of the {@link CDF_COLUMNS}, seconds (when `cdfPoints` was given). */
  readonly cdf?: Partial<Record<MetricColumn | ExtColumn, number[]>>;
  /**
   * The 95% interval of each percentile of each column with values, from
   * its order statistics ({@link quantileRanks}: distribution-free, the
   * run's requests taken as independent draws).
   */
  readonly percentileCi: PercentileIntervals;
  /**
   * Present when the run had more requests than its exact count: its
   * percentiles come from quantile sketches, each within `relativeAccuracy`
   * of the exact value (MIN, MAX and AVERAGE stay exact).
   */
  readonly sketch?: { readonly requests: number; readonly exactUpTo: number; readonly relativeAccuracy: number };
}

/** The percentiles that carry an interval (MIN, MAX and AVERAGE do not). */
export const PERCENTILES = ["MEDIAN", "P75", "P90", "P95", "P99", "P99.9"] as const;

/** A percentile's name. */
export type Percentile = (typeof PERCENTILES)[number];

/** Per column, each percentile's 95% interval [low, high]. */
export type PercentileIntervals = Partial<
  Record<MetricColumn | ExtColumn, Record<Percentile, readonly [number, number]>>
>;

/** What prefix caching found. */
export interface PrefixCacheStats {
  /** Prompt blocks of the requests admitted with a cacheable prefix. */
  readonly promptBlocks: number;
  /** Of which were found cached. */
  readonly hitBlocks: number;
  /** Prompt tokens of those requests. */
  readonly promptTokens: number;
  /** Of which were found cached (not prefilled). */
  readonly hitTokens: number;
  /** Of which were loaded from a host tier (KV offload) instead of prefilled; present with a host tier. */
  readonly hostHitTokens?: number;
}

/** The statistics of a column of either table (the guide's or the ext one). */
export function columnOf(s: Pick<Summary, "perMetric" | "extMetric">, column: MetricColumn | ExtColumn): ColumnStats {
  return (s.perMetric as Record<string, ColumnStats>)[column] ?? (s.extMetric as Record<string, ColumnStats>)[column];
}

/** Quantile of each statistic (AVERAGE is computed apart). */
const QUANTILE: Record<Exclude<Statistic, "AVERAGE">, number> = {
  MIN: 0,
  MAX: 1,
  MEDIAN: 0.5,
  P75: 0.75,
  P90: 0.9,
  P95: 0.95,
  P99: 0.99,
  "P99.9": 0.999,
};

function statsOf(mean: number, quantile: (q: number) => number): ColumnStats {
  const out = { AVERAGE: mean } as ColumnStats;
  for (const st of ALL_STATISTICS) if (st !== "AVERAGE") out[st] = quantile(QUANTILE[st]);
  return out;
}

/** `points` evenly spaced quantiles (0, 1/(points-1), …, 1) of a column: its CDF, for charts. */
function cdfOf(quantile: (q: number) => number, points: number): number[] {
  return Array.from({ length: points }, (_, i) => quantile(i / (points - 1)));
}

/** Where {@link summarize} puts each column's CDF when asked for (`cdfPoints`). */
type CdfSink = Partial<Record<MetricColumn | ExtColumn, number[]>> | undefined;

function columnStats(
  d: LatencyDistribution,
  cdf?: { sink: CdfSink; column: MetricColumn | ExtColumn; points: number },
  ci?: { sink: PercentileIntervals; column: MetricColumn | ExtColumn },
): ColumnStats {
  const n = d.count;
  if (n === 0) return statsOf(NaN, () => NaN);
  let quantile: (q: number) => number;
  let at: (rank: number) => number;
  if (d.exact) {
    const values = d.sortedValues();
    quantile = (q) => quantileSorted(values, q);
    at = (rank) => values[rank];
  } else {
    // numpy's linear interpolation between the two closest ranks, each within the sketch's accuracy.
    at = (rank) => d.valueAtRank(rank);
    quantile = (q) => quantileAt(n, at, q);
  }
  if (cdf?.sink) cdf.sink[cdf.column] = cdfOf(quantile, cdf.points);
  if (ci) ci.sink[ci.column] = intervalsOf(n, at);
  return statsOf(d.sum / n, quantile);
}

/** Each percentile's 95% interval over `n` sorted samples, `at(rank)` the sample of a 0-based rank. */
function intervalsOf(n: number, at: (rank: number) => number): Record<Percentile, readonly [number, number]> {
  const out = {} as Record<Percentile, readonly [number, number]>;
  for (const p of PERCENTILES) {
    const [lo, hi] = quantileRanks(n, QUANTILE[p]);
    out[p] = [at(lo), at(hi)];
  }
  return out;
}

/** Statistics of gaps counted by integer µs value, in seconds. */
function countedStats(
  all: ReadonlyMap<number, number>,
  sink?: CdfSink,
  points = 0,
  ci?: PercentileIntervals,
): ColumnStats {
  if (all.size === 0) return statsOf(NaN, () => NaN);
  // Filled by a loop: Float64Array.from(iterator) took 7× as long (3,000 keys: 360 µs against 51 µs, Deno 2.9.6).
  const values = new Float64Array(all.size);
  let k = 0;
  for (const v of all.keys()) values[k++] = v;
  values.sort();
  const cumulative = new Float64Array(values.length);
  let n = 0, sum = 0;
  for (let i = 0; i < values.length; i++) {
    const c = all.get(values[i])!;
    n += c;
    sum += values[i] * c;
    cumulative[i] = n;
  }
  const quantile = (q: number) => quantileCounted(values, cumulative, q) / 1e6;
  if (sink) sink["ITL(s)"] = cdfOf(quantile, points);
  if (ci) ci["ITL(s)"] = intervalsOf(n, (rank) => valueAtRank(values, cumulative, rank) / 1e6);
  return statsOf(sum / n / 1e6, quantile);
}

function headroom(engines: readonly EngineStats[], t: RequestTable, endTime: number): Headroom {
  return poolHeadroom(engines, endTime - (t.count > 0 ? t.arrival[0] : 0));
}

/**
 * Time-averaged use of a set of engines over `window` µs.
 *
 * @param engines the engines' counters
 * @param window µs the averages are taken over
 */
export function poolHeadroom(engines: readonly EngineStats[], window: number): Headroom {
  let seq = 0, seqCap = 0, kv = 0, kvCap = 0, peak = 0, flops = 0, flopCap = 0, bytes = 0, byteCap = 0;
  let cached = 0, busy = 0;
  for (const e of engines) {
    seq += e.seqTime;
    seqCap += e.maxSeqs * window;
    kv += e.kvTime;
    cached += e.kvCachedTime;
    busy += e.busy;
    kvCap += e.kvBlocks * window;
    if (e.kvBlocks > 0 && e.peakKvBlocks / e.kvBlocks > peak) peak = e.peakKvBlocks / e.kvBlocks;
    flops += e.flops;
    flopCap += e.peakFlops * window / 1e6;
    bytes += e.hbmBytes;
    byteCap += e.peakBandwidth * window / 1e6;
  }
  const ratio = (a: number, b: number) => (b > 0 ? a / b : 0);
  return {
    batchOccupancy: ratio(seq, seqCap),
    kvOccupancy: ratio(kv, kvCap),
    kvOccupancyPeak: peak,
    kvCached: ratio(cached, kvCap),
    busyFraction: ratio(busy, engines.length * window),
    mfu: flopCap > 0 ? flops / flopCap : NaN,
    mbu: byteCap > 0 ? bytes / byteCap : NaN,
  };
}

/** Requests the busiest engine served / the mean over the engines (NaN when none served). */
function imbalance(engines: SimulationResult["engines"]): number {
  let max = 0, sum = 0;
  for (const e of engines) {
    sum += e.served;
    if (e.served > max) max = e.served;
  }
  return sum > 0 ? max / (sum / engines.length) : NaN;
}

function cacheStats(result: SimulationResult): { prefixCache?: PrefixCacheStats } {
  const e = result.engines;
  const promptBlocks = e.reduce((s, x) => s + x.cachePromptBlocks, 0);
  if (promptBlocks === 0) return {};
  return {
    prefixCache: {
      promptBlocks,
      hitBlocks: e.reduce((s, x) => s + x.cacheHitBlocks, 0),
      promptTokens: e.reduce((s, x) => s + x.cachePromptTokens, 0),
      hitTokens: e.reduce((s, x) => s + x.cacheHitTokens, 0),
      ...(e.some((x) => x.cacheHostHitTokens !== undefined)
        ? { hostHitTokens: e.reduce((s, x) => s + (x.cacheHostHitTokens ?? 0), 0) }
        : {}),
    },
  };
}

/** Options of {@link summarize}. */
export interface SummaryOptions {
  /** Per-request SLOs: when given, goodput is computed. */
  readonly goodput?: GoodputSlos;
  /** Quantiles to keep of each latency column for CDF charts (0: none; at least 2 otherwise). */
  readonly cdfPoints?: number;
  /**
   * The run's figures as they streamed in (a run longer than its exact
   * count, whose table holds every `stride`-th request only); its goodput
   * SLOs are the summary's. Without one, the table's figures are read.
   */
  readonly stream?: RequestStream;
}

/**
 * Computes the per-request statistics and the overall summary of a run.
 *
 * @param result a finished simulation
 * @param options goodput SLOs
 *
 * @example Summarize a simulation
 * ```ts
 * import { runSources, summarize, YamlSource } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", c));
 * const s = summarize(out.result);
 * assert.equal(s.overall.total_requests, 4);
 * assert.equal(s.perMetric.OUTPUT_TOKENS.AVERAGE, 8);
 * assert.ok(s.perMetric["TTFT(s)"].P99 < s.perMetric["E2E_TIME(s)"].P99);
 * ```
 */
export function summarize(result: SimulationResult, options: SummaryOptions = {}): Summary {
  const t = result.requests;
  const stream = options.stream ?? streamOf(t, options.goodput);
  const slo = options.stream ? options.stream.slo : options.goodput;
  const n = stream.requests;
  const { done, waited, met, preemptions, firstSend, lastFinish } = stream;
  const inTok = stream.inputTokens;
  const outTok = stream.outputTokens;
  const col = (c: MetricColumn | ExtColumn) => stream.column(c as StreamColumn);
  const points = options.cdfPoints ?? 0;
  const sink: CdfSink = points >= 2 ? {} : undefined;
  const latency = (column: MetricColumn | ExtColumn) => ({
    sink: CDF_COLUMNS.includes(column) ? sink : undefined,
    column,
    points,
  });
  const ci: PercentileIntervals = {};
  const perMetric = Object.fromEntries(
    METRIC_COLUMNS.map((c) => [c, columnStats(col(c), latency(c), { sink: ci, column: c })]),
  ) as Record<MetricColumn, ColumnStats>;
  const duration = done > 0 ? (lastFinish - firstSend) / 1e6 : 0;
  const per = (x: number) => (duration > 0 ? x / duration : 0);
  const extMetric: Record<ExtColumn, ColumnStats> = {
    "ITL(s)": countedStats(result.itl, sink, points, ci),
    "CLIENT_WAIT(s)": columnStats(col("CLIENT_WAIT(s)"), latency("CLIENT_WAIT(s)"), {
      sink: ci,
      column: "CLIENT_WAIT(s)",
    }),
    // Nobody waited on the client: from arrival is from send, value for value.
    "TTFT_FROM_ARRIVAL(s)": waited
      ? columnStats(col("TTFT_FROM_ARRIVAL(s)"), undefined, { sink: ci, column: "TTFT_FROM_ARRIVAL(s)" })
      : perMetric["TTFT(s)"],
    "E2E_FROM_ARRIVAL(s)": waited
      ? columnStats(col("E2E_FROM_ARRIVAL(s)"), undefined, { sink: ci, column: "E2E_FROM_ARRIVAL(s)" })
      : perMetric["E2E_TIME(s)"],
  };
  if (!waited) {
    if (ci["TTFT(s)"]) ci["TTFT_FROM_ARRIVAL(s)"] = ci["TTFT(s)"];
    if (ci["E2E_TIME(s)"]) ci["E2E_FROM_ARRIVAL(s)"] = ci["E2E_TIME(s)"];
  }
  return {
    perMetric,
    extMetric,
    load: loadStats(t),
    headroom: headroom(result.engines, t, result.endTime),
    ...(slo ? { goodput: { slos: slo, met, rate: per(met), attainment: n > 0 ? met / n : 0 } } : {}),
    overall: {
      "benchmark_duration(s)": duration,
      "total_requests": done,
      "request_throughput(req/s)": per(done),
      "total_input_tokens": inTok,
      "input_token_throughput(tok/s)": per(inTok),
      "total_output_tokens": outTok,
      "output_token_throughput(tok/s)": per(outTok),
    },
    unservable: [...result.unservable].map(([reason, count]) => ({ reason, count })),
    preemptions,
    loadImbalance: imbalance(result.engines),
    simulatedSeconds: result.endTime / 1e6,
    ...cacheStats(result),
    ...(sink ? { cdf: sink } : {}),
    percentileCi: ci,
    ...(stream.exact ? {} : {
      sketch: { requests: n, exactUpTo: stream.exactUpTo, relativeAccuracy: SKETCH_RELATIVE_ACCURACY },
    }),
  };
}

/**
 * A table's figures as a stream, in request order (every column exact when
 * the table holds no more than `exactUpTo` requests).
 *
 * @param t a run's table
 * @param slo goodput SLOs
 * @param exactUpTo values each column keeps exactly (default: the whole table)
 */
export function streamOf(
  t: RequestTable,
  slo?: GoodputSlos,
  exactUpTo: number = Math.max(t.count, EXACT_UP_TO),
): RequestStream {
  const n = t.count;
  const stream = new RequestStream(exactUpTo, Math.min(n, exactUpTo), slo);
  const row = { arrival: 0, send: 0, firstToken: 0, finish: 0, input: 0, output: 0, preemptions: 0, engine: 0 };
  for (let i = 0; i < n; i++) {
    row.arrival = t.arrival[i];
    row.send = t.send[i];
    row.firstToken = t.firstToken[i];
    row.finish = t.finish[i];
    row.input = t.input[i];
    row.output = t.output[i];
    row.preemptions = t.preemptions[i];
    row.engine = t.engine[i];
    stream.add(row);
  }
  return stream;
}
