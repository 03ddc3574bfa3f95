/**
 * Two runs side by side: every metric of their JSON documents with its
 * change (`deno task compare a.json b.json`), as a text table and as an
 * HTML page with the CDFs and time series of both runs overlaid. A
 * scenario's baseline mismatch uses the same rows (from its snapshot).
 *
 * @module
 */
import { ALL_STATISTICS, CDF_COLUMNS, EXT_COLUMNS, METRIC_COLUMNS, OVERALL_KEYS } from "../metrics/summary.ts";
import { TASK_LIMITS } from "../config/limits.ts";
import { quoteString } from "../config/errors.ts";
import { resolveMetric } from "../scenario/metric_keys.ts";
import { MAX_RATE_MEETING, MIN_VALUE_MEETING } from "../scenario/scenario.ts";
import { alignColumns } from "../text/columns.ts";
import { escapeHtml, numberCell, page, section, showNumber, table, textCell, valueAt } from "./html.ts";
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
const HEADROOM_KEYS = [
  "batch_occupancy",
  "kv_occupancy",
  "kv_occupancy_peak",
  "kv_cached",
  "busy_fraction",
  "mfu",
  "mbu",
];
const GROUP_KEYS = ["mean_batch", "peak_batch", "preemptions", "kv_occupancy", "mfu", "mbu", "requests_served"];
const betterOf = (name: string) => resolveMetric(name)?.better ?? "none";

/** Why a part of a document is not what a comparison reads: its key path and what is wrong. */
interface Problem {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/** The JSON type of a value, as a message names it. */
const kindOf = (v: unknown): string => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);
const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const expected = (path: readonly (string | number)[], what: string, v: unknown): Problem => ({
  path,
  message: `Invalid input: expected ${what}, received ${kindOf(v)}`,
});
/** A number JSON wrote beyond a double's range (`1e999` parses as an infinity). */
const outOfRange = (path: readonly (string | number)[]): Problem => ({
  path,
  message: "Invalid input: a number beyond ±1.8e308, the range of a double",
});

/** Whether `v` is a number a table can print, or null. */
const isValue = (v: unknown) => v === null || (typeof v === "number" && Number.isFinite(v));

/** The problem with a number or null at `path`, if any (the path is built only for a problem). */
function numberProblem(v: unknown, path: () => (string | number)[]): Problem | undefined {
  if (isValue(v)) return undefined;
  return typeof v === "number" ? outOfRange(path()) : expected(path(), "number", v);
}

/** The first problem of an object of numbers or nulls. */
function numbersProblem(v: unknown, path: readonly (string | number)[]): Problem | undefined {
  if (!isRecord(v)) return expected(path, "record", v);
  for (const k of Object.keys(v)) {
    const p = numberProblem(v[k], () => [...path, k]);
    if (p) return p;
  }
  return undefined;
}

/** The first problem of a series (an array of numbers or nulls). */
function seriesProblem(v: unknown, path: readonly (string | number)[]): Problem | undefined {
  if (!Array.isArray(v)) return expected(path, "array", v);
  for (let i = 0; i < v.length; i++) {
    const p = numberProblem(v[i], () => [...path, i]);
    if (p) return p;
  }
  return undefined;
}

/** The first problem of a metric table (metric → statistic → number or null). */
function statTableProblem(v: unknown, path: readonly (string | number)[]): Problem | undefined {
  if (!isRecord(v)) return expected(path, "record", v);
  for (const k of Object.keys(v)) {
    const p = numbersProblem(v[k], [...path, k]);
    if (p) return p;
  }
  return undefined;
}

/**
 * Groups of one run document a comparison reads (its `groups` and its time
 * series' `groups`): one per instance group, a few in any deployment; each
 * is 7 rows of the table (TASK_LIMITS.groups says why the limit).
 */
const MAX_GROUPS = TASK_LIMITS.groups;

