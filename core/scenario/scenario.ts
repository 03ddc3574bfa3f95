/**
 * Scenario files: serving configurations paired with SLO assertions, run
 * like tests. The format is documented in `docs/scenarios.md`; its JSON
 * Schema (`scenarios/scenario.schema.json`) is exported from
 * {@link ScenarioFileSchema}.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { z } from "zod";
import { clip, describeValue } from "../config/errors.ts";
import type { SourceLocation } from "../config/errors.ts";
import { readYaml, resolveFrom } from "../config/load.ts";
import { TASK_LIMITS } from "../config/limits.ts";
import type { FileSystem } from "../config/load.ts";
import {
  CommonFileSchema,
  InstanceFileSchema,
  mapping,
  oneOf,
  positiveInt,
  positiveNumber,
  seedInt,
} from "../config/schema.ts";
import type { PathPart, YamlSource } from "../config/source.ts";
import { closest, validate } from "../config/validate.ts";
import { exprRefs, parseBound, parseExpr, unitMismatch } from "./assertion.ts";
import { isIntegerKey } from "./key_types.ts";
import type { Bound } from "./assertion.ts";
import { METRIC_KEY_NAMES, resolveMetric } from "./metric_keys.ts";
import type { MetricRef } from "./metric_keys.ts";
import type { GoodputSlos } from "../metrics/summary.ts";

const path = () => z.string({ error: "expected a file path" }).min(1, { error: "expected a file path" });
const paths = () =>
  z.union([path(), z.array(path()).min(1)], { error: "expected a path or a list of paths to instance files" });
const overrides = () =>
  z.record(z.string(), z.unknown(), { error: "expected a mapping of dotted key path: value" }).describe(
    "Values to replace in the configuration, by dotted key path (load_gen.request_rate, instance_groups[0].num_instances)",
  );
const assertions = (what: string) =>
  z.record(z.string(), z.unknown(), { error: 'expected a mapping of metric: "<op> <expression>"' }).describe(what);

/** A scenario name: it names files (baselines, `--json-dir` documents), so a plain file name. */
/** A number of seeds: a positive integer up to TASK_LIMITS.seeds (each seed is a whole run). */
const seedCount = () =>
  positiveInt().max(TASK_LIMITS.seeds, { error: `expected at most ${TASK_LIMITS.seeds} seeds (each is a whole run)` });
const SCENARIO_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$/;
const NAME_RULE = "expected a name of letters, digits, '.', '_' and '-', not starting with '.', at most 100 characters";

/** One variant of a scenario: other files, inline blocks or overrides. */
export const VariantSchema = mapping({
  description: z.string().optional(),
  instance_config: paths().optional(),
  instances: InstanceFileSchema.optional(),
  common_config: path().optional(),
  common: CommonFileSchema.optional(),
  overrides: overrides().optional(),
});

