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
 * @module
 */
import type { SimulationResult } from "../engine/types.ts";
import { quantileSorted } from "./percentile.ts";

/** Per-request columns, in the guide's order. */
export const METRIC_COLUMNS = [
  "E2E_TIME(s)",
  "TTFT(s)",
  "TPOT(s)",
  "INPUT_TOKENS",
  "OUTPUT_TOKENS",
  "OUTPUT_TOKEN_THROUGHPUT(tok/s)",
] as const;

/** Statistics of each column, in the guide's order. */
export const STATISTICS = ["AVERAGE", "MIN", "MAX", "MEDIAN", "P75", "P90", "P99"] as const;

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

/** A column name. */
export type MetricColumn = (typeof METRIC_COLUMNS)[number];
/** A statistic name. */
export type Statistic = (typeof STATISTICS)[number];
/** An overall-summary key. */
export type OverallKey = (typeof OVERALL_KEYS)[number];

/** The statistics of one column; NaN where the column has no defined value. */
export type ColumnStats = Record<Statistic, number>;

/** The numbers the report shows. */
export interface Summary {
  /** Per-request statistics by column. */
  readonly perMetric: Record<MetricColumn, ColumnStats>;
  /** The overall summary by key. */
  readonly overall: Record<OverallKey, number>;
  /** Requests that could never be served, by reason. */
  readonly unservable: ReadonlyArray<{ reason: string; count: number }>;
  /** Σ preemptions over requests. */
  readonly preemptions: number;
  /** Simulated time of the last event, seconds. */
  readonly simulatedSeconds: number;
  /** Prefix-cache hits, when prefix caching looked anything up. */
  readonly prefixCache?: PrefixCacheStats;
}

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
}

function columnStats(values: Float64Array): ColumnStats {
  if (values.length === 0) {
    return { AVERAGE: NaN, MIN: NaN, MAX: NaN, MEDIAN: NaN, P75: NaN, P90: NaN, P99: NaN };
  }
  let sum = 0;
  for (const v of values) sum += v;
  values.sort();
  return {
    AVERAGE: sum / values.length,
    MIN: values[0],
    MAX: values[values.length - 1],
    MEDIAN: quantileSorted(values, 0.5),
    P75: quantileSorted(values, 0.75),
    P90: quantileSorted(values, 0.9),
    P99: quantileSorted(values, 0.99),
  };
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
    },
  };
}

/**
 * Computes the per-request statistics and the overall summary of a run.
 *
 * @param result a finished simulation
 */
export function summarize(result: SimulationResult): Summary {
  const t = result.requests;
  const n = t.count;
  const cols = METRIC_COLUMNS.map(() => new Float64Array(n));
  const len = [0, 0, 0, 0, 0, 0];
  let firstSend = Infinity;
  let lastFinish = -Infinity;
  let done = 0;
  let inTok = 0;
  let outTok = 0;
  let preemptions = 0;
  for (let i = 0; i < n; i++) {
    if (t.engine[i] < 0 || t.finish[i] < 0) continue;
    done++;
    const e2e = (t.finish[i] - t.send[i]) / 1e6;
    const ttft = (t.firstToken[i] - t.send[i]) / 1e6;
    const out = t.output[i];
    cols[0][len[0]++] = e2e;
    cols[1][len[1]++] = ttft;
    if (out > 1) cols[2][len[2]++] = (e2e - ttft) / (out - 1);
    cols[3][len[3]++] = t.input[i];
    cols[4][len[4]++] = out;
    if (e2e > ttft) cols[5][len[5]++] = out / (e2e - ttft);
    inTok += t.input[i];
    outTok += out;
    preemptions += t.preemptions[i];
    if (t.send[i] < firstSend) firstSend = t.send[i];
    if (t.finish[i] > lastFinish) lastFinish = t.finish[i];
  }
  const perMetric = Object.fromEntries(
    METRIC_COLUMNS.map((c, j) => [c, columnStats(cols[j].subarray(0, len[j]))]),
  ) as Record<MetricColumn, ColumnStats>;
  const duration = done > 0 ? (lastFinish - firstSend) / 1e6 : 0;
  const per = (x: number) => (duration > 0 ? x / duration : 0);
  return {
    perMetric,
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
    simulatedSeconds: result.endTime / 1e6,
    ...cacheStats(result),
  };
}
