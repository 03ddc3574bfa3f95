/**
 * Prediction intervals: how far a measured value may lie from a simulated
 * one, from the errors the simulator made on published measurements it was
 * never fitted to. `deno task validate` keeps the log ratio ln(simulated /
 * measured) of every held-out row (each predicted with the constants fitted
 * without its own source) with its stratum: engine, chip vendor, dense or
 * MoE, and the metric's kind. An interval at confidence c takes the
 * (1 − c) / 2 and (1 + c) / 2 quantiles of the log ratios of the narrowest
 * stratum holding at least {@link MIN_STRATUM_ROWS} rows (dropping the
 * engine, then the vendor, then the architecture), so that
 * measured ∈ [simulated · e^(−q_hi), simulated · e^(−q_lo)].
 *
 * @module
 */
import committed from "./data/residuals.json" with { type: "json" };
import { platformOf } from "../hardware/devices.ts";

/** The kinds of metric an interval is kept for. */
export type MetricKind = "TTFT" | "TPOT/ITL" | "E2E" | "throughput";

/** One held-out row's error, as `deno task validate` keeps it. */
export interface Residual {
  /** The row's id. */
  readonly id: string;
  /** Its source (an interval for one of its rows leaves the source's own residuals out, when asked). */
  readonly source: string;
  /** The engine it ran (`serving_config.engine`). */
  readonly engine: string;
  /** Its chip vendor. */
  readonly vendor: string;
  /** "dense" or "MoE". */
  readonly architecture: string;
  /** The metric's kind. */
  readonly kind: MetricKind;
  /** ln(simulated / measured). */
  readonly logRatio: number;
}

/** Where a run sits among the strata. */
export interface IntervalContext {
  /** The engine (`serving_config.engine`). */
  readonly engine: string;
  /** The chip vendor. */
  readonly vendor: string;
  /** "dense" or "MoE". */
  readonly architecture: string;
}

/** An interval for one simulated value. */
export interface PredictionInterval {
  /** The simulated value. */
  readonly simulated: number;
  /** The lower end for the measured value. */
  readonly low: number;
  /** The upper end. */
  readonly high: number;
  /** Its confidence, (0, 1). */
  readonly confidence: number;
  /** The stratum whose residuals set it ("vllm · NVIDIA · dense · TTFT", or fewer keys). */
  readonly stratum: string;
  /** How many held-out rows that stratum holds. */
  readonly rows: number;
}

/** The held-out residuals `deno task validate` wrote (core/metrics/data/residuals.json). */
export const RESIDUALS: readonly Residual[] = (committed as { residuals: Residual[] }).residuals;

/** A stratum needs this many held-out rows to set an interval; fewer, and a wider one is taken. */
export const MIN_STRATUM_ROWS = 8;

/**
 * … and rows from this many sources. A source's rows share its harness and
 * build, so their errors move together: a stratum of a few sources gives an
 * interval as narrow as their agreement, not as wide as a new source's
 * error; and each source weighs one in all, its rows sharing the weight.
 * Measured leave-one-source-out over the 314 held-out rows of 2026-12: with
 * 8 rows of any sources, equally weighted, the 50/80/90% intervals covered
 * 33/58/67% of the rows; with 8 sources a stratum and sources weighed
 * equally, 52/81/85%.
 */
export const MIN_STRATUM_SOURCES = 8;

const VENDORS = { cuda: "NVIDIA", rocm: "AMD", ascend: "Huawei Ascend" } as const;

/** Chip vendors, from a catalog device name. */
export function vendorOf(chip: string): string {
  return VENDORS[platformOf(chip)];
}

/** The kind of a metric, by its canonical name (TTFT(s).MEDIAN, output_token_throughput(tok/s), …). */
export function kindOf(metric: string): MetricKind {
  const m = metric.toUpperCase();
  if (m.startsWith("TTFT")) return "TTFT";
  if (m.startsWith("TPOT") || m.startsWith("ITL")) return "TPOT/ITL";
  if (m.startsWith("E2E") || m.startsWith("BENCHMARK_DURATION")) return "E2E";
  return "throughput";
}

/**
 * The quantile at p ∈ [0, 1] of weighted values: the value where the
 * cumulative weight, each value's taken at its midpoint, reaches p of the
 * total (linear between neighbours, clamped at the ends).
 */