/** Schema of a scenario file. */
export const ScenarioFileSchema = mapping({
  name: z.string({ error: (i) => `${NAME_RULE}, got ${describeValue(i.input)}` })
    .regex(SCENARIO_NAME, { error: (i) => `${NAME_RULE}, got ${describeValue(i.input)}` })
    .optional()
    .describe("Name in reports and in the files written for it (baselines); default: the file name"),
  description: z.string().optional().describe("What the scenario checks"),
  tags: z.array(z.string()).optional().describe("Labels to select scenarios by (deno task check --tag T)"),
  instance_config: paths().optional().describe("Instance file(s), relative to this file"),
  instances: InstanceFileSchema.optional().describe("An inline instance file (instead of instance_config)"),
  common_config: path().optional().describe("Common file, relative to this file"),
  common: CommonFileSchema.optional().describe("An inline common file (instead of common_config)"),
  seed: seedInt().optional().describe("Overrides load_gen.seed"),
  seeds: z.union([
    seedCount(),
    mapping({
      count: seedCount().describe("Seeds per run"),
      quantile: z.number().min(0).max(1).optional().describe(
        "Which seed an assertion judges, ranked from the one that breaks its bound most (1, the default) to the one that breaks it least (0); 0.5 = the median seed",
      ),
    }),
  ], { error: "expected a number of seeds or {count, quantile}" }).optional().describe(
    "Run every run with this many seeds (the seed, +1, +2, …); assertions and capacity answers judge the worst seed",
  ),
  undecided: oneOf(["fail", "pass"] as const).optional().describe(
    "What an expect on a percentile counts as when the percentile's 95% interval (from its order statistics) straddles its bound: fail (the default: 'not decided, run more requests') or pass (judged on the simulated value alone)",
  ),
  overrides: overrides().optional(),
  variants: z.record(z.string(), VariantSchema).optional().describe(
    "Named variants (other files or overrides); assertions name them: disagg.tpot.p99",
  ),
  sweep: z.record(z.string(), z.array(z.number()).min(1)).optional().describe(
    "One to three dotted key paths, each with the values to run: load_gen.request_rate: [2, 4, 8]",
  ),
  expect: assertions('Assertions: metric: "<op> <expression>"').optional(),
  expect_per_point: assertions("Assertions that every sweep point must meet").optional(),
  max_rate_meeting: assertions(
    "SLOs: the largest simulated value of the (single) swept key that keeps up and meets all of them, found by bisection; assert it as max_rate_meeting",
  ).optional(),
  min_value_meeting: assertions(
    "SLOs: the smallest simulated value of the (single) swept key that keeps up and meets all of them at the scenario's load, found by bisection; assert it as min_value_meeting",
  ).optional(),
  baseline: z.union([
    z.boolean(),
    mapping({
      tolerance: positiveNumber().optional().describe("Default relative tolerance (0.05 = 5%)"),
      tolerances: z.record(z.string(), positiveNumber()).optional().describe("Relative tolerance per metric"),
      strict: z.boolean().optional().describe(
        "Check every metric both ways (default: a latency fails only when it rose, a throughput only when it fell)",
      ),
      min_max: z.boolean().optional().describe("Also compare the MIN and MAX statistics (default: left out)"),
    }),
  ]).optional().describe(
    "Compare every reported metric with scenarios/__baselines__/<name>.json: true, or {tolerance, tolerances, strict, min_max}",
  ),
  goodput: mapping({
    ttft: z.union([positiveNumber(), z.string()]).optional().describe(
      "TTFT from arrival: seconds, or with a unit (500ms)",
    ),
    tpot: z.union([positiveNumber(), z.string()]).optional().describe("TPOT: seconds, or with a unit (50ms)"),
    e2e: z.union([positiveNumber(), z.string()]).optional().describe("E2E from arrival: seconds, or with a unit (10s)"),
  }).optional().describe(
    "Per-request SLOs of the goodput metric; default: the bounds that the latency assertions (< or <=) state",
  ),
  measured: z.array(
    mapping({
      id: z.string().min(1).optional().describe(
        "The row's id (a row of docs/validation-candidates.md, or of the registry): validation scenarios name it",
      ),
      rig: z.string().min(1).optional().describe(
        "The rig that measured it (scenarios/validation/registry.yaml: one hardware × engine build × model × harness run)",
      ),
      metric: z.string().min(1),
      value: positiveNumber(),
      max_error: positiveNumber(),
      source: z.string().min(1),
      known_gap: z.string().min(1).optional().describe(
        "Expected failure (strict): why the simulator is known to miss this measurement. The step passes only while the error stays outside max_error, and fails once the gap closes",
      ),
    }),
    { error: "expected a list of {metric, value, max_error, source, id?, rig?, known_gap?}" },
  ).min(1).optional().describe("Validation: real measurements and the error each may show"),
});

type ScenarioFile = z.output<typeof ScenarioFileSchema>;

/** An override: a dotted key path, its value, and where it was written. */
export interface ScenarioOverride {
  /** The key as written. */
  readonly key: string;
  /** Parsed path. */
  readonly path: readonly PathPart[];
  /** The value. */
  readonly value: unknown;
  /** Where it is written. */
  readonly location: SourceLocation;
}

