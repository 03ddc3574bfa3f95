/**
 * Names a scenario assertion may use for a reported number, with the unit
 * of each and which way is better.
 *
 * A per-request statistic is `<column>.<statistic>`, the statistic one of
 * AVERAGE (or mean), MIN, MAX, MEDIAN (or p50), P75, P90, P95, P99, P99.9
 * (or p999); case does not matter. The column is named one of two ways:
 *
 * - **as the user sees it** (short names): `ttft` and `e2e` count from the
 *   request's arrival, so the time `max_concurrency` held it in the client
 *   is included; `tpot`, `itl` (inter-token latency, per token) and
 *   `client_wait` (send − arrival) complete them. An assertion on these
 *   latencies (not on `client_wait`) holds only when the deployment also
 *   keeps up with its offered load: an overloaded deployment fails its
 *   latency SLOs even where the numbers look good.
 * - **as the console table prints it** (the column's console name with its
 *   unit, `TTFT(s)`, `E2E_TIME(s)`, `TPOT(s)`, or `ttft_from_send`,
 *   `e2e_from_send`): measured from the client's send, as vLLM's and
 *   SGLang's benchmarks do, and never gated on load. Validation against
 *   published benchmark figures uses these.
 *
 * Also `ttft_from_arrival`, `e2e_from_arrival` (= `ttft`, `e2e`), the token
 * columns `input_tokens`, `output_tokens`, `output_token_throughput`.
 *
 * An overall-summary key is written alone, with or without its unit
 * (`request_throughput` or `request_throughput(req/s)`). Run-level ext
 * figures: `offered_rate`, `achieved_rate`, `keeps_up` (1 or 0),
 * `queue_growth`, `goodput`, `slo_attainment`, `batch_occupancy`,
 * `kv_occupancy`, `kv_occupancy_peak`, `mfu`, `mbu`, `preemptions`,
 * `unservable_requests`, `simulated_seconds`, `prefix_hit_rate` (prompt
 * tokens found in the prefix cache / prompt tokens of requests that looked),
 * `load_imbalance` (requests the busiest engine served / the mean).
 *
 * @module
 */
import {
  ALL_STATISTICS,
  columnOf,
  EXT_COLUMNS,
  METRIC_COLUMNS,
  OVERALL_KEYS,
  PERCENTILES,
} from "../metrics/summary.ts";
import type { ExtColumn, MetricColumn, OverallKey, Percentile, Statistic, Summary } from "../metrics/summary.ts";

/** What a metric is measured in. */
export type MetricUnit = "s" | "req/s" | "tok/s" | "tokens" | "fraction" | "count";

/** Which direction is an improvement (baselines pass it one-sided). */
export type Better = "lower" | "higher" | "none";

/** A resolved metric: its display name, how to read it, its unit and direction. */
export interface MetricRef {
  /** Canonical name (`TTFT_FROM_ARRIVAL(s).P99`, `request_throughput(req/s)`). */
  readonly name: string;
  /** Reads the value (NaN when undefined for this run). */
  readonly read: (s: Summary) => number;
  /** Its unit. */
  readonly unit: MetricUnit;
  /** Which way is better. */
  readonly better: Better;
  /** A latency as the user sees it: an SLO on it holds only when the deployment keeps up. */
  readonly gated: boolean;
  /** A percentile's 95% interval in a run, from its order statistics (percentiles only). */
  readonly interval?: (s: Summary) => readonly [number, number] | undefined;
}

type Column = MetricColumn | ExtColumn;

interface ColumnInfo {
  readonly column: Column;
  readonly unit: MetricUnit;
  readonly better: Better;
  readonly gated: boolean;
}

const COLUMN_UNITS: Record<Column, [MetricUnit, Better]> = {
  "E2E_TIME(s)": ["s", "lower"],
  "TTFT(s)": ["s", "lower"],
  "TPOT(s)": ["s", "lower"],
  "INPUT_TOKENS": ["tokens", "none"],
  "OUTPUT_TOKENS": ["tokens", "none"],
  "OUTPUT_TOKEN_THROUGHPUT(tok/s)": ["tok/s", "higher"],
  "ITL(s)": ["s", "lower"],
  "CLIENT_WAIT(s)": ["s", "lower"],
  "TTFT_FROM_ARRIVAL(s)": ["s", "lower"],
  "E2E_FROM_ARRIVAL(s)": ["s", "lower"],
};

