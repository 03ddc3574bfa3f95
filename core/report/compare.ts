/**
 * Two runs side by side: every metric of their JSON documents with its
 * change (`deno task compare a.json b.json`), as a text table and as an
 * HTML page with the CDFs and time series of both runs overlaid. A
 * scenario's baseline mismatch uses the same rows (from its snapshot).
 *
 * @module
 */
import { ALL_STATISTICS, EXT_COLUMNS, METRIC_COLUMNS, OVERALL_KEYS } from "../metrics/summary.ts";
import { z } from "zod";
import { resolveMetric } from "../scenario/metric_keys.ts";
import { MAX_RATE_MEETING, MIN_VALUE_MEETING } from "../scenario/scenario.ts";
import { alignColumns } from "./columns.ts";
import { numberCell, page, section, showNumber, table, textCell, valueAt } from "./html.ts";
import { cdfCharts, seriesCharts } from "./run_report.ts";

/** One compared metric: its name, where each side holds it, which way is better. */
export interface MetricRow {
  /** Metric name (the scenario framework's canonical name where it has one). */
  readonly metric: string;
  /** Key path of the value in side a's document. */
  readonly pathA: readonly (string | number)[];
  /** Key path of the value in side b's document. */
  readonly pathB: readonly (string | number)[];
  /** Which way is better (`none`: neither). */
  readonly better: "lower" | "higher" | "none";
}

const LOAD_KEYS = ["offered_rate", "achieved_rate", "queue_growth"];
const HEADROOM_KEYS = ["batch_occupancy", "kv_occupancy", "kv_occupancy_peak", "mfu", "mbu"];
const GROUP_KEYS = ["mean_batch", "peak_batch", "preemptions", "kv_occupancy", "mfu", "mbu", "requests_served"];
const betterOf = (name: string) => resolveMetric(name)?.better ?? "none";

const series = z.array(z.number().nullable());
const statTable = z.record(z.string(), z.record(z.string(), z.number().nullable()));
/**
 * The parts of a run's JSON document that a comparison reads, with the
 * shapes it reads them in (other keys pass): what `--output_json` writes.
 */
const RunDocumentSchema = z.looseObject({
  per_metric_summary: statTable,
  overall_summary: z.record(z.string(), z.number().nullable()),
  ext_metric_summary: statTable.optional(),
  load: z.record(z.string(), z.unknown()).optional(),
  headroom: z.record(z.string(), z.number().nullable()).optional(),
  groups: z.array(z.looseObject({ group: z.string() })).optional(),
  distributions: z.looseObject({ seconds: z.record(z.string(), series) }).optional(),
  timeseries: z.looseObject({
    time_s: series,
    offered_rate: series,
    achieved_rate: series,
    groups: z.array(z.object({ group: z.string() }).catchall(series)),
  }).optional(),
});

/** Why `doc` is not a run's JSON document (what `--output_json` writes), or undefined when it is one. */
export function runDocumentProblem(doc: unknown): string | undefined {
  const r = RunDocumentSchema.safeParse(doc);
  if (r.success) return undefined;
  const issue = r.error.issues[0];
  const at = issue.path.map(String).join(".");
  return `${at ? `${at}: ` : ""}${issue.message}`;
}

/** Whether `doc` is a run's JSON document (what `--output_json` writes). */
export function isRunDocument(doc: unknown): boolean {
  return runDocumentProblem(doc) === undefined;
}

/**
 * The rows comparing two run documents: every statistic of every metric
 * column, the overall summary, load, headroom, and the groups both have (by
 * name).
 */
export function runMetricRows(a: unknown, b: unknown): MetricRow[] {
  const rows: MetricRow[] = [];
  const same = (metric: string, path: (string | number)[], better = betterOf(metric)) =>
    rows.push({ metric, pathA: path, pathB: path, better });
  for (const c of METRIC_COLUMNS) for (const st of ALL_STATISTICS) same(`${c}.${st}`, ["per_metric_summary", c, st]);
  for (const c of EXT_COLUMNS) for (const st of ALL_STATISTICS) same(`${c}.${st}`, ["ext_metric_summary", c, st]);
  for (const k of OVERALL_KEYS) same(k, ["overall_summary", k]);
  for (const k of LOAD_KEYS) same(k, ["load", k], k === "achieved_rate" ? "higher" : "none");
  for (const k of HEADROOM_KEYS) same(k, ["headroom", k], "none");
  const groups = (d: unknown) => (valueAt(d, ["groups"]) as { group: string }[] | undefined) ?? [];
  groups(a).forEach((g, i) => {
    const j = groups(b).findIndex((h) => h.group === g.group);
    if (j < 0) return;
    for (const k of GROUP_KEYS) {
      rows.push({
        metric: `${g.group}.${k}`,
        pathA: ["groups", i, k],
        pathB: ["groups", j, k],
        better: k === "preemptions" ? "lower" : "none",
      });
    }
  });
  return rows;
}

