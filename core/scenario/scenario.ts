/**
 * Scenario files: a serving configuration (upstream instance and common
 * files) paired with SLO assertions on what it reports.
 *
 * ```yaml
 * name: llama8b-h100-chat            # optional; default: the file name
 * description: Two H100s serve chat traffic within the SLO
 * tags: [aggregated, h100]           # optional
 * instance_config: configs/x.yaml    # one path or a list; relative to this file
 * common_config: configs/y.yaml      # relative to this file
 * seed: 0                            # optional; overrides load_gen.seed
 * expect:                            # metric: "<op> <number>" (op: < <= > >= ==)
 *   ttft.p99: "< 0.5"
 *   TPOT(s).MEDIAN: "<= 0.02"
 *   request_throughput: ">= 15"
 * ```
 *
 * @module
 */
import { dirname, isAbsolute, join } from "node:path";
import { z } from "zod";
import type { SourceLocation } from "../config/errors.ts";
import { readYaml } from "../config/load.ts";
import type { FileSystem } from "../config/load.ts";
import { mapping, nonNegativeInt, positiveNumber } from "../config/schema.ts";
import type { YamlSource } from "../config/source.ts";
import { closest, validate } from "../config/validate.ts";
import { runFiles } from "../run.ts";
import type { RunOutput } from "../run.ts";
import { holds, parseBound } from "./assertion.ts";
import type { Bound } from "./assertion.ts";
import { METRIC_KEY_NAMES, resolveMetric } from "./metric_keys.ts";
import type { MetricRef } from "./metric_keys.ts";

const path = () => z.string({ error: "expected a file path" }).min(1, { error: "expected a file path" });

/** Schema of a scenario file. */
export const ScenarioFileSchema = mapping({
  name: z.string().min(1).optional(),
  description: z.string().optional(),
  tags: z.array(z.string()).optional(),
  instance_config: z.union([path(), z.array(path()).min(1)], {
    error: "expected a path or a list of paths to instance files",
  }),
  common_config: path(),
  seed: nonNegativeInt().optional(),
  expect: z.record(z.string(), z.unknown(), { error: 'expected a mapping of metric: "<op> <number>"' }).optional(),
  measured: z.array(
    mapping({
      metric: z.string().min(1),
      value: positiveNumber(),
      max_error: positiveNumber(),
      source: z.string().min(1),
    }),
    { error: "expected a list of {metric, value, max_error, source}" },
  ).min(1).optional(),
});

/** One assertion of a scenario. */
export interface ScenarioAssertion {
  /** The key as written. */
  readonly key: string;
  /** The metric it reads. */
  readonly metric: MetricRef;
  /** The bound. */
  readonly bound: Bound;
  /** Where it is written. */
  readonly location: SourceLocation;
}

/** A real measurement a validation scenario is held against. */
export interface Measurement {
  /** The key as written. */
  readonly key: string;
  /** The metric it compares. */
  readonly metric: MetricRef;
  /** The measured value, in the metric's unit. */
  readonly value: number;
  /** Largest accepted |simulated / measured − 1|. */
  readonly maxError: number;
  /** Where the number comes from. */
  readonly source: string;
  /** Where it is written. */
  readonly location: SourceLocation;
}

/** A loaded scenario. */
export interface Scenario {
  /** The scenario file. */
  readonly file: string;
  /** Its name. */
  readonly name: string;
  /** What it checks. */
  readonly description: string;
  /** Tags for selection. */
  readonly tags: readonly string[];
  /** Instance files, resolved against the scenario file. */
  readonly instancePaths: readonly string[];
  /** The common file, resolved against the scenario file. */
  readonly commonPath: string;
  /** Seed override. */
  readonly seed?: number;
  /** The assertions, in file order. */
  readonly assertions: readonly ScenarioAssertion[];
  /** Measurements to compare with (validation scenarios). */
  readonly measured: readonly Measurement[];
}

