/**
 * The ext console section printed after the guide's summary: latency tails
 * (P95, P99.9), latencies as the user sees them (from arrival), the client
 * wait, inter-token latency, and whether the deployment kept up with its
 * load, with the headroom it had left.
 *
 * @module
 */
import { columnOf } from "../metrics/summary.ts";
import type { ColumnStats, Summary } from "../metrics/summary.ts";
import { formatFrame, formatKeyValue } from "./table.ts";

/** Columns of the ext latency table, in order. */
export const EXT_TABLE_COLUMNS = [
  "TTFT(s)",
  "TPOT(s)",
  "ITL(s)",
  "E2E_TIME(s)",
  "CLIENT_WAIT(s)",
  "TTFT_FROM_ARRIVAL(s)",
  "E2E_FROM_ARRIVAL(s)",
] as const;

/** Rows of the ext latency table, in order. */
export const EXT_TABLE_ROWS = ["AVERAGE", "MEDIAN", "P90", "P95", "P99", "P99.9", "MAX"] as const;

/**
 * Renders the ext section.
 *
 * @param s the run's summary
 * @returns the text, ending with a newline
 *
 * @example Latency tails and load
 * ```ts
 * import { formatExtSection, runSources, YamlSource } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", c));
 * const text = formatExtSection(out.summary);
 * assert.match(text, /^={8} Latency Tails, from Send and from Arrival \(ext\) ={8}$/m);
 * assert.match(text, /^keeps_up +yes$/m);
 * ```
 */
export function formatExtSection(s: Summary): string {
  const lines = ["======== Latency Tails, from Send and from Arrival (ext) ========"];
  lines.push(
    ...formatFrame(
      EXT_TABLE_COLUMNS,
      EXT_TABLE_ROWS,
      (c, r) => columnOf(s, c as (typeof EXT_TABLE_COLUMNS)[number])[r as keyof ColumnStats],
    ),
  );
  lines.push("======== Load and Headroom (ext) ========");
  const l = s.load;
  lines.push(formatKeyValue("offered_rate(req/s)", l.offeredRate));
  lines.push(formatKeyValue("achieved_rate(req/s)", l.achievedRate));
  lines.push(`${"keeps_up".padEnd(30)} ${l.keepsUp ? "yes" : "NO"}`);
  const { low, high } = l.sustainable;
  const fmt = (v: number) => Number(v.toPrecision(4)).toString();
  // With an overload probe, its service rate is the estimate; the run's own bracket follows.
  const bracket = Number.isFinite(high) ? `${fmt(low)}–${fmt(high)}` : `≥ ${fmt(low)}`;
  lines.push(
    `${"max_sustainable_rate(req/s)".padEnd(30)} ${
      l.probe === undefined ? bracket : `≈ ${fmt(l.probe)} (overload probe; between ${bracket.replace("–", " and ")})`
    }`,
  );
  lines.push(formatKeyValue("queue_growth(s/s)", l.queueGrowth));
  if (s.goodput) {
    lines.push(formatKeyValue("goodput(req/s)", s.goodput.rate));
    lines.push(formatKeyValue("slo_attainment", s.goodput.attainment));
  }
  const h = s.headroom;
  lines.push(formatKeyValue("batch_occupancy", h.batchOccupancy));
  lines.push(formatKeyValue("kv_occupancy", h.kvOccupancy));
  lines.push(formatKeyValue("kv_occupancy_peak", h.kvOccupancyPeak));
  lines.push(formatKeyValue("kv_cached", h.kvCached));
  lines.push(formatKeyValue("busy_fraction", h.busyFraction));
  lines.push(formatKeyValue("mfu", h.mfu));
  lines.push(formatKeyValue("mbu", h.mbu));
  return lines.join("\n") + "\n";
}