/** Where one run's configuration comes from. */
export interface ConfigRef {
  /** Instance files, or the scenario path of an inline instance block. */
  readonly instances: { readonly files: readonly string[] } | { readonly inline: readonly PathPart[] };
  /** Common file, or the scenario path of an inline common block. */
  readonly common: { readonly file: string } | { readonly inline: readonly PathPart[] };
  /** Overrides, applied in order. */
  readonly overrides: readonly ScenarioOverride[];
}

/** One assertion: a metric (of a variant, or derived) against an expression. */
export interface ScenarioAssertion {
  /** The key as written. */
  readonly key: string;
  /** Variant the metric belongs to ("" = the scenario's run or each sweep point). */
  readonly variant: string;
  /** The metric ("max_rate_meeting" and "min_value_meeting" are derived from a sweep). */
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
  /** The row's id (`id:`), when given. */
  readonly id?: string;
  /** The rig that measured it (`rig:`, an id of scenarios/validation/registry.yaml), when given. */
  readonly rig?: string;
  /** The metric it compares. */
  readonly metric: MetricRef;
  /** The measured value, in the metric's unit. */
  readonly value: number;
  /** Largest accepted |simulated / measured − 1|. */
  readonly maxError: number;
  /** Where the number comes from. */
  readonly source: string;
  /**
   * A known gap (strict expected failure): why the simulator misses this
   * measurement today. The measurement then passes only while its error is
   * outside `maxError`, and fails once the gap closes.
   */
  readonly knownGap?: string;
  /** Where it is written. */
  readonly location: SourceLocation;
}

/** Baseline settings. */
export interface BaselineSpec {
  /** Default relative tolerance. */
  readonly tolerance: number;
  /** Relative tolerance by canonical metric name. */
  readonly tolerances: ReadonlyMap<string, number>;
  /** Check every metric both ways (default: only the way that is worse, for metrics with one). */
  readonly strict: boolean;
  /** Compare MIN and MAX statistics too (default: left out). */
  readonly minMax: boolean;
  /** The snapshot file. */
  readonly file: string;
}

/** One swept key. */
export interface SweepAxis {
  /** The key as written. */
  readonly key: string;
  /** Parsed path. */
  readonly path: readonly PathPart[];
  /** The values to run, as written. */
  readonly values: readonly number[];
  /** The key takes integers only (per the config schema): bisected over integers. */
  readonly integer: boolean;
  /** Where it is written. */
  readonly location: SourceLocation;
}

/** A sweep: one to three keys and their values. */
export interface SweepSpec {
  /** Swept keys with their values, in file order. */
  readonly axes: readonly SweepAxis[];
}

/** How many seeds each run takes and which of them an assertion judges. */
export interface SeedSpec {
  /** Seeds per run: the scenario's seed (or load_gen.seed), +1, +2, … */
  readonly count: number;
  /**
   * Which seed is judged, ranked by how far it is from breaking the bound:
   * 1 = the seed that breaks it most (the worst, the default), 0.5 = the
   * median seed, 0 = the best.
   */
  readonly quantile: number;
}

/** A loaded scenario. */
export interface Scenario {
  /** The scenario file. */
  readonly file: string;
  /** The parsed file (for inline blocks and error positions). */
  readonly source: YamlSource;
  /** Its name. */
  readonly name: string;
  /** What it checks. */
  readonly description: string;
  /** Tags for selection. */
  readonly tags: readonly string[];
  /** Seed override. */
  readonly seed?: number;
  /** Seeds per run (count 1 = a single run). */
  readonly seeds: SeedSpec;
  /** What an expect whose percentile's 95% interval straddles its bound counts as (default: fail). */
  readonly undecided: "fail" | "pass";
  /** The base configuration (each variant and sweep point starts from it). */
  readonly config: ConfigRef;
  /** Variants by name, in file order. */
  readonly variants: ReadonlyMap<string, ConfigRef>;
  /** The sweep, if any. */
  readonly sweep?: SweepSpec;
  /** `expect` assertions, in file order. */
  readonly assertions: readonly ScenarioAssertion[];
  /** `expect_per_point` assertions. */
  readonly perPoint: readonly ScenarioAssertion[];
  /** `max_rate_meeting` SLOs. */
  readonly slos: readonly ScenarioAssertion[];
  /** `min_value_meeting` SLOs. */
  readonly minValueSlos: readonly ScenarioAssertion[];
  /** Baseline comparison, if enabled. */
  readonly baseline?: BaselineSpec;
  /** Measurements to compare with (validation scenarios). */
  readonly measured: readonly Measurement[];
  /** Per-request SLOs of the goodput metric, when stated or implied by the assertions. */
  readonly goodput?: GoodputSlos;
  /** Instance and common paths of the base configuration, when they are files (for tools). */
  readonly instancePaths: readonly string[];
  /** The base common file, when it is a file. */
  readonly commonPath?: string;
}

