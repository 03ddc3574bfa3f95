/**
 * Runs a scenario: its base run, each variant, or each sweep point (plus
 * the bisection runs that locate `max_rate_meeting`), then checks every
 * assertion, measurement and baseline.
 *
 * @module
 */
import type { FileSystem } from "../config/load.ts";
import { readYaml } from "../config/load.ts";
import type { YamlSource } from "../config/source.ts";
import { runSources } from "../run.ts";
import { overloadSummary } from "../report/diagnostics.ts";
import type { RunOutput } from "../run.ts";
import { evalExpr, holds } from "./assertion.ts";
import { compareBaseline, readBaseline, snapshot } from "./baseline.ts";
import { resolveMetric } from "./metric_keys.ts";
import { MAX_RATE_MEETING } from "./scenario.ts";
import type { ConfigRef, Measurement, Scenario, ScenarioAssertion, ScenarioOverride } from "./scenario.ts";

/** The outcome of one check (an assertion, a point's assertion, the baseline). */
export interface CheckResult {
  /** A short name (the test step's). */
  readonly name: string;
  /** Whether it holds. */
  readonly pass: boolean;
  /** `file:line:col: key: expected …, got …` (and more lines for a baseline table). */
  readonly message: string;
  /** The value the run produced (NaN for a baseline check). */
  readonly actual: number;
}

/** How a simulated value compares with a measurement. */
export interface MeasurementResult {
  /** The measurement. */
  readonly measurement: Measurement;
  /** The simulated value. */
  readonly simulated: number;
  /** simulated / measured − 1. */
  readonly error: number;
  /** |error| ≤ max_error. */
  readonly pass: boolean;
  /** `file:line:col: measured[i]: …` */
  readonly message: string;
}

/** A run of a sweep: the swept values and the outcome. */
export interface SweepPoint {
  /** The value of each swept key, in axis order. */
  readonly values: readonly number[];
  /** The run. */
  readonly output: RunOutput;
}

/** The outcome of one scenario. */
export interface ScenarioResult {
  /** The scenario. */
  readonly scenario: Scenario;
  /** The base run (or the first variant, or the first sweep point). */
  readonly output: RunOutput;
  /** Every run by name: "" for the base, a variant's name, or `key=value` for sweep points. */
  readonly runs: ReadonlyMap<string, RunOutput>;
  /** Sweep points, in order (bisection runs included). */
  readonly points: readonly SweepPoint[];
  /** The largest swept value meeting every SLO, when the scenario asks. */
  readonly maxRateMeeting?: number;
  /** Checks, in file order. */
  readonly checks: readonly CheckResult[];
  /** One per measurement. */
  readonly measurements: readonly MeasurementResult[];
  /** Snapshot of every metric, for `deno task baseline`. */
  readonly snapshot: Record<string, number>;
  /** True when every check holds and every measurement is within its band. */
  readonly pass: boolean;
}

const show = (x: number) => (Number.isNaN(x) ? "undefined (no value)" : String(Number(x.toPrecision(6))));

/** The sources of a configuration with overrides applied. */
function sources(
  s: Scenario,
  c: ConfigRef,
  extra: readonly ScenarioOverride[],
  fs?: FileSystem,
): [YamlSource[], YamlSource] {
  const all = [...c.overrides, ...extra];
  const forInstances = all.filter((o) => o.path[0] === "instance_groups");
  const forCommon = all.filter((o) => o.path[0] !== "instance_groups");
  const inst = "files" in c.instances
    ? c.instances.files.map((f, i) => readYaml(f, fs).view([], i === 0 ? forInstances : []))
    : [s.source.view(c.instances.inline, forInstances)];
  const common = "file" in c.common
    ? readYaml(c.common.file, fs).view([], forCommon)
    : s.source.view(c.common.inline, forCommon);
  return [inst, common];
}

function run(s: Scenario, c: ConfigRef, extra: readonly ScenarioOverride[], fs?: FileSystem): RunOutput {
  const [inst, common] = sources(s, c, extra, fs);
  return runSources(inst, common, { seed: s.seed, fs, goodput: s.goodput });
}

/**
 * Why a run's latencies do not count as SLOs met (it does not keep up with
 * its offered load), or "" when it keeps up.
 */
export function overloadNote(out: RunOutput): string {
  return overloadSummary(out.summary, out.plan.input.workload.maxConcurrency) ?? "";
}

/** An SLO on a latency as the user sees it: an upper bound, met only while the deployment keeps up. */
const gated = (a: ScenarioAssertion) => a.metric.gated && (a.bound.op === "<" || a.bound.op === "<=");

/** Reads a metric (a name as written) from a run. */
function read(out: RunOutput | undefined, name: string): number {
  const m = resolveMetric(name);
  return out && m ? m.read(out.summary) : NaN;
}

/**
 * Whether an assertion on the run's own metrics holds for `out`: the bound
 * holds and, for a latency as the user sees it, the deployment keeps up.
 */
function passes(a: ScenarioAssertion, out: RunOutput): boolean {
  return (!gated(a) || out.summary.load.keepsUp) &&
    holds(a.bound, a.metric.read(out.summary), evalExpr(a.bound.rhs, (n) => read(out, n)));
}

/**
 * Checks one assertion.
 *
 * @param out the run the metric was read from (its load gates latency SLOs), if one
 */
