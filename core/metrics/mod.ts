/**
 * Metrics: per-request latencies, their statistics and the overall summary.
 *
 * @module
 */
export { quantileCounted, quantileSorted } from "./percentile.ts";
export {
  ALL_STATISTICS,
  columnOf,
  EXT_COLUMNS,
  METRIC_COLUMNS,
  OVERALL_KEYS,
  PERCENTILES,
  poolHeadroom,
  STATISTICS,
  summarize,
} from "./summary.ts";
export type {
  ColumnStats,
  ExtColumn,
  GoodputSlos,
  GoodputStats,
  Headroom,
  MetricColumn,
  OverallKey,
  Percentile,
  PercentileIntervals,
  PrefixCacheStats,
  Statistic,
  Summary,
  SummaryOptions,
} from "./summary.ts";
export { EXACT_UP_TO, LatencyDistribution, SKETCH_RELATIVE_ACCURACY } from "./sketch.ts";
export { RequestStream, STREAM_COLUMNS } from "./stream.ts";
export type { RequestFigures, StreamColumn, StreamJson } from "./stream.ts";
export type { DistributionJson } from "./sketch.ts";
export { KEEP_UP_TOLERANCE, loadStats, middleRate } from "./load.ts";
export type { LoadStats, Probe } from "./load.ts";
export { poolStats } from "./groups.ts";
export type { PoolStats } from "./groups.ts";
export { MAX_BUCKETS, TimeSeriesCollector } from "./timeseries.ts";
export type { GroupTimeSeries, TimeSeries } from "./timeseries.ts";
export { kindOf, MIN_STRATUM_ROWS, predictionBound, predictionInterval, RESIDUALS, vendorOf } from "./intervals.ts";
export type { IntervalContext, MetricKind, PredictionInterval, Residual } from "./intervals.ts";
export { kvStarvedLine, overloadSummary } from "./diagnostics.ts";
export type { GroupKv } from "./diagnostics.ts";
