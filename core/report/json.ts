/**
 * The `--output_json` document: the contract's `per_metric_summary` and
 * `overall_summary` (same names as the console), plus ext sections. NaN
 * (a statistic with no defined value) is written as null.
 *
 * @module
 */
import type { Summary } from "../metrics/summary.ts";

/** Extra sections (ext) to add beside the contract's two. */
export type JsonExtras = Record<string, unknown>;

/**
 * Renders the summary as JSON text (2-space indent, trailing newline).
 *
 * @param s the run's summary
 * @param extras more top-level sections, such as `simulation`
 */
export function formatSummaryJson(s: Summary, extras: JsonExtras = {}): string {
  const doc = {
    per_metric_summary: s.perMetric,
    overall_summary: s.overall,
    ...extras,
  };
  return JSON.stringify(doc, (_k, v) => (typeof v === "number" && !Number.isFinite(v) ? null : v), 2) + "\n";
}

/**
 * The ext sections computed from a summary: `ext_metric_summary` (ITL,
 * client wait, TTFT and E2E from arrival), `load` (offered and achieved
 * rates, goodput) and `headroom`.
 *
 * @param s the run's summary
 */
export function summaryExtSections(s: Summary): JsonExtras {
  const l = s.load;
  const h = s.headroom;
  return {
    ext_metric_summary: s.extMetric,
    load: {
      offered_rate: l.offeredRate,
      achieved_rate: l.achievedRate,
      keeps_up: l.keepsUp,
      queue_growth: l.queueGrowth,
      ...(s.goodput
        ? {
          goodput: s.goodput.rate,
          slo_attainment: s.goodput.attainment,
          goodput_slos: s.goodput.slos,
        }
        : {}),
    },
    headroom: {
      batch_occupancy: h.batchOccupancy,
      kv_occupancy: h.kvOccupancy,
      kv_occupancy_peak: h.kvOccupancyPeak,
      mfu: h.mfu,
      mbu: h.mbu,
    },
  };
}