/** The first problem of an array of groups (objects with a string `group`), its length checked first. */
function groupsProblem(
  v: unknown,
  path: readonly (string | number)[],
  each: (g: Record<string, unknown>, at: (string | number)[]) => Problem | undefined,
): Problem | undefined {
  if (!Array.isArray(v)) return expected(path, "array", v);
  if (v.length > MAX_GROUPS) {
    return {
      path,
      message: `${v.length.toLocaleString("en-US")} groups; a comparison reads at most ${
        MAX_GROUPS.toLocaleString("en-US")
      } per document, one per instance group`,
    };
  }
  for (let i = 0; i < v.length; i++) {
    const g = v[i];
    if (!isRecord(g)) return expected([...path, i], "object", g);
    if (typeof g.group !== "string") return expected([...path, i, "group"], "string", g.group);
    const p = each(g, [...path, i]);
    if (p) return p;
  }
  return undefined;
}

/**
 * The first problem of the parts of a run document a comparison reads, in
 * the shapes it reads them in (other keys pass): what `--output_json`
 * writes. Stops at the first problem (a document of millions of bad values
 * costs one message), checks every array's length before its items, and
 * refuses numbers beyond a double's range (JSON's `1e999`), which no
 * comparison can print.
 */
function documentProblem(doc: unknown): Problem | undefined {
  if (!isRecord(doc)) return expected([], "object", doc);
  const optional = (key: string, check: (v: unknown, path: (string | number)[]) => Problem | undefined) =>
    Object.hasOwn(doc, key) && doc[key] !== undefined ? check(doc[key], [key]) : undefined;
  return statTableProblem(valueAt(doc, ["per_metric_summary"]), ["per_metric_summary"]) ??
    numbersProblem(valueAt(doc, ["overall_summary"]), ["overall_summary"]) ??
    optional("ext_metric_summary", statTableProblem) ??
    optional("load", (v, path) => {
      if (!isRecord(v)) return expected(path, "record", v);
      // Any value passes; a number must be one a table can print.
      const k = Object.keys(v).find((k) => typeof v[k] === "number" && !Number.isFinite(v[k]));
      return k === undefined ? undefined : outOfRange([...path, k]);
    }) ??
    optional("headroom", numbersProblem) ??
    optional("groups", (v, path) =>
      groupsProblem(v, path, (g, at) => {
        const k = Object.keys(g).find((k) => typeof g[k] === "number" && !Number.isFinite(g[k]));
        return k === undefined ? undefined : outOfRange([...at, k]);
      })) ??
    optional("distributions", (v, path) => {
      if (!isRecord(v)) return expected(path, "object", v);
      const seconds = valueAt(v, ["seconds"]);
      if (!isRecord(seconds)) return expected([...path, "seconds"], "record", seconds);
      for (const k of Object.keys(seconds)) {
        const p = seriesProblem(seconds[k], [...path, "seconds", k]);
        if (p) return p;
      }
      return undefined;
    }) ??
    optional("timeseries", (v, path) => {
      if (!isRecord(v)) return expected(path, "object", v);
      for (const k of ["time_s", "offered_rate", "achieved_rate"]) {
        const p = seriesProblem(valueAt(v, [k]), [...path, k]);
        if (p) return p;
      }
      return groupsProblem(valueAt(v, ["groups"]), [...path, "groups"], (g, at) => {
        for (const k of Object.keys(g)) {
          const p = k === "group" ? undefined : seriesProblem(g[k], [...at, k]);
          if (p) return p;
        }
        return undefined;
      });
    });
}

/** Points of one series a report draws: `sim` writes at most this many buckets. */
const MAX_POINTS = TASK_LIMITS.timeseriesPoints;

/**
 * Groups whose time series one chart draws: each is a line and a legend
 * entry; past a few dozen a chart is unreadable (and slow to draw), and the
 * change table still lists every group.
 */
const CHART_GROUPS = 24;

/** The largest magnitude a chart draws: a fourth of the largest double, so that no axis span overflows. */
const CHART_EXTREME = Number.MAX_VALUE / 4;