/**
 * Which way a snapshot key is better: a variant's keys (`disagg.request_throughput(req/s)`) as their metric's; the
 * capacity answers: more rate is better, fewer instances are.
 */
function snapshotBetter(key: string): MetricRow["better"] {
  if (key === MAX_RATE_MEETING) return "higher";
  if (key === MIN_VALUE_MEETING) return "lower";
  const own = resolveMetric(key);
  if (own) return own.better;
  const dot = key.indexOf(".");
  return dot > 0 ? betterOf(key.slice(dot + 1)) : "none";
}

/** The rows comparing two flat snapshots (a scenario's baseline and its run), by key. */
export function snapshotMetricRows(a: Record<string, number>, b: Record<string, number>): MetricRow[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].sort().map((k) => ({
    metric: k,
    pathA: [k],
    pathB: [k],
    better: snapshotBetter(k),
  }));
}

/** b − a and the relative change, when both are numbers (NaN where undefined). */
function change(a: unknown, b: unknown): { delta: number; relative: number } {
  if (typeof a !== "number" || typeof b !== "number") return { delta: NaN, relative: NaN };
  return { delta: b - a, relative: a === 0 ? (b === 0 ? 0 : NaN) : (b - a) / Math.abs(a) };
}

/** "worse", "better" or "" for a change of a metric. */
function verdict(r: MetricRow, delta: number): "worse" | "better" | "" {
  if (!(delta !== 0) || r.better === "none") return "";
  return (delta > 0) === (r.better === "lower") ? "worse" : "better";
}

const pct = (x: number) => (Number.isNaN(x) ? "-" : `${x > 0 ? "+" : ""}${(100 * x).toFixed(1)}%`);

/**
 * The change table as text: metric, a, b, change and relative change, and
 * a mark on changes for the worse; only `changedOnly` rows that changed.
 */
export function formatCompareTable(
  a: unknown,
  b: unknown,
  rows: readonly MetricRow[],
  options: { changedOnly?: boolean } = {},
): string {
  const out: string[][] = [["metric", "a", "b", "change", "change%", ""]];
  for (const r of rows) {
    const va = valueAt(a, r.pathA);
    const vb = valueAt(b, r.pathB);
    const c = change(va, vb);
    if (options.changedOnly && !(c.delta !== 0) && !(Number.isNaN(c.delta) && va !== vb)) continue;
    out.push([r.metric, showNumber(va), showNumber(vb), showNumber(c.delta), pct(c.relative), verdict(r, c.delta)]);
  }
  return alignColumns(out, { align: ["left", "right", "right", "right", "right", "left"] }).map((l) => l.trimEnd())
    .join("\n") + "\n";
}

/**
 * The comparison page: the change table (every number marked with its side
 * and path, the page contract), then for run documents the CDFs and time
 * series of both overlaid.
 */
export async function compareReportHtml(
  a: unknown,
  b: unknown,
  rows: readonly MetricRow[],
  names: { a: string; b: string },
): Promise<string> {
  const body = table(
    "Every metric (a → b)",
    ["metric", `a: ${names.a}`, `b: ${names.b}`, "change", "change %"],
    rows.map((r) => {
      const c = change(valueAt(a, r.pathA), valueAt(b, r.pathB));
      const v = verdict(r, c.delta);
      return [
        textCell(r.metric),
        numberCell(a, r.pathA, "a"),
        numberCell(b, r.pathB, "b"),
        `<td class="num ${v}">${showNumber(c.delta)}</td>`,
        `<td class="num ${v}">${pct(c.relative)}</td>`,
      ];
    }),
  );
  const docs = [{ doc: a, run: "a" }, { doc: b, run: "b" }];
  const runs = isRunDocument(a) && isRunDocument(b);
  return page(`ServingCast comparison`, `a: ${names.a}   b: ${names.b}`, [
    section("Change table", body),
    ...(runs
      ? [
        section("Latency distributions (a and b)", await cdfCharts(docs)),
        section("Over time (a and b)", await seriesCharts(docs)),
      ]
      : []),
  ]);
}