/** The outcome of one assertion. */
export interface AssertionResult {
  /** The assertion. */
  readonly assertion: ScenarioAssertion;
  /** The metric's value in this run. */
  readonly actual: number;
  /** Whether it holds. */
  readonly pass: boolean;
  /** `file:line:col: expect.<key>: expected <op> <n>, got <actual>`. */
  readonly message: string;
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

/** The outcome of one scenario. */
export interface ScenarioResult {
  /** The scenario. */
  readonly scenario: Scenario;
  /** The run. */
  readonly output: RunOutput;
  /** One per assertion. */
  readonly results: readonly AssertionResult[];
  /** One per measurement. */
  readonly measurements: readonly MeasurementResult[];
  /** True when every assertion holds and every measurement is within its band. */
  readonly pass: boolean;
}

function metricAt(src: YamlSource, path: (string | number)[], key: string, keyOnly: boolean): MetricRef {
  const metric = resolveMetric(key);
  if (!metric) {
    const near = closest(key, METRIC_KEY_NAMES);
    src.fail(path, `unknown metric '${key}'${near ? `; did you mean '${near}'?` : ""}`, keyOnly);
  }
  return metric;
}

function parseAssertions(src: YamlSource, expect: Record<string, unknown>): ScenarioAssertion[] {
  return Object.keys(expect).map((key) => {
    const metric = metricAt(src, ["expect", key], key, true);
    const bound = parseBound(expect[key]);
    if (!bound) {
      src.fail(
        ["expect", key],
        `expected "<op> <number>" with op one of < <= > >= ==, got ${JSON.stringify(expect[key])}`,
      );
    }
    return { key, metric, bound, location: src.locate(["expect", key], true) };
  });
}

/**
 * Reads and validates a scenario file.
 *
 * @throws {InputError} on a bad scenario file (the configs are checked when run)
 */
export function loadScenario(file: string, fs?: FileSystem): Scenario {
  const src = readYaml(file, fs);
  const s = validate(src, ScenarioFileSchema);
  if (!s.expect && !s.measured) src.fail([], "a scenario needs 'expect' assertions or 'measured' values");
  if (s.expect && Object.keys(s.expect).length === 0) src.fail(["expect"], "expected at least one assertion");
  const rel = (p: string) => (isAbsolute(p) ? p : join(dirname(file), p));
  const stem = file.replace(/^.*[\\/]/, "").replace(/\.ya?ml$/i, "");
  return {
    file,
    name: s.name ?? stem,
    description: s.description ?? "",
    tags: s.tags ?? [],
    instancePaths: (Array.isArray(s.instance_config) ? s.instance_config : [s.instance_config]).map(rel),
    commonPath: rel(s.common_config),
    seed: s.seed,
    assertions: parseAssertions(src, s.expect ?? {}),
    measured: (s.measured ?? []).map((m, i) => ({
      key: m.metric,
      metric: metricAt(src, ["measured", i, "metric"], m.metric, false),
      value: m.value,
      maxError: m.max_error,
      source: m.source,
      location: src.locate(["measured", i], false),
    })),
  };
}

const show = (x: number) => (Number.isNaN(x) ? "undefined (no value)" : String(Number(x.toPrecision(6))));

/**
 * Runs a scenario and checks its assertions.
 *
 * @throws {InputError} when the scenario's configuration is bad
 */
export function runScenario(scenario: Scenario, fs?: FileSystem): ScenarioResult {
  const output = runFiles(scenario.instancePaths, scenario.commonPath, { seed: scenario.seed, fs });
  const results = scenario.assertions.map((a) => {
    const actual = a.metric.read(output.summary);
    const pass = holds(a.bound, actual);
    const loc = a.location;
    const message =
      `${loc.file}:${loc.line}:${loc.col}: expect.${a.key}: expected ${a.metric.name} ${a.bound.op} ${a.bound.value}, got ${
        show(actual)
      }`;
    return { assertion: a, actual, pass, message };
  });
  const measurements = scenario.measured.map((m, i) => {
    const simulated = m.metric.read(output.summary);
    const error = simulated / m.value - 1;
    const pass = Math.abs(error) <= m.maxError;
    const loc = m.location;
    const message = `${loc.file}:${loc.line}:${loc.col}: measured[${i}]: ${m.metric.name} simulated ${
      show(simulated)
    } vs measured ${m.value} (${(error * 100).toFixed(1)}%), allowed ±${(m.maxError * 100).toFixed(0)}%`;
    return { measurement: m, simulated, error, pass, message };
  });
  return {
    scenario,
    output,
    results,
    measurements,
    pass: results.every((r) => r.pass) && measurements.every((m) => m.pass),
  };
}