/** The series of a time series' group that the charts draw (what `sim` writes for each). */
const GROUP_SERIES = ["running", "waiting", "kv_occupancy", "batch", "preemptions_per_s", "kv_transfers_in_flight"];

/** `xs` at {@link MAX_POINTS} evenly spaced indices, first and last included. */
function sampled(xs: readonly unknown[]): unknown[] {
  return Array.from({ length: MAX_POINTS }, (_, i) => xs[Math.round((i * (xs.length - 1)) / (MAX_POINTS - 1))]);
}

/** A run document as a comparison reads it: series cut to what a report draws, and what was cut. */
export interface RunDocument {
  /** The document, its series of more than {@link TASK_LIMITS}' `timeseriesPoints` points sampled to that many. */
  readonly doc: Record<string, unknown>;
  /** What the report draws of it that is not all of it, one sentence each. */
  readonly notes: readonly string[];
}

/**
 * Reads a parsed run document (what `--output_json` writes) for a
 * comparison: the series longer than a report draws (a hand-made
 * document's, `sim` writes at most 256 buckets) are sampled before any
 * per-point work, then the parts the comparison reads are checked.
 *
 * @returns the document, or why it is not one (`key.path: what is wrong`)
 */
export function readRunDocument(doc: unknown): RunDocument | string {
  const notes: string[] = [];
  let ready = doc;
  if (isRecord(doc)) {
    // Shallow copies: the caller's document is left as it is.
    const out: Record<string, unknown> = { ...doc };
    let longest = 0;
    const cut = (xs: unknown) => {
      if (!Array.isArray(xs) || xs.length <= MAX_POINTS) return xs;
      longest = Math.max(longest, xs.length);
      return sampled(xs);
    };
    const dist = valueAt(doc, ["distributions"]);
    const seconds = valueAt(dist, ["seconds"]);
    if (isRecord(dist) && isRecord(seconds)) {
      out.distributions = {
        ...dist,
        seconds: Object.fromEntries(Object.keys(seconds).map((k) => [k, cut(seconds[k])])),
      };
      if (longest > 0) {
        notes.push(
          `distributions: CDFs of ${
            longest.toLocaleString("en-US")
          } points drawn at ${MAX_POINTS} of them, evenly spaced`,
        );
      }
    }
    longest = 0;
    const ts = valueAt(doc, ["timeseries"]);
    const groups = valueAt(ts, ["groups"]);
    if (isRecord(ts)) {
      const copy: Record<string, unknown> = { ...ts };
      for (const k of ["time_s", "offered_rate", "achieved_rate"]) if (Object.hasOwn(ts, k)) copy[k] = cut(ts[k]);
      // Counted before any group is touched: the check below refuses too many.
      if (Array.isArray(groups) && groups.length <= MAX_GROUPS) {
        copy.groups = groups.map((g) =>
          isRecord(g) ? Object.fromEntries(Object.keys(g).map((k) => [k, k === "group" ? g[k] : cut(g[k])])) : g
        );
      }
      out.timeseries = copy;
      if (longest > 0) {
        notes.push(
          `timeseries: ${
            longest.toLocaleString("en-US")
          } points drawn at ${MAX_POINTS} of them, evenly spaced (deno task sim writes at most ${MAX_POINTS})`,
        );
      }
    }
    ready = out;
  }
  const problem = documentProblem(ready);
  if (problem) return `${problem.path.length ? `${problem.path.map(String).join(".")}: ` : ""}${problem.message}`;
  return { doc: ready as Record<string, unknown>, notes };
}

/** Why `doc` is not a run's JSON document (what `--output_json` writes), or undefined when it is one. */
export function runDocumentProblem(doc: unknown): string | undefined {
  const r = readRunDocument(doc);
  return typeof r === "string" ? r : undefined;
}

/** Whether `doc` is a run's JSON document (what `--output_json` writes). */
export function isRunDocument(doc: unknown): boolean {
  return runDocumentProblem(doc) === undefined;
}

/**
 * A group's name as a metric shows it: as written when it is plain, else
 * quoted and escaped (a name with a line break or a leading `::` never
 * starts a line of its own or a workflow command), cut when long.
 */