const info = (column: Column, gated: boolean): ColumnInfo => ({
  column,
  unit: COLUMN_UNITS[column][0],
  better: COLUMN_UNITS[column][1],
  gated,
});

/** Console names (with their unit, any case): the figures as printed, never gated. */
const BY_CONSOLE_NAME = new Map<string, ColumnInfo>(
  [...METRIC_COLUMNS, ...EXT_COLUMNS].map((c) => [c.toLowerCase(), info(c, false)]),
);

/** Short names: latencies as the user sees them. */
const BY_SHORT_NAME = new Map<string, ColumnInfo>([
  ["ttft", info("TTFT_FROM_ARRIVAL(s)", true)],
  ["ttft_from_arrival", info("TTFT_FROM_ARRIVAL(s)", true)],
  ["e2e", info("E2E_FROM_ARRIVAL(s)", true)],
  ["e2e_time", info("E2E_FROM_ARRIVAL(s)", true)],
  ["e2e_from_arrival", info("E2E_FROM_ARRIVAL(s)", true)],
  ["tpot", info("TPOT(s)", true)],
  ["itl", info("ITL(s)", true)],
  ["client_wait", info("CLIENT_WAIT(s)", false)],
  ["ttft_from_send", info("TTFT(s)", false)],
  ["e2e_from_send", info("E2E_TIME(s)", false)],
  ["input_tokens", info("INPUT_TOKENS", false)],
  ["output_tokens", info("OUTPUT_TOKENS", false)],
  ["output_token_throughput", info("OUTPUT_TOKEN_THROUGHPUT(tok/s)", false)],
]);

const STAT_BY_NAME = new Map<string, Statistic>(ALL_STATISTICS.map((s) => [s.toLowerCase(), s]));
STAT_BY_NAME.set("mean", "AVERAGE");
STAT_BY_NAME.set("avg", "AVERAGE");
STAT_BY_NAME.set("p50", "MEDIAN");
STAT_BY_NAME.set("p999", "P99.9");

const OVERALL_UNITS: Record<OverallKey, [MetricUnit, Better]> = {
  "benchmark_duration(s)": ["s", "none"],
  "total_requests": ["count", "none"],
  "request_throughput(req/s)": ["req/s", "higher"],
  "total_input_tokens": ["tokens", "none"],
  "input_token_throughput(tok/s)": ["tok/s", "higher"],
  "total_output_tokens": ["tokens", "none"],
  "output_token_throughput(tok/s)": ["tok/s", "higher"],
};

const strip = (s: string) => s.toLowerCase().replace(/\(.*\)$/, "");
const OVERALL_BY_NAME = new Map<string, OverallKey>(OVERALL_KEYS.map((k) => [strip(k), k]));

