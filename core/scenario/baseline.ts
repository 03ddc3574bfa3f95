/**
 * Baselines: a snapshot of every metric a scenario reports, stored as JSON
 * (`scenarios/__baselines__/<name>.json`), and the comparison of a run with
 * it within per-metric relative tolerances.
 *
 * The comparison is one-sided by default: a metric that is better lower (a
 * latency) fails only when it rose beyond its tolerance, one that is better
 * higher (a throughput) only when it fell beyond it; a metric with no better
 * direction (token counts, offered rate, occupancies) fails either way.
 * `strict` checks every metric both ways. MIN and MAX statistics (single
 * requests) are stored but compared only with `min_max`.
 *
 * @module
 */
import { dirname, join } from "node:path";
import type { FileSystem } from "../config/load.ts";
import { alignColumns } from "../text/columns.ts";
import { denoFileSystem } from "../config/load.ts";
import { clip, InputError } from "../config/errors.ts";
import { ALL_STATISTICS, EXT_COLUMNS, METRIC_COLUMNS, OVERALL_KEYS } from "../metrics/summary.ts";
import type { Summary } from "../metrics/summary.ts";
import { resolveMetric, RUN_METRICS } from "./metric_keys.ts";
import type { MetricRef } from "./metric_keys.ts";
import type { CheckResult } from "./check_result.ts";
import { MAX_RATE_MEETING } from "./scenario.ts";
import type { BaselineSpec, Scenario } from "./scenario.ts";

/** Resolves a canonical name, which every name a snapshot writes must be. */
function canonical(name: string): MetricRef {
  const m = resolveMetric(name);
  if (!m || m.name !== name) throw new Error(`baseline: '${name}' is not a canonical metric name`);
  return m;
}

/** Per-request statistics, every column and statistic (NaN where a column has no value). */
const DISTRIBUTIONS: readonly MetricRef[] = [...METRIC_COLUMNS, ...EXT_COLUMNS].flatMap((c) =>
  ALL_STATISTICS.map((st) => canonical(`${c}.${st}`))
);

/** The overall summary. */
const OVERALL: readonly MetricRef[] = OVERALL_KEYS.map(canonical);

/** Run-level figures (stored only where the run defines them: goodput needs SLOs, MFU a FLOP count). */
const RUN_LEVEL: readonly MetricRef[] = RUN_METRICS.map(canonical);

/** `max_rate_meeting`, derived from a sweep: a capacity, better higher. */
const MAX_RATE: MetricRef = { name: MAX_RATE_MEETING, read: () => NaN, unit: "req/s", better: "higher", gated: false };

/** Every metric a snapshot may hold per run, by canonical name. */
const BY_NAME = new Map<string, MetricRef>(
  [...DISTRIBUTIONS, ...OVERALL, ...RUN_LEVEL, MAX_RATE].map((m) => [m.name, m]),
);

/**
 * Every reported metric of a run, keyed `<prefix>.<canonical name>` (no
 * prefix for the base run): each column's statistics (ext columns, P95 and
 * P99.9 included), the overall summary, and the run-level figures that are
 * finite for this run.
 */
export function snapshot(s: Summary, prefix: string): Record<string, number> {
  const p = prefix ? `${prefix}.` : "";
  const out: Record<string, number> = {};
  for (const m of [...DISTRIBUTIONS, ...OVERALL]) out[`${p}${m.name}`] = m.read(s);
  for (const m of RUN_LEVEL) {
    const v = m.read(s);
    if (Number.isFinite(v)) out[`${p}${m.name}`] = v;
  }
  return out;
}

/** Why a file could not be read, in a few words (the reader's own words for a FIFO, a device or a size). */
function unreadable(e: unknown): string {
  if (e instanceof Deno.errors.IsADirectory) return "is a directory";
  if (e instanceof Deno.errors.PermissionDenied) return "permission denied";
  return (e instanceof Error ? e.message.split("\n")[0] : String(e)).replace(/ \(os error \d+\).*$/, "");
}

