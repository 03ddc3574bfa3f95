/**
 * Names a scenario assertion may use for a reported number.
 *
 * A per-request statistic is `<column>.<statistic>`: the column by its
 * console name (`TTFT(s)`) or its short name (`ttft`, `tpot`, `e2e`,
 * `e2e_time`, `input_tokens`, `output_tokens`, `output_token_throughput`),
 * the statistic one of AVERAGE (or mean), MIN, MAX, MEDIAN (or p50), P75,
 * P90, P99; case does not matter. An overall-summary key is written alone,
 * with or without its unit (`request_throughput` or
 * `request_throughput(req/s)`); `preemptions` and `unservable_requests` are
 * also available.
 *
 * @module
 */
import { METRIC_COLUMNS, OVERALL_KEYS, STATISTICS } from "../metrics/summary.ts";
import type { MetricColumn, OverallKey, Statistic, Summary } from "../metrics/summary.ts";

const strip = (s: string) => s.toLowerCase().replace(/\(.*\)$/, "");

const COLUMN_BY_NAME = new Map<string, MetricColumn>(METRIC_COLUMNS.map((c) => [strip(c), c]));
COLUMN_BY_NAME.set("e2e", "E2E_TIME(s)");

const STAT_BY_NAME = new Map<string, Statistic>(STATISTICS.map((s) => [s.toLowerCase(), s]));
STAT_BY_NAME.set("mean", "AVERAGE");
STAT_BY_NAME.set("avg", "AVERAGE");
STAT_BY_NAME.set("p50", "MEDIAN");

const OVERALL_BY_NAME = new Map<string, OverallKey>(OVERALL_KEYS.map((k) => [strip(k), k]));

/** Extra run-level numbers (ext) an assertion may name. */
const EXTRA: Record<string, (s: Summary) => number> = {
  preemptions: (s) => s.preemptions,
  unservable_requests: (s) => s.unservable.reduce((n, u) => n + u.count, 0),
  simulated_seconds: (s) => s.simulatedSeconds,
};

/** Every spelling accepted, for "did you mean" suggestions. */
export const METRIC_KEY_NAMES: readonly string[] = [
  ...[...COLUMN_BY_NAME.keys()].flatMap((c) => [...STAT_BY_NAME.keys()].map((s) => `${c}.${s}`)),
  ...METRIC_COLUMNS.flatMap((c) => STATISTICS.map((s) => `${c}.${s}`)),
  ...OVERALL_BY_NAME.keys(),
  ...OVERALL_KEYS,
  ...Object.keys(EXTRA),
];

/** A resolved metric: its display name and how to read it from a summary. */
export interface MetricRef {
  /** Canonical name (`TTFT(s).P99`, `request_throughput(req/s)`). */
  readonly name: string;
  /** Reads the value (NaN when undefined for this run). */
  readonly read: (s: Summary) => number;
}

/**
 * Resolves an assertion key.
 *
 * @returns the metric, or undefined when the name is unknown
 */
export function resolveMetric(key: string): MetricRef | undefined {
  const k = key.trim();
  const dot = k.lastIndexOf(".");
  if (dot > 0) {
    const col = COLUMN_BY_NAME.get(strip(k.slice(0, dot)));
    const stat = STAT_BY_NAME.get(k.slice(dot + 1).toLowerCase());
    if (col && stat) return { name: `${col}.${stat}`, read: (s) => s.perMetric[col][stat] };
  }
  const overall = OVERALL_BY_NAME.get(strip(k));
  if (overall) return { name: overall, read: (s) => s.overall[overall] };
  const extra = EXTRA[k.toLowerCase()];
  if (extra) return { name: k.toLowerCase(), read: extra };
  return undefined;
}
