/**
 * Prediction intervals of a run's headline figures (median and P99 TTFT,
 * TPOT and E2E from send, output and request throughput), from the
 * held-out errors of its stratum (core/metrics/intervals.ts): what the
 * table, the JSON and the HTML report show beside the simulated numbers.
 * A run that names no engine takes the generic path, which no held-out row
 * grades: it has none.
 *
 * @module
 */
import { kindOf, predictionInterval, RESIDUALS } from "../metrics/intervals.ts";
import type { PredictionInterval, Residual } from "../metrics/intervals.ts";
import type { RunOutput } from "../assembly/run.ts";
import { intervalContext } from "../assembly/interval_context.ts";
import { alignColumns } from "../text/columns.ts";
import { formatFixed } from "./number_format.ts";

/** The confidence the table and reports show by default. */
export const DEFAULT_CONFIDENCE = 0.8;

/** One headline figure with its interval. */
export interface HeadlineInterval extends PredictionInterval {
  /** The figure: `TTFT(s).MEDIAN`, `output_token_throughput(tok/s)`, … */
  readonly metric: string;
}

/** The headline figures of a run, by canonical name. */
function headline(out: RunOutput): [string, number][] {
  const s = out.summary;
  const pm = s.perMetric;
  return [
    ["TTFT(s).MEDIAN", pm["TTFT(s)"].MEDIAN],
    ["TTFT(s).P99", pm["TTFT(s)"].P99],
    ["TPOT(s).MEDIAN", pm["TPOT(s)"].MEDIAN],
    ["TPOT(s).P99", pm["TPOT(s)"].P99],
    ["E2E_TIME(s).MEDIAN", pm["E2E_TIME(s)"].MEDIAN],
    ["E2E_TIME(s).P99", pm["E2E_TIME(s)"].P99],
    ["output_token_throughput(tok/s)", s.overall["output_token_throughput(tok/s)"]],
    ["request_throughput(req/s)", s.overall["request_throughput(req/s)"]],
  ];
}

/**
 * The intervals of a run's headline figures at `confidence`; undefined for
 * a run without an engine, or a figure whose strata hold too few rows.
 */
export function headlineIntervals(
  out: RunOutput,
  confidence = DEFAULT_CONFIDENCE,
  residuals: readonly Residual[] = RESIDUALS,
): HeadlineInterval[] | undefined {
  const context = intervalContext(out);
  if (!context) return undefined;
  return headline(out).flatMap(([metric, value]) => {
    if (!(value > 0)) return [];
    const i = predictionInterval(value, kindOf(metric), context, confidence, residuals);
    return i ? [{ metric, ...i }] : [];
  });
}

/** The intervals as the table's ext section (empty without any). */
export function formatIntervalSection(list: readonly HeadlineInterval[] | undefined): string {
  if (!list?.length) return "";
  const pct = (list[0].confidence * 100).toFixed(0);
  const rows = list.map((i) => [
    i.metric,
    formatFixed(i.simulated, 3),
    formatFixed(i.low, 3),
    formatFixed(i.high, 3),
    `${i.stratum} (${i.rows} rows)`,
  ]);
  return [
    `======== Prediction Intervals, ${pct}% (ext) ========`,
    ...alignColumns([["metric", "simulated", "low", "high", "from held-out errors of"], ...rows], {
      align: (i) => (i >= 1 && i <= 3 ? "right" : "left"),
    }),
  ].join("\n") + "\n";
}

/** The intervals as the JSON document's `prediction_intervals` section (none without any). */
export function intervalJson(list: readonly HeadlineInterval[] | undefined): Record<string, unknown> {
  if (!list?.length) return {};
  return {
    prediction_intervals: {
      confidence: list[0].confidence,
      source: "docs/fidelity.md: held-out errors (leave-one-source-out) of the stratum named",
      metrics: Object.fromEntries(
        list.map((
          i,
        ) => [i.metric, { simulated: i.simulated, low: i.low, high: i.high, stratum: i.stratum, rows: i.rows }]),
      ),
    },
  };
}
