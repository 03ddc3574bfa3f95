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
 *
 * @example The contract's sections and extras
 * ```ts
 * import { formatSummaryJson, runSources, YamlSource } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", c));
 * const doc = JSON.parse(formatSummaryJson(out.summary, { note: "hello" }));
 * assert.equal(doc.overall_summary.total_requests, 4);
 * assert.equal(doc.per_metric_summary.INPUT_TOKENS.MEDIAN, 128);
 * assert.equal(doc.note, "hello");
 * ```
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
 * rates, goodput), `headroom` and `percentile_ci95` (each percentile's 95%
 * interval, by column).
 *
 * @param s the run's summary
 *
 * @example Load and headroom as JSON
 * ```ts
 * import { runSources, summaryExtSections, YamlSource } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", c));
 * const ext = summaryExtSections(out.summary) as { load: { keeps_up: boolean; offered_rate: number } };
 * assert.deepEqual(Object.keys(ext), ["ext_metric_summary", "load", "headroom", "percentile_ci95"]);
 * assert.equal(ext.load.keeps_up, true);
 * assert.equal(ext.load.offered_rate, 2);
 * ```
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
      ...(l.queueGrowthCi ? { queue_growth_ci95: [...l.queueGrowthCi] } : {}),
      // The bracket this run puts on the highest sustained rate (high null: unbounded, the run kept up).
      max_sustainable_rate: [l.sustainable.low, Number.isFinite(l.sustainable.high) ? l.sustainable.high : null],
      // The overload probe's service rate (--saturation_probe), the estimate of the sustainable rate.
      ...(l.probe !== undefined ? { saturation_probe_rate: l.probe } : {}),
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
      kv_cached: h.kvCached,
      busy_fraction: h.busyFraction,
      mfu: h.mfu,
      mbu: h.mbu,
    },
    // Each percentile's 95% interval from its order statistics, by column (summary.ts's percentileCi).
    percentile_ci95: s.percentileCi,
  };
}
