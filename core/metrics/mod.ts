/**
 * Metrics: per-request latencies, their statistics and the overall summary.
 *
 * @module
 */
export { quantileSorted } from "./percentile.ts";
export { METRIC_COLUMNS, OVERALL_KEYS, STATISTICS, summarize } from "./summary.ts";
export type { ColumnStats, MetricColumn, OverallKey, PrefixCacheStats, Statistic, Summary } from "./summary.ts";
export { poolStats } from "./groups.ts";
export type { PoolStats } from "./groups.ts";
