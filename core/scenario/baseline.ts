/**
 * Baselines: a snapshot of every metric a scenario reports, stored as JSON
 * (`scenarios/__baselines__/<name>.json`), and the comparison of a run with
 * it within per-metric relative tolerances.
 *
 * @module
 */
import type { FileSystem } from "../config/load.ts";
import { denoFileSystem } from "../config/load.ts";
import { METRIC_COLUMNS, OVERALL_KEYS, STATISTICS } from "../metrics/summary.ts";
import type { Summary } from "../metrics/summary.ts";
import type { CheckResult } from "./runner.ts";
import type { Scenario } from "./scenario.ts";

/** Every reported metric of a run, keyed `<prefix>.<metric>` (no prefix for the base run). */
export function snapshot(s: Summary, prefix: string): Record<string, number> {
  const p = prefix ? `${prefix}.` : "";
  const out: Record<string, number> = {};
  for (const c of METRIC_COLUMNS) for (const st of STATISTICS) out[`${p}${c}.${st}`] = s.perMetric[c][st];
  for (const k of OVERALL_KEYS) out[`${p}${k}`] = s.overall[k];
  return out;
}

/** The stored snapshot, or undefined when there is none. */
export function readBaseline(file: string, fs: FileSystem = denoFileSystem): Record<string, number | null> | undefined {
  let text: string;
  try {
    text = fs.readText(file);
  } catch {
    return undefined;
  }
  return JSON.parse(text) as Record<string, number | null>;
}

/** A snapshot as the JSON a baseline file holds (NaN as null, keys sorted). */
export function formatBaseline(snap: Record<string, number>): string {
  const keys = Object.keys(snap).sort();
  return JSON.stringify(Object.fromEntries(keys.map((k) => [k, Number.isNaN(snap[k]) ? null : snap[k]])), null, 2) +
    "\n";
}

/** Every metric a snapshot holds per run, by canonical name (what `snapshot` writes after the run prefix). */
const METRIC_NAMES = Object.keys(snapshot(
  {
    perMetric: Object.fromEntries(METRIC_COLUMNS.map((c) => [c, {}])),
    overall: {},
  } as unknown as Summary,
  "",
));

/** The canonical metric of a snapshot key `<run prefix>.<metric>` (variants and sweep points have a prefix). */
const metricOf = (key: string) => METRIC_NAMES.find((m) => key === m || key.endsWith(`.${m}`)) ?? key;

/**
 * Compares a run's snapshot with the stored baseline.
 *
 * @returns one check: passing, or failing with a table of metric, baseline, now, change and tolerance
 */
export function compareBaseline(
  s: Scenario,
  stored: Record<string, number | null> | undefined,
  now: Record<string, number>,
): CheckResult {
  const spec = s.baseline!;
  const loc = s.source.locate(["baseline"], true);
  const at = `${loc.file}:${loc.line}:${loc.col}: baseline`;
  const file = spec.file;
  if (!stored) {
    return {
      name: "baseline",
      pass: false,
      message: `${at}: no baseline at ${file}: run \`deno task baseline ${s.file}\``,
      actual: NaN,
    };
  }
  const rows: string[][] = [];
  const keys = [...new Set([...Object.keys(stored), ...Object.keys(now)])].sort();
  for (const k of keys) {
    const b = stored[k] ?? NaN;
    const n = now[k] ?? NaN;
    const tol = spec.tolerances.get(metricOf(k)) ?? spec.tolerance;
    const same = (Number.isNaN(b) && Number.isNaN(n)) || Math.abs(n - b) <= tol * Math.abs(b) + 1e-12;
    if (!same || !(k in stored) || !(k in now)) {
      const change = Number.isFinite(b) && b !== 0 && Number.isFinite(n)
        ? `${n >= b ? "+" : ""}${((n / b - 1) * 100).toFixed(1)}%`
        : "—";
      rows.push([
        k,
        Number.isNaN(b) ? "—" : fmt(b),
        Number.isNaN(n) ? "—" : fmt(n),
        change,
        `±${(tol * 100).toFixed(1)}%`,
      ]);
    }
  }
  if (rows.length === 0) {
    return { name: "baseline", pass: true, message: `${at}: ${keys.length} metrics within tolerance`, actual: NaN };
  }
  const head = ["metric", "baseline", "now", "change", "tolerance"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) =>
    "  " + r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  return {
    name: "baseline",
    pass: false,
    message: [
      `${at}: ${rows.length} of ${keys.length} metrics moved beyond their tolerance (${file}; if intended, run \`deno task baseline ${s.file}\`)`,
      line(head),
      ...rows.map(line),
    ].join("\n"),
    actual: NaN,
  };
}

function fmt(x: number): string {
  return Math.abs(x) >= 1000 ? x.toFixed(1) : Number(x.toPrecision(5)).toString();
}