/** The derived metric of sweeps: the largest swept value meeting the `max_rate_meeting` SLOs. */
export const MAX_RATE_MEETING = "max_rate_meeting" as const;

/** The derived metric of sweeps: the smallest swept value meeting the `min_value_meeting` SLOs. */
export const MIN_VALUE_MEETING = "min_value_meeting" as const;

/**
 * The path of file `name` directly inside `dir`: for the files written by
 * scenario name (baselines, `--json-dir` documents).
 *
 * @throws {Error} when `name` is not a plain file name (a separator, `..`,
 * or empty), so that nothing is ever written outside `dir`
 */
export function fileIn(dir: string, name: string): string {
  if (!/^[^\\/\0]+$/.test(name) || name === "." || name === "..") {
    throw new Error(`refusing to write '${clip(name)}' outside ${clip(dir)}: not a plain file name`);
  }
  return join(dir, name);
}

/** Parses `load_gen.request_rate` or `instance_groups[0].num_instances` into a path. */
export function parseKeyPath(key: string): PathPart[] | undefined {
  const out: PathPart[] = [];
  for (const seg of key.split(".")) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)$/.exec(seg);
    if (!m) return undefined;
    out.push(m[1]);
    for (const ix of m[2].matchAll(/\[(\d+)\]/g)) out.push(Number(ix[1]));
  }
  return out;
}

const CONFIG_ROOTS = ["instance_groups", "model_config", "load_gen", "serving_config"];

function overridesAt(src: YamlSource, at: PathPart[], o: Record<string, unknown> | undefined): ScenarioOverride[] {
  return Object.entries(o ?? {}).map(([key, value]) => {
    const p = parseKeyPath(key);
    if (!p || !CONFIG_ROOTS.includes(String(p[0]))) {
      const near = closest(key.split(".")[0], CONFIG_ROOTS);
      src.fail(
        [...at, key],
        `expected a dotted key path into ${CONFIG_ROOTS.join(", ")}${near ? `; did you mean '${near}'?` : ""}`,
        true,
      );
    }
    return { key, path: p, value, location: src.locate([...at, key]) };
  });
}

function metricAt(src: YamlSource, at: PathPart[], key: string, keyOnly: boolean): MetricRef {
  const metric = resolveMetric(key);
  if (!metric) {
    const near = closest(key, METRIC_KEY_NAMES);
    src.fail(at, `unknown metric '${clip(key)}'${near ? `; did you mean '${near}'?` : ""}`, keyOnly);
  }
  return metric;
}

