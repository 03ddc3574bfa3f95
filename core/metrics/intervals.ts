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

/** Chip vendors, from a catalog device name. */
export function vendorOf(chip: string): string {
  return /^MI\d/i.test(chip) ? "AMD" : /^(ATLAS|TEST_DEVICE)/.test(chip) ? "Huawei Ascend" : "NVIDIA";
}

/** The kind of a metric, by its canonical name (TTFT(s).MEDIAN, output_token_throughput(tok/s), …). */
export function kindOf(metric: string): MetricKind {
  const m = metric.toUpperCase();
  if (m.startsWith("TTFT")) return "TTFT";
  if (m.startsWith("TPOT") || m.startsWith("ITL")) return "TPOT/ITL";
  if (m.startsWith("E2E") || m.startsWith("BENCHMARK_DURATION")) return "E2E";
  return "throughput";
}

/** The empirical quantile of sorted values at p ∈ [0, 1], linearly interpolated. */
function quantile(sorted: readonly number[], p: number): number {
  const h = (sorted.length - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
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
  for (const s of strata(context, kind)) {
    const xs = pool.filter(s.match).map((r) => r.logRatio).sort((a, b) => a - b);
    if (xs.length < MIN_STRATUM_ROWS) continue;
    const qLo = quantile(xs, (1 - confidence) / 2);
    const qHi = quantile(xs, (1 + confidence) / 2);
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