function check(
  a: ScenarioAssertion,
  actual: number,
  lookup: (name: string) => number,
  prefix: string,
  hint = "",
  out?: RunOutput,
): CheckResult {
  const expected = evalExpr(a.bound.rhs, lookup);
  const bound = holds(a.bound, actual, expected);
  const overload = out ? overloadNote(out) : "";
  const pass = bound && !(gated(a) && overload);
  const literal = a.bound.rhs.kind === "num";
  const loc = a.location;
  const message = `${loc.file}:${loc.line}:${loc.col}: ${prefix}${a.key}: expected ${a.metric.name} ${a.bound.text}${
    literal ? "" : ` (= ${show(expected)})`
  }, got ${show(actual)}${pass ? "" : hint}${overload && !pass ? `; ${overload}` : ""}`;
  return { name: `${prefix}${a.key} ${a.bound.text}`, pass, message, actual };
}

/**
 * Runs a scenario and checks it.
 *
 * @param fs where files are read from (default: the real filesystem)
 * @throws {InputError} when the scenario's configuration is bad
 */
export function runScenario(scenario: Scenario, fs?: FileSystem): ScenarioResult {
  const s = scenario;
  const runs = new Map<string, RunOutput>();
  const checks: CheckResult[] = [];
  const points: SweepPoint[] = [];
  let maxRate: number | undefined;
  let maxRateNote = "";

  if (s.sweep) {
    const [a, b] = s.sweep.axes;
    const grid = b ? a.values.flatMap((x) => b.values.map((y) => [x, y])) : a.values.map((x) => [x]);
    const at = (vals: number[]) =>
      s.sweep!.axes.map((ax, i) => ({ key: ax.key, path: ax.path, value: vals[i], location: ax.location }));
    const name = (vals: number[]) => s.sweep!.axes.map((ax, i) => `${ax.key}=${vals[i]}`).join(",");
    for (const vals of grid) {
      const out = run(s, s.config, at(vals), fs);
      points.push({ values: vals, output: out });
      runs.set(name(vals), out);
    }
    // Per-point assertions, with the nearest passing point when one fails.
    for (const p of s.perPoint) {
      const passing = points.filter((q) => passes(p, q.output));
      const best = passing.length ? Math.max(...passing.map((q) => q.values[0])) : undefined;
      const hint = best !== undefined ? `; it holds up to ${a.key} = ${best}` : `; it holds at no swept point`;
      for (const pt of points) {
        const actual = p.metric.read(pt.output.summary);
        checks.push(
          check(p, actual, (n) => read(pt.output, n), `[${name(pt.values as number[])}] `, hint, pt.output),
        );
      }
    }
    if (s.slos.length) {
      const meets = (out: RunOutput) => s.slos.every((slo) => passes(slo, out));
      const sorted = [...points].sort((p, q) => p.values[0] - q.values[0]);
      const firstFail = sorted.findIndex((p) => !meets(p.output));
      if (firstFail === -1) {
        maxRate = sorted[sorted.length - 1].values[0];
        maxRateNote = " (every swept value meets the SLOs: at least this)";
      } else if (firstFail === 0) {
        maxRate = 0;
        maxRateNote = ` (no swept value meets the SLOs; the lowest is ${sorted[0].values[0]})`;
      } else {
        // Bisection between the last passing and the first failing point, to 1% of the interval.
        let lo = sorted[firstFail - 1].values[0];
        let hi = sorted[firstFail].values[0];
        const stop = (hi - lo) / 100;
        while (hi - lo > stop) {
          const mid = (lo + hi) / 2;
          const out = run(s, s.config, at([mid]), fs);
          points.push({ values: [mid], output: out });
          if (meets(out)) lo = mid;
          else hi = mid;
        }
        maxRate = lo;
      }
    }
  } else if (s.variants.size) {
    for (const [name, c] of s.variants) runs.set(name, run(s, c, [], fs));
  } else {
    runs.set("", run(s, s.config, [], fs));
  }

  const base = runs.get("") ?? runs.values().next().value!;
  const lookup = (name: string) => {
    const first = name.split(".")[0];
    if (s.variants.has(first)) return read(runs.get(first), name.slice(first.length + 1));
    if (name === MAX_RATE_MEETING) return maxRate ?? NaN;
    return read(base, name);
  };
  for (const a of s.assertions) {
    const derived = a.metric.name === MAX_RATE_MEETING;
    const out = derived ? undefined : a.variant ? runs.get(a.variant)! : base;
    const actual = out ? a.metric.read(out.summary) : maxRate ?? NaN;
    const hint = derived ? `: the SLOs hold up to ${s.sweep!.axes[0].key} = ${show(actual)}${maxRateNote}` : "";
    checks.push(check(a, actual, lookup, "expect.", hint, out));
  }

  const measurements = s.measured.map((m, i) => {
    const simulated = m.metric.read(base.summary);
    const error = simulated / m.value - 1;
    const pass = Math.abs(error) <= m.maxError;
    const loc = m.location;
    const message = `${loc.file}:${loc.line}:${loc.col}: measured[${i}]: ${m.metric.name} simulated ${
      show(simulated)
    } vs measured ${m.value} (${(error * 100).toFixed(1)}%), allowed ±${(m.maxError * 100).toFixed(0)}%`;
    return { measurement: m, simulated, error, pass, message };
  });

  const snap: Record<string, number> = {};
  for (const [name, out] of runs) Object.assign(snap, snapshot(out.summary, name));
  if (maxRate !== undefined) snap[MAX_RATE_MEETING] = maxRate;
  if (s.baseline) {
    const stored = readBaseline(s.baseline.file, fs);
    checks.push(compareBaseline(s, stored, snap));
  }
  return {
    scenario: s,
    output: base,
    runs,
    points,
    maxRateMeeting: maxRate,
    checks,
    measurements,
    snapshot: snap,
    pass: checks.every((c) => c.pass) && measurements.every((m) => m.pass),
  };
}
