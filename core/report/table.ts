/**
 * The console summary in the exact layout of the upstream guide
 * (`shared/seed/servingcast-guide.zh.md` §4.1): a pandas float DataFrame
 * rounded to 3 decimals, then the overall summary.
 *
 * pandas prints each float column with the decimals its most precise value
 * needs (at least one, so whole numbers show as `1500.0`), right-aligned
 * under a header as wide as the widest cell, two spaces between columns,
 * the row labels left-aligned. A statistic with no defined value (TPOT when
 * every output is one token, every column when no request was served)
 * prints `-` (pandas would print `NaN`); the JSON has `null`.
 *
 * @module
 */
import { METRIC_COLUMNS, OVERALL_KEYS, STATISTICS } from "../metrics/summary.ts";
import { alignColumns } from "../text/columns.ts";
import type { MetricColumn, Statistic, Summary } from "../metrics/summary.ts";
import { formatFixed, roundHalfEven } from "./number_format.ts";

/** What the console prints for a statistic with no defined value. */
export const UNDEFINED_CELL = "-";

/** Decimals pandas needs to show `x` (already rounded to 3 places) exactly: 1 to 3. */
function decimalsNeeded(x: number): number {
  const s = x.toFixed(3);
  const frac = s.slice(s.indexOf(".") + 1).replace(/0+$/, "");
  return Math.max(1, frac.length);
}

/** Formats one column of values the way pandas does. */
export function formatColumn(values: readonly number[]): string[] {
  const rounded = values.map((v) => roundHalfEven(v, 3));
  let decimals = 1;
  for (const v of rounded) if (!Number.isNaN(v)) decimals = Math.max(decimals, decimalsNeeded(v));
  return rounded.map((v) => (Number.isNaN(v) ? UNDEFINED_CELL : formatFixed(v, decimals)));
}

/**
 * Lays out a float DataFrame as pandas prints it: row labels left-aligned,
 * each column formatted by {@link formatColumn} and right-aligned under its
 * header, two spaces between columns.
 *
 * @param columns headers, in order
 * @param rows row labels, in order
 * @param value the cell of a column and row
 * @returns the lines (no trailing newline)
 */
export function formatFrame(
  columns: readonly string[],
  rows: readonly string[],
  value: (column: string, row: string) => number,
): string[] {
  const cells = columns.map((c) => formatColumn(rows.map((r) => value(c, r))));
  return alignColumns([["", ...columns], ...rows.map((row, i) => [row, ...cells.map((col) => col[i])])], {
    align: (i) => (i === 0 ? "left" : "right"),
  });
}

/** One `key value` line of a summary block: the key in 30 characters, the value `%.3f` (`-` when undefined). */
export function formatKeyValue(key: string, value: number): string {
  return `${key.padEnd(30)} ${Number.isNaN(value) ? UNDEFINED_CELL : formatFixed(value, 3)}`;
}

/**
 * Renders the per-request table and the overall summary.
 *
 * @param s the run's summary
 * @returns the text, ending with a newline
 *
 * @example The guide's table
 * ```ts
 * import { formatSummaryTable, runSources, YamlSource } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", c));
 * const text = formatSummaryTable(out.summary);
 * assert.match(text, /^ +E2E_TIME\(s\) +TTFT\(s\) +TPOT\(s\)/);
 * assert.match(text, /^total_requests +4\.000$/m);
 * assert.ok(text.endsWith("\n"));
 * ```
 */
export function formatSummaryTable(s: Pick<Summary, "perMetric" | "overall">): string {
  const lines = formatFrame(METRIC_COLUMNS, STATISTICS, (c, st) => s.perMetric[c as MetricColumn][st as Statistic]);
  lines.push("======== Overall Summary ========");
  for (const k of OVERALL_KEYS) lines.push(formatKeyValue(k, s.overall[k]));
  return lines.join("\n") + "\n";
}