/**
 * The stored snapshot, or undefined when there is none (no file). Read
 * through the one input reader: a FIFO, a device or a file over its size
 * limit is refused before it is opened.
 *
 * @throws {InputError} when the file cannot be read or is not a snapshot: an object of metric → number or null,
 * every number within a double's range (JSON's `1e999` is not one)
 */
export function readBaseline(file: string, fs: FileSystem = denoFileSystem): Record<string, number | null> | undefined {
  let text: string;
  try {
    text = fs.readText(file);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) return undefined;
    throw new InputError({ file }, `cannot read: ${clip(unreadable(e), 200)}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    const why = e instanceof SyntaxError ? e.message : String(e);
    throw new InputError(
      { file },
      `not a baseline snapshot: ${clip(why, 120)} (rewrite it with \`deno task baseline\`)`,
    );
  }
  const rewrite = "(rewrite it with `deno task baseline`)";
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new InputError({ file }, `not a baseline snapshot: expected an object of metric → number or null ${rewrite}`);
  }
  const snap = data as Record<string, unknown>;
  for (const k of Object.keys(snap)) {
    const v = snap[k];
    if (v !== null && typeof v !== "number") {
      throw new InputError(
        { file, keyPath: clip(k) },
        `not a baseline snapshot: expected an object of metric → number or null, got ${kindOf(v)} ${rewrite}`,
      );
    }
    if (typeof v === "number" && !Number.isFinite(v)) {
      throw new InputError(
        { file, keyPath: clip(k) },
        `a number beyond ±1.8e308, the range of a double; a snapshot holds measured values ${rewrite}`,
      );
    }
  }
  return snap as Record<string, number | null>;
}

/** The JSON type of a value, as a message names it. */
const kindOf = (v: unknown): string =>
  v === null ? "null" : Array.isArray(v) ? "an array" : typeof v === "object" ? "an object" : `a ${typeof v}`;

/** A snapshot as the JSON a baseline file holds (NaN as null, keys sorted). */
export function formatBaseline(snap: Record<string, number>): string {
  const keys = Object.keys(snap).sort();
  return JSON.stringify(Object.fromEntries(keys.map((k) => [k, Number.isNaN(snap[k]) ? null : snap[k]])), null, 2) +
    "\n";
}

/**
 * The metric of a snapshot key `<run prefix>.<canonical name>`: variants
 * and sweep points have a prefix, which may hold dots itself
 * (`load_gen.request_rate=2.5`), so the longest canonical name it ends with.
 */
export function baselineMetric(key: string): MetricRef | undefined {
  // The longest canonical suffix starts at the earliest dot: one lookup per dot, not one per metric.
  const whole = BY_NAME.get(key);
  if (whole) return whole;
  for (let dot = key.indexOf("."); dot >= 0; dot = key.indexOf(".", dot + 1)) {
    const m = BY_NAME.get(key.slice(dot + 1));
    if (m) return m;
  }
  return undefined;
}

/** Which way a metric is checked: a rise, a fall, or both. */
type Checked = "rise" | "fall" | "both";

const isMinMax = (m: MetricRef | undefined) => !!m && /\.(MIN|MAX)$/.test(m.name);

/**
 * Compares a run's snapshot with the stored baseline.
 *
 * @returns one check: passing, or failing with a table of metric, baseline, now, change and tolerance
 */