function groupLabel(name: string): string {
  return /^[A-Za-z0-9_][\w .\-+=@/()%:]{0,79}$/.test(name) ? name : quoteString(name);
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
  // A group's name, or undefined for an entry that is not a group.
  const nameOf = (g: unknown) => (isRecord(g) && typeof g.group === "string" ? g.group : undefined);
  const groups = (d: unknown): unknown[] => {
    const gs = valueAt(d, ["groups"]);
    return Array.isArray(gs) ? gs : [];
  };
  // By name, the first of each (a linear match: a document may hold many groups).
  const inB = new Map<string, number>();
  groups(b).forEach((h, j) => {
    const name = nameOf(h);
    if (name !== undefined && !inB.has(name)) inB.set(name, j);
  });
  groups(a).forEach((g, i) => {
    const name = nameOf(g);
    const j = name === undefined ? undefined : inB.get(name);
    if (name === undefined || j === undefined) return;
    for (const k of GROUP_KEYS) {
      rows.push({
        metric: `${groupLabel(name)}.${k}`,
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

/**
 * b − a and the relative change (b − a) / |a|, when both are numbers (NaN
 * where undefined: a missing side, or a change from 0). Either may be an
 * infinity when the change exceeds a double (1e308 to −1e308); what prints
 * them shows `-` for it.
 */
function change(a: unknown, b: unknown): { delta: number; relative: number } {
  if (typeof a !== "number" || typeof b !== "number") return { delta: NaN, relative: NaN };
  const delta = b - a;
  if (a === 0) return { delta, relative: b === 0 ? 0 : NaN };
  // b/|a| − sign(a) is the same ratio without the overflow of b − a.
  return { delta, relative: Number.isFinite(delta) ? delta / Math.abs(a) : b / Math.abs(a) - Math.sign(a) };
}

/**
 * How a comparison judges a change: the relative change beyond which a
 * change is marked (and, for the worse, is a regression), per metric; and
 * whether the extreme statistics are judged at all.
 */
export interface CompareGate {
  /** The relative change (0.05: 5%) a metric's change must exceed to count. */
  readonly threshold: (metric: string) => number;
  /** Whether MIN and MAX are judged: one request at a run's edge moves them, so by default they are not. */
  readonly extremes: boolean;
}

/** Every change counts, MIN and MAX left out. */
export const DEFAULT_GATE: CompareGate = { threshold: () => 0, extremes: false };

/** Whether a metric is an extreme statistic (`….MIN`, `….MAX`): noise at the edges of a run. */
const isExtreme = (metric: string) => /\.(MIN|MAX)$/.test(metric);

/**
 * "worse", "better" or "" for a change of a metric under `gate`: "" when
 * it did not change, has no better side, is an extreme the gate leaves
 * out, or moved less than its threshold (a change from 0, of no relative
 * size, always counts).
 */
function verdict(r: MetricRow, c: { delta: number; relative: number }, gate = DEFAULT_GATE): "worse" | "better" | "" {
  if (!(c.delta !== 0) || r.better === "none") return "";
  if (!gate.extremes && isExtreme(r.metric)) return "";
  if (Math.abs(c.relative) <= gate.threshold(r.metric)) return "";
  return (c.delta > 0) === (r.better === "lower") ? "worse" : "better";
}

/** One compared metric: both values, the change, and the verdict under a gate. */
export interface ComparedMetric {
  readonly metric: string;
  readonly a: unknown;
  readonly b: unknown;
  /** b − a (NaN when either side is not a number). */
  readonly delta: number;
  /** (b − a) / |a| (NaN from 0 or a missing side). */
  readonly relative: number;
  /** "worse" is a regression beyond the metric's threshold. */
  readonly verdict: "worse" | "better" | "";
}

/** Every row of a comparison judged under `gate` (see {@link verdict}). */
export function compareMetrics(
  a: unknown,
  b: unknown,
  rows: readonly MetricRow[],
  gate: CompareGate = DEFAULT_GATE,
): ComparedMetric[] {
  return rows.map((r) => {
    const va = valueAt(a, r.pathA);
    const vb = valueAt(b, r.pathB);
    const c = change(va, vb);
    return { metric: r.metric, a: va, b: vb, delta: c.delta, relative: c.relative, verdict: verdict(r, c, gate) };
  });
}

/** Whether a compared metric changed (a side that appeared or went counts). */
const changed = (m: ComparedMetric) => m.delta !== 0 && !(Number.isNaN(m.delta) && m.a === m.b);

/**
 * The metrics that changed as a Markdown table, changes for the worse
 * beyond their threshold marked, for a pull request or a job summary.
 */
export function formatCompareMarkdown(
  compared: readonly ComparedMetric[],
  names: { a: string; b: string },
  options: { changedOnly?: boolean } = {},
): string {
  const cell = (t: string) => t.replaceAll("|", "\\|").replaceAll("\n", " ");
  const lines = [
    `| metric | a: ${cell(names.a)} | b: ${cell(names.b)} | change | change % | |`,
    "| --- | ---: | ---: | ---: | ---: | --- |",
  ];
  for (const m of compared) {
    if (options.changedOnly !== false && !changed(m)) continue;
    const mark = m.verdict === "worse" ? "**worse**" : m.verdict;
    lines.push(
      `| ${cell(m.metric)} | ${showValue(m.a)} | ${showValue(m.b)} | ${showValue(m.delta)} | ${
        changeText(m.relative)
      } | ${mark} |`,
    );
  }
  const worse = compared.filter((m) => m.verdict === "worse").length;
  return [`**${worse === 0 ? "No regression" : `${worse} regression${worse === 1 ? "" : "s"}`}**`, "", ...lines]
    .join("\n") + "\n";
}

/**
 * A relative change as a percentage to one decimal (`+12.5%`), in powers
 * of ten past a million percent; `nonFinite` (`-`) when it has none (a
 * change from 0).
 */
export function changeText(x: number, nonFinite = "-"): string {
  const p = 100 * x;
  if (!Number.isFinite(p)) return nonFinite;
  const sign = p > 0 ? "+" : "";
  return `${sign}${Math.abs(p) < 1e6 ? p.toFixed(1) : p.toExponential(1)}%`;
}

/** A metric's value as the change table shows it: as a report does, in powers of ten from 1e15 (not 400 digits for 1e308). */
export function showValue(v: unknown): string {
  return typeof v === "number" && Number.isFinite(v) && Math.abs(v) >= 1e15 ? v.toExponential(3) : showNumber(v);
}

/**
 * The change table as text: metric, a, b, change and relative change, and
 * a mark on changes for the worse; only `changedOnly` rows that changed.
 */
export function formatCompareTable(
  a: unknown,
  b: unknown,
  rows: readonly MetricRow[],
  options: { changedOnly?: boolean; gate?: CompareGate } = {},
): string {
  const out: string[][] = [["metric", "a", "b", "change", "change%", ""]];
  for (const m of compareMetrics(a, b, rows, options.gate)) {
    if (options.changedOnly && !changed(m)) continue;
    out.push([m.metric, showValue(m.a), showValue(m.b), showValue(m.delta), changeText(m.relative), m.verdict]);
  }
  return alignColumns(out, { align: ["left", "right", "right", "right", "right", "left"] }).map((l) => l.trimEnd())
    .join("\n") + "\n";
}

/**
 * What a chart of two documents draws: each run document's series as
 * {@link readRunDocument} cuts them, at most {@link CHART_GROUPS} groups
 * of each time series, and a note for each cut; undefined unless both are
 * run documents (a scenario's snapshots have no charts).
 */
function chartDocs(
  a: unknown,
  b: unknown,
  names: { a: string; b: string } = { a: "a", b: "b" },
): { docs: { doc: unknown; run: string }[]; notes: string[] } | undefined {
  const read = [readRunDocument(a), readRunDocument(b)];
  const notes: string[] = [];
  const docs: { doc: unknown; run: string }[] = [];
  for (const [i, r] of read.entries()) {
    if (typeof r === "string") return undefined;
    const run = i === 0 ? "a" : "b";
    const name = i === 0 ? names.a : names.b;
    notes.push(...r.notes.map((n) => `${name}: ${n}`));
    let hidden = 0;
    // A chart's axis spans its values: past ±MAX_VALUE/4 the span of two of them overflows (ticks of NaN).
    const drawable = (xs: unknown) =>
      Array.isArray(xs)
        ? xs.map((v) => (typeof v === "number" && Math.abs(v) > CHART_EXTREME ? (hidden++, null) : v))
        : xs;
    const seconds = valueAt(r.doc, ["distributions", "seconds"]) as Record<string, unknown> | undefined;
    const doc: Record<string, unknown> = { ...r.doc };
    if (seconds) {
      doc.distributions = {
        ...(r.doc.distributions as object),
        seconds: Object.fromEntries(CDF_COLUMNS.map((c) => [c, drawable(valueAt(seconds, [c]))])),
      };
    }
    const ts = r.doc.timeseries as Record<string, unknown> & { groups: Record<string, unknown>[] } | undefined;
    if (ts) {
      if (ts.groups.length > CHART_GROUPS) {
        notes.push(
          `${name}: timeseries: ${
            ts.groups.length.toLocaleString("en-US")
          } groups; the charts draw the first ${CHART_GROUPS}`,
        );
      }
      // A hand-made document may leave a group's series out: drawn as none.
      const groups = ts.groups.slice(0, CHART_GROUPS).map((g) => ({
        group: g.group,
        ...Object.fromEntries(GROUP_SERIES.map((k) => [k, drawable(valueAt(g, [k]) ?? [])])),
      }));
      doc.timeseries = {
        ...ts,
        time_s: drawable(ts.time_s),
        offered_rate: drawable(ts.offered_rate),
        achieved_rate: drawable(ts.achieved_rate),
        groups,
      };
    }
    if (hidden > 0) {
      notes.push(
        `${name}: ${hidden.toLocaleString("en-US")} values beyond ±${
          CHART_EXTREME.toPrecision(2)
        } not drawn (no axis spans them)`,
      );
    }
    docs.push({ doc, run });
  }
  return { docs, notes };
}

/**
 * What the page's charts leave out of two documents (series sampled to
 * {@link TASK_LIMITS}' `timeseriesPoints` points, groups past the first
 * few), one sentence each, starting with the document's name in `names`
 * (default `a` and `b`); none for documents `sim` wrote.
 */
export function compareReportNotes(a: unknown, b: unknown, names?: { a: string; b: string }): string[] {
  return chartDocs(a, b, names)?.notes ?? [];
}

/**
 * The comparison page: the change table (every number marked with its side
 * and path, the page contract), then for run documents the CDFs and time
 * series of both overlaid (at most {@link TASK_LIMITS}' `timeseriesPoints`
 * points per series: a longer one is sampled, and the page says so).
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
      const v = verdict(r, c);
      return [
        textCell(r.metric),
        numberCell(a, r.pathA, "a"),
        numberCell(b, r.pathB, "b"),
        `<td class="num ${v}">${showValue(c.delta)}</td>`,
        `<td class="num ${v}">${changeText(c.relative)}</td>`,
      ];
    }),
  );
  const charts = chartDocs(a, b);
  const notes = charts?.notes.map((n) => `<p class="note" data-note="drawn">${escapeHtml(n)}</p>`) ?? [];
  return page(`ServingCast comparison`, `a: ${names.a}   b: ${names.b}`, [
    section("Change table", body),
    ...(notes.length ? [section("What the charts draw", notes.join("\n"))] : []),
    ...(charts
      ? [
        section("Latency distributions (a and b)", await cdfCharts(charts.docs)),
        section("Over time (a and b)", await seriesCharts(charts.docs)),
      ]
      : []),
  ]);
}