function weightedQuantile(values: readonly { x: number; w: number }[], p: number): number {
  const v = [...values].sort((a, b) => a.x - b.x);
  const total = v.reduce((a, b) => a + b.w, 0);
  let acc = 0;
  const mid = v.map((e) => {
    const m = (acc + e.w / 2) / total;
    acc += e.w;
    return m;
  });
  if (p <= mid[0]) return v[0].x;
  for (let i = 1; i < v.length; i++) {
    if (p <= mid[i]) return v[i - 1].x + ((p - mid[i - 1]) / (mid[i] - mid[i - 1])) * (v[i].x - v[i - 1].x);
  }
  return v[v.length - 1].x;
}

/** The strata tried for a context and kind, narrowest first. */
function strata(c: IntervalContext, kind: MetricKind): { name: string; match: (r: Residual) => boolean }[] {
  return [
    {
      name: `${c.engine} · ${c.vendor} · ${c.architecture} · ${kind}`,
      match: (r) => r.engine === c.engine && r.vendor === c.vendor && r.architecture === c.architecture,
    },
    {
      name: `${c.vendor} · ${c.architecture} · ${kind}`,
      match: (r) => r.vendor === c.vendor && r.architecture === c.architecture,
    },
    { name: `${c.architecture} · ${kind}`, match: (r) => r.architecture === c.architecture },
    { name: kind, match: () => true },
  ];
}

/**
 * The interval for a simulated value of a metric kind, from `residuals`
 * (leaving out those of `excludeSource`, for an honest coverage check);
 * undefined when no stratum, not even the kind alone, holds
 * {@link MIN_STRATUM_ROWS} rows.
 *
 * @example An 80% interval around a simulated TTFT
 * ```ts
 * import { predictionInterval } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const residuals = [-0.3, -0.2, -0.1, 0, 0, 0.1, 0.1, 0.2, 0.3, 0.4].map((logRatio, i) => ({
 *   id: `r${i}`, source: `s${i}`, engine: "vllm", vendor: "NVIDIA", architecture: "dense", kind: "TTFT" as const,
 *   logRatio,
 * }));
 * const ctx = { engine: "vllm", vendor: "NVIDIA", architecture: "dense" };
 * const i = predictionInterval(0.1, "TTFT", ctx, 0.8, residuals)!;
 * assert.ok(i.low < 0.1 && 0.1 < i.high); // the measured value may lie on either side
 * assert.equal(i.rows, 10);
 * ```
 */
export function predictionInterval(
  simulated: number,
  kind: MetricKind,
  context: IntervalContext,
  confidence: number,
  residuals: readonly Residual[],
  excludeSource?: string,
): PredictionInterval | undefined {
  const pool = residuals.filter((r) => r.kind === kind && r.source !== excludeSource);
  const tried = strata(context, kind);
  for (const [i, s] of tried.entries()) {
    const members = pool.filter(s.match);
    // The kind alone, the widest stratum, needs only the rows.
    const sources = i === tried.length - 1 ? Infinity : new Set(members.map((r) => r.source)).size;
    if (members.length < MIN_STRATUM_ROWS || sources < MIN_STRATUM_SOURCES) continue;
    // Each source weighs one in all (a deployment the interval is for is a new source): its rows share the weight.
    const perSource = new Map<string, number>();
    for (const r of members) perSource.set(r.source, (perSource.get(r.source) ?? 0) + 1);
    const xs = members.map((r) => ({ x: r.logRatio, w: 1 / perSource.get(r.source)! }));
    const qLo = weightedQuantile(xs, (1 - confidence) / 2);
    const qHi = weightedQuantile(xs, (1 + confidence) / 2);
    return {
      simulated,
      low: simulated * Math.exp(-qHi),
      high: simulated * Math.exp(-qLo),
      confidence,
      stratum: s.name,
      rows: xs.length,
    };
  }
  return undefined;
}

/**
 * A one-sided bound on the measured value at confidence c: the value it
 * stays below (`upper`) or above with probability c, from the same strata;
 * undefined when no stratum holds enough rows.
 */
export function predictionBound(
  simulated: number,
  kind: MetricKind,
  context: IntervalContext,
  confidence: number,
  side: "upper" | "lower",
  residuals: readonly Residual[],
): number | undefined {
  // A one-sided c bound is an end of the two-sided interval at 2c − 1.
  const i = predictionInterval(simulated, kind, context, 2 * confidence - 1, residuals);
  return i && (side === "upper" ? i.high : i.low);
}