export function compareBaseline(
  s: Scenario,
  spec: BaselineSpec,
  stored: Record<string, number | null> | undefined,
  now: Record<string, number>,
): CheckResult {
  const loc = s.source.locate(["baseline"], true);
  const at = `${loc.file}:${loc.line}:${loc.col}: baseline`;
  const file = spec.file;
  // The command that rewrites this snapshot (naming its folder when it is not __baselines__ beside the scenario).
  const dir = dirname(file);
  const command = `deno task baseline ${s.file}${
    dir === join(dirname(s.file), "__baselines__") ? "" : ` --baseline-dir ${dir}`
  }`;
  const fix = `if intended, run \`${command}\``;
  if (!stored) {
    return {
      name: "baseline",
      pass: false,
      message: `${at}: no baseline at ${file}: run \`${command}\``,
      actual: NaN,
    };
  }
  const rows: string[][] = [];
  const improved: string[] = [];
  const keys = [...new Set([...Object.keys(stored), ...Object.keys(now)])]
    .filter((k) => spec.minMax || !isMinMax(baselineMetric(k)))
    .sort();
  for (const k of keys) {
    const metric = baselineMetric(k);
    // Own properties only: a stored key such as 'constructor' is a metric like any other.
    const b = (Object.hasOwn(stored, k) ? stored[k] : undefined) ?? NaN;
    const n = Object.hasOwn(now, k) ? now[k] : NaN;
    const tol = (metric && spec.tolerances.get(metric.name)) ?? spec.tolerance;
    const checked: Checked = spec.strict || !metric || metric.better === "none"
      ? "both"
      : metric.better === "lower"
      ? "rise"
      : "fall";
    const slack = tol * Math.abs(b) + 1e-12;
    const rose = n - b > slack;
    const fell = b - n > slack;
    const defined = Number.isNaN(b) === Number.isNaN(n) && k in stored && k in now;
    const same = n === b || (Number.isNaN(b) && Number.isNaN(n));
    const pass = defined &&
      (same || (checked === "both" ? !rose && !fell : checked === "rise" ? !rose : !fell));
    const change = percentChange(b, n);
    if (!pass) {
      const pct = (tol * 100).toFixed(1);
      rows.push([
        k,
        Number.isNaN(b) ? "—" : fmt(b),
        Number.isNaN(n) ? "—" : fmt(n),
        change,
        checked === "both" ? `±${pct}%` : checked === "rise" ? `+${pct}% max` : `-${pct}% min`,
      ]);
    } else if (rose || fell) improved.push(`${k} ${change}`);
  }
  if (rows.length === 0) {
    const better = improved.length
      ? `; ${improved.length} improved beyond it (${improved.slice(0, 3).join(", ")}${
        improved.length > 3 ? ", …" : ""
      }; to hold the run to them, run \`${command}\`)`
      : "";
    return {
      name: "baseline",
      pass: true,
      message: `${at}: ${keys.length} metrics within tolerance${better}`,
      actual: NaN,
    };
  }
  const head = ["metric", "baseline", "now", "change", "tolerance"];
  const table = alignColumns([head, ...rows], { start: "  ", align: (i) => (i === 0 ? "left" : "right") });
  return {
    name: "baseline",
    pass: false,
    message: [
      `${at}: ${rows.length} of ${keys.length} metrics moved beyond their tolerance (${file}; ${fix})`,
      ...table,
    ].join("\n"),
    actual: NaN,
  };
}

/** A stored or measured value as the mismatch table shows it (`—` for one that is not finite). */
function fmt(x: number): string {
  if (!Number.isFinite(x)) return "—";
  if (Math.abs(x) >= 1e15) return x.toExponential(4);
  return Math.abs(x) >= 1000 ? x.toFixed(1) : Number(x.toPrecision(5)).toString();
}

/** The change from `b` to `n` in percent to one decimal (`+12.5%`); `—` from 0, or when it is not finite. */
function percentChange(b: number, n: number): string {
  if (!Number.isFinite(b) || b === 0 || !Number.isFinite(n)) return "—";
  const p = (n / b - 1) * 100;
  if (!Number.isFinite(p)) return "—";
  return `${n >= b ? "+" : ""}${Math.abs(p) < 1e6 ? p.toFixed(1) : p.toExponential(1)}%`;
}