function parseAssertions(
  src: YamlSource,
  at: string,
  map: Record<string, unknown> | undefined,
  variants: ReadonlySet<string>,
  derivedNames: readonly string[],
): ScenarioAssertion[] {
  const refOk = (name: string) => {
    const first = name.split(".")[0];
    const rest = variants.has(first) ? name.slice(first.length + 1) : name;
    return derivedNames.includes(rest) || resolveMetric(rest) !== undefined;
  };
  return Object.entries(map ?? {}).map(([key, raw]) => {
    const first = key.split(".")[0];
    const variant = variants.has(first) ? first : "";
    const name = variant ? key.slice(first.length + 1) : key;
    const derived = !variant && derivedNames.includes(name);
    const metric: MetricRef = derived
      ? { name, read: () => NaN, unit: "count", better: name === MAX_RATE_MEETING ? "higher" : "lower", gated: false }
      : metricAt(src, [at, key], name, true);
    const bound = parseBound(raw);
    if (typeof bound === "string") src.fail([at, key], bound);
    if (bound.bare && metric.unit === "s") {
      // A bare latency would mean exact equality, which no one means for a latency.
      const v = typeof raw === "number" ? String(raw) : String(raw).trim();
      src.fail(
        [at, key],
        `a bound on a time needs an operator: write "< ${v}" or "<= ${v}" (or "== ${v}" for exact equality)`,
      );
    }
    const mismatch = derived ? undefined : unitMismatch(bound.rhs, metric.unit);
    if (mismatch) src.fail([at, key], mismatch);
    if (bound.confidence !== undefined && (derived || !["s", "req/s", "tok/s"].includes(metric.unit))) {
      src.fail(
        [at, key],
        `a confidence ('@') goes with a latency or a throughput, whose prediction intervals are known; ${metric.name} is not one`,
      );
    }
    for (const ref of exprRefs(bound.rhs)) {
      if (!refOk(ref)) src.fail([at, key], `unknown metric '${clip(ref)}' in the expression`);
    }
    return { key, variant, metric, bound, location: src.locate([at, key], true) };
  });
}

/** The goodput SLO each latency column stands for. */
const GOODPUT_COLUMNS: Record<string, keyof GoodputSlos> = {
  "TTFT_FROM_ARRIVAL(s)": "ttft",
  "TPOT(s)": "tpot",
  "E2E_FROM_ARRIVAL(s)": "e2e",
};

/**
 * Per-request SLOs for goodput: those written under `goodput:`, else the
 * loosest literal upper bound the assertions put on TTFT, TPOT and E2E as
 * the user sees them (`ttft.p99: "<= 0.5"` means a request meets the TTFT
 * SLO within 0.5 s).
 */