/** Run-level ext figures an assertion may name. */
const EXTRA: Record<string, { read: (s: Summary) => number; unit: MetricUnit; better: Better }> = {
  preemptions: { read: (s) => s.preemptions, unit: "count", better: "lower" },
  unservable_requests: { read: (s) => s.unservable.reduce((n, u) => n + u.count, 0), unit: "count", better: "lower" },
  simulated_seconds: { read: (s) => s.simulatedSeconds, unit: "s", better: "none" },
  offered_rate: { read: (s) => s.load.offeredRate, unit: "req/s", better: "none" },
  achieved_rate: { read: (s) => s.load.achievedRate, unit: "req/s", better: "higher" },
  keeps_up: { read: (s) => (s.load.keepsUp ? 1 : 0), unit: "count", better: "higher" },
  queue_growth: { read: (s) => s.load.queueGrowth, unit: "fraction", better: "lower" },
  goodput: { read: (s) => s.goodput?.rate ?? NaN, unit: "req/s", better: "higher" },
  slo_attainment: { read: (s) => s.goodput?.attainment ?? NaN, unit: "fraction", better: "higher" },
  batch_occupancy: { read: (s) => s.headroom.batchOccupancy, unit: "fraction", better: "none" },
  kv_occupancy: { read: (s) => s.headroom.kvOccupancy, unit: "fraction", better: "none" },
  kv_occupancy_peak: { read: (s) => s.headroom.kvOccupancyPeak, unit: "fraction", better: "none" },
  mfu: { read: (s) => s.headroom.mfu, unit: "fraction", better: "none" },
  mbu: { read: (s) => s.headroom.mbu, unit: "fraction", better: "none" },
  prefix_hit_rate: {
    read: (s) => (s.prefixCache ? s.prefixCache.hitTokens / s.prefixCache.promptTokens : NaN),
    unit: "fraction",
    better: "higher",
  },
  host_hit_rate: {
    read: (
      s,
    ) => (s.prefixCache?.hostHitTokens !== undefined ? s.prefixCache.hostHitTokens / s.prefixCache.promptTokens : NaN),
    unit: "fraction",
    better: "higher",
  },
  load_imbalance: { read: (s) => s.loadImbalance, unit: "fraction", better: "lower" },
};

/** The run-level ext figure names. */
export const RUN_METRICS: readonly string[] = Object.keys(EXTRA);

/** Statistic spellings in suggestions: the canonical ones, lower case. */
const STAT_SPELLINGS = [...ALL_STATISTICS.map((s) => s.toLowerCase()), "mean", "p50"];

/** Every spelling accepted, for "did you mean" suggestions and the JSON Schema. */
export const METRIC_KEY_NAMES: readonly string[] = [
  ...[...BY_SHORT_NAME.keys()].flatMap((c) => STAT_SPELLINGS.map((s) => `${c}.${s}`)),
  ...[...METRIC_COLUMNS, ...EXT_COLUMNS].flatMap((c) => ALL_STATISTICS.map((s) => `${c}.${s}`)),
  ...OVERALL_BY_NAME.keys(),
  ...OVERALL_KEYS,
  ...RUN_METRICS,
];

/** Splits `<column>.<statistic>`; the statistic may hold a dot itself (`p99.9`). */
function splitStat(k: string): [string, Statistic] | undefined {
  const m = /^(.+?)\.(p99\.9|[a-z0-9]+)$/i.exec(k);
  const stat = m && STAT_BY_NAME.get(m[2].toLowerCase());
  return m && stat ? [m[1], stat] : undefined;
}

/**
 * Resolves an assertion key.
 *
 * @returns the metric, or undefined when the name is unknown
 */
export function resolveMetric(key: string): MetricRef | undefined {
  // Exactly as written: a key with spaces around it is no metric (as the JSON Schema's pattern says too).
  const k = key;
  const split = splitStat(k);
  if (split) {
    const [c, stat] = split;
    const col = BY_CONSOLE_NAME.get(c.toLowerCase()) ?? BY_SHORT_NAME.get(c.toLowerCase());
    if (col) {
      const percentile = (PERCENTILES as readonly string[]).includes(stat) ? stat as Percentile : undefined;
      return {
        name: `${col.column}.${stat}`,
        read: (s) => columnOf(s, col.column)[stat],
        unit: col.unit,
        better: col.better,
        gated: col.gated,
        ...(percentile ? { interval: (s: Summary) => s.percentileCi[col.column]?.[percentile] } : {}),
      };
    }
  }
  const overall = OVERALL_BY_NAME.get(strip(k));
  if (overall) {
    const [unit, better] = OVERALL_UNITS[overall];
    return { name: overall, read: (s) => s.overall[overall], unit, better, gated: false };
  }
  const extra = Object.hasOwn(EXTRA, k.toLowerCase()) ? EXTRA[k.toLowerCase()] : undefined;
  if (extra) return { name: k.toLowerCase(), ...extra, gated: false };
  return undefined;
}