function goodputSlos(
  src: YamlSource,
  written: Record<string, number | string | undefined> | undefined,
  assertions: readonly ScenarioAssertion[],
): GoodputSlos | undefined {
  const out: Record<string, number> = {};
  if (written) {
    for (const [k, v] of Object.entries(written)) {
      if (v === undefined) continue;
      const e = typeof v === "number" ? { kind: "num" as const, value: v } : parseExpr(v);
      if (typeof e === "string" || e.kind !== "num" || (e.unit && e.unit !== "s") || !(e.value > 0)) {
        src.fail(["goodput", k], `expected a positive time such as 0.5 or "500ms", got ${describeValue(v)}`);
      }
      out[k] = e.value;
    }
    return out;
  }
  for (const a of assertions) {
    const column = a.metric.name.replace(/\.[^(]*$/, "");
    const slo = a.metric.gated && Object.hasOwn(GOODPUT_COLUMNS, column) ? GOODPUT_COLUMNS[column] : undefined;
    if (!slo || a.variant || (a.bound.op !== "<" && a.bound.op !== "<=") || a.bound.rhs.kind !== "num") continue;
    out[slo] = Math.max(out[slo] ?? 0, a.bound.rhs.value);
  }
  return Object.keys(out).length ? out : undefined;
}

/** A configuration under construction: any part may still be missing. */
type PartialConfig = {
  instances?: ConfigRef["instances"];
  common?: ConfigRef["common"];
  overrides: readonly ScenarioOverride[];
};

/** The configuration `v` gives at `at`, over `base` (what variants share); parts may be missing. */
function partialConfig(
  src: YamlSource,
  at: PathPart[],
  v: { instance_config?: string | string[]; instances?: unknown; common_config?: string; common?: unknown },
  base: PartialConfig | undefined,
  extra: ScenarioOverride[],
): PartialConfig {
  const rel = (p: string) => resolveFrom(src.file, p);
  if (v.instance_config !== undefined && v.instances !== undefined) {
    src.fail([...at, "instances"], "give instance_config or instances, not both");
  }
  if (v.common_config !== undefined && v.common !== undefined) {
    src.fail([...at, "common"], "give common_config or common, not both");
  }
  const instances = v.instances !== undefined
    ? { inline: [...at, "instances"] }
    : v.instance_config !== undefined
    ? { files: (Array.isArray(v.instance_config) ? v.instance_config : [v.instance_config]).map(rel) }
    : base?.instances;
  const common = v.common !== undefined
    ? { inline: [...at, "common"] }
    : v.common_config !== undefined
    ? { file: rel(v.common_config) }
    : base?.common;
  return {
    ...(instances ? { instances } : {}),
    ...(common ? { common } : {}),
    overrides: [...(base?.overrides ?? []), ...extra],
  };
}

/** A configuration with both parts, or an error at `at` naming the part missing. */
function completeConfig(src: YamlSource, at: PathPart[], p: PartialConfig): ConfigRef {
  const { instances, common, overrides } = p;
  if (!instances) src.fail(at, "missing required key 'instance_config' (or inline 'instances')");
  if (!common) src.fail(at, "missing required key 'common_config' (or inline 'common')");
  return { instances, common, overrides };
}

/** Options of {@link loadScenario}. */
export interface LoadScenarioOptions {
  /** The folder of the baseline snapshots (default: `__baselines__` beside the scenario). */
  readonly baselineDir?: string;
}

/**
 * Reads and validates a scenario file.
 *
 * @throws {InputError} on a bad scenario file (the configurations are checked when run)
 */
export function loadScenario(file: string, fs?: FileSystem, options: LoadScenarioOptions = {}): Scenario {
  const src = readYaml(file, fs);
  const s: ScenarioFile = validate(src, ScenarioFileSchema);
  const hasRuns = s.expect || s.measured || s.baseline || s.expect_per_point || s.max_rate_meeting ||
    s.min_value_meeting;
  if (!hasRuns) src.fail([], "a scenario needs 'expect' assertions, 'measured' values or 'baseline'");
  if (s.expect && Object.keys(s.expect).length === 0) src.fail(["expect"], "expected at least one assertion");
  const variantNames = new Set(Object.keys(s.variants ?? {}));
  if (s.variants && s.sweep) src.fail(["sweep"], "variants and sweep cannot be combined in one scenario");
  // With variants, the scenario level holds what they share and each variant completes it.
  const shared = partialConfig(src, [], s, undefined, overridesAt(src, ["overrides"], s.overrides));
  const base = variantNames.size === 0 ? completeConfig(src, [], shared) : undefined;
  const variants = new Map<string, ConfigRef>();
  for (const [name, v] of Object.entries(s.variants ?? {})) {
    if (name.includes(".")) src.fail(["variants", name], "a variant name cannot contain '.'", true);
    if (!SCENARIO_NAME.test(name)) src.fail(["variants", name], NAME_RULE.replace("a name", "a variant name"), true);
    variants.set(
      name,
      completeConfig(
        src,
        ["variants", name],
        partialConfig(
          src,
          ["variants", name],
          v,
          shared,
          overridesAt(src, ["variants", name, "overrides"], v.overrides),
        ),
      ),
    );
  }
  let sweep: SweepSpec | undefined;
  const swept = s.sweep;
  if (swept) {
    const keys = Object.keys(swept);
    if (keys.length === 0 || keys.length > 3) src.fail(["sweep"], "sweep one, two or three keys");
    sweep = {
      axes: keys.map((key) => {
        const p = parseKeyPath(key);
        if (!p || !CONFIG_ROOTS.includes(String(p[0]))) {
          return src.fail(["sweep", key], `expected a dotted key path into ${CONFIG_ROOTS.join(", ")}`, true);
        }
        const values = swept[key];
        const integer = isIntegerKey(p);
        const i = values.findIndex((v) => !Number.isInteger(v));
        if (integer && i >= 0) src.fail(["sweep", key, i], `${key} takes integers, got ${values[i]}`);
        if (values.length > TASK_LIMITS.sweepValues) {
          src.fail(["sweep", key], `${values.length} values; a sweep axis takes at most ${TASK_LIMITS.sweepValues}`);
        }
        return { key, path: p, values, integer, location: src.locate(["sweep", key]) };
      }),
    };
    const points = sweep.axes.reduce((n, ax) => n * ax.values.length, 1);
    if (points > TASK_LIMITS.sweepPoints) {
      src.fail(
        ["sweep"],
        `${points.toLocaleString("en-US")} points (${
          sweep.axes.map((ax) => ax.values.length).join(" × ")
        }); a sweep runs at most ${TASK_LIMITS.sweepPoints.toLocaleString("en-US")}: split the scenario`,
      );
    }
  }
  if (s.max_rate_meeting && s.min_value_meeting) {
    src.fail(
      [MIN_VALUE_MEETING],
      "give max_rate_meeting or min_value_meeting, not both: they search the swept key from opposite ends",
      true,
    );
  }
  for (const block of [MAX_RATE_MEETING, MIN_VALUE_MEETING] as const) {
    if (s[block] && (!sweep || sweep.axes.length !== 1)) src.fail([block], `${block} needs a sweep of exactly one key`);
    if (s[block] && Object.keys(s[block]).length === 0) src.fail([block], "expected at least one SLO");
  }
  if (s.expect_per_point && !sweep) src.fail(["expect_per_point"], "expect_per_point needs a sweep");
  const stem = file.replace(/^.*[\\/]/, "").replace(/\.ya?ml$/i, "");
  const name = s.name ?? stem;
  if (!SCENARIO_NAME.test(name)) {
    src.fail([], `the file name makes no scenario name (${NAME_RULE}, got ${describeValue(stem)}): give 'name:'`);
  }
  const b = typeof s.baseline === "object" ? s.baseline : {};
  const baseline: BaselineSpec | undefined = s.baseline
    ? {
      tolerance: b.tolerance ?? 0.05,
      tolerances: new Map(
        Object.entries(b.tolerances ?? {}).map(([k, t]) => [
          k === MAX_RATE_MEETING ? k : metricAt(src, ["baseline", "tolerances", k], k, true).name,
          t,
        ]),
      ),
      strict: b.strict ?? false,
      minMax: b.min_max ?? false,
      file: fileIn(options.baselineDir ?? join(dirname(file), "__baselines__"), `${name}.json`),
    }
    : undefined;
  const firstConfig = base ?? variants.values().next().value ?? src.fail(["variants"], "expected at least one variant");
  const derived = ([MAX_RATE_MEETING, MIN_VALUE_MEETING] as const).filter((b) => s[b]);
  const assertions = parseAssertions(src, "expect", s.expect, variantNames, derived);
  const perPoint = parseAssertions(src, "expect_per_point", s.expect_per_point, new Set(), []);
  const slos = parseAssertions(src, MAX_RATE_MEETING, s.max_rate_meeting, new Set(), []);
  const minValueSlos = parseAssertions(src, MIN_VALUE_MEETING, s.min_value_meeting, new Set(), []);
  const goodput = goodputSlos(src, s.goodput, [...slos, ...minValueSlos, ...perPoint, ...assertions]);
  const seeds = typeof s.seeds === "number"
    ? { count: s.seeds, quantile: 1 }
    : { count: s.seeds?.count ?? 1, quantile: s.seeds?.quantile ?? 1 };
  return {
    file,
    source: src,
    name,
    description: s.description ?? "",
    tags: s.tags ?? [],
    seed: s.seed,
    seeds,
    undecided: s.undecided ?? "fail",
    config: firstConfig,
    variants,
    sweep,
    assertions,
    perPoint,
    slos,
    minValueSlos,
    ...(goodput ? { goodput } : {}),
    baseline,
    measured: (s.measured ?? []).map((m, i) => ({
      key: m.metric,
      metric: metricAt(src, ["measured", i, "metric"], m.metric, false),
      value: m.value,
      maxError: m.max_error,
      source: m.source,
      ...(m.id === undefined ? {} : { id: m.id }),
      ...(m.rig === undefined ? {} : { rig: m.rig }),
      ...(m.known_gap === undefined ? {} : { knownGap: m.known_gap }),
      location: src.locate(["measured", i], false),
    })),
    instancePaths: "files" in firstConfig.instances ? firstConfig.instances.files : [],
    commonPath: "file" in firstConfig.common ? firstConfig.common.file : undefined,
  };
}
