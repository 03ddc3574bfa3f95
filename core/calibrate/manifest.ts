/**
 * The calibration manifest (`deno task calibrate manifest.yaml`): the
 * deployment the measurements ran on, the measurement files, and what to fit.
 *
 * ```yaml
 * instance_config: configs/h100_tp1.yaml   # the deployment (one device type), relative to this file
 * common_config: configs/llama8b.yaml      # model and serving settings; load_gen comes from each run
 * measurements:
 *   - vllm: results/rate4.json             # vLLM bench serve --save-result
 *   - sglang: results/runs.jsonl           # SGLang bench_serving (one run per line)
 *   - genai_perf: results/profile_export_genai_perf.json   # GenAI-Perf summary
 *   - aiperf: results/profile_export_aiperf.json           # AIPerf summary
 *   - csv: results/more.csv                # num_prompts,input_len,output_len,request_rate,max_concurrency,median_ttft_ms,median_tpot_ms,output_throughput
 *   - file: results/any.json               # any of these, told apart by content
 * fit: [matmul, attention, memory, step_overhead, seq_overhead]   # default: all five; each at most once
 * folds: 5                                 # k-fold cross-validation (0: none)
 * iterations: 40                           # Levenberg–Marquardt iterations per fit (at most 10,000)
 * output: h100-my-cluster.yaml             # the fitted device file; default <manifest>.device.yaml
 * ```
 *
 * Or validation scenarios as the measurements (their `measured:` rows), one
 * device file per device type they run on:
 *
 * ```yaml
 * scenarios: [../scenarios/validation/*.yaml]   # paths or file-name globs, relative to this file
 * engine: vllm                             # only the scenarios whose serving_config.engine is this
 * max_requests: 2000                       # simulate each case with at most this many requests (faster)
 * output: calibrated/                      # folder of the device files (<device>.calibrated.yaml); default: this file's
 * ```
 *
 * @module
 */
import { z } from "zod";
import { loadConfigSources, readYaml, resolveFrom } from "../config/load.ts";
import { assemble } from "../assembly/assemble.ts";
import type { FileSystem } from "../config/load.ts";
import type { PathPart, YamlSource } from "../config/source.ts";
import { mapping, nonNegativeInt, positiveInt } from "../config/schema.ts";
import { validate } from "../config/validate.ts";
import { checkRuns, DEFAULT_FIT, FIT_PARAMETERS } from "./fit.ts";
import type { CalibrationSetup, FitParameter } from "./fit.ts";
import { clip, describeValue, InputError } from "../config/errors.ts";
import type { SourceLocation } from "../config/errors.ts";
import { TASK_LIMITS } from "../config/limits.ts";
import { readMeasurements } from "./measurements.ts";
import type { MeasuredRun, MeasurementFormat } from "./measurements.ts";

const path = () => z.string({ error: "expected a file path" }).min(1, { error: "expected a file path" });

/** The keys of a measurement entry: a tool, or `file` (the format told by content). */
const MEASUREMENT_KEYS = ["vllm", "sglang", "genai_perf", "aiperf", "csv", "file"] as const;

/** The first constant a list of constants to fit names twice, if any. */
export function twiceListed(names: readonly string[]): string | undefined {
  const seen = new Set<string>();
  return names.find((n) => seen.has(n) || (seen.add(n), false));
}

/** At most {@link TASK_LIMITS}' `fitEntries` entries in a list of the manifest. */
const atMost = (what: string) => ({
  error: (i: { input?: unknown }) =>
    `expected at most ${TASK_LIMITS.fitEntries} ${what} (a fit takes at most ${TASK_LIMITS.fitEntries} measured figures), got ${
      Array.isArray(i.input) ? i.input.length : describeValue(i.input)
    }`,
});

/** A path, or a list of at least one and at most `max`. */
const paths = (what: string, max: number) =>
  z.union([
    path(),
    z.array(path()).min(1, { error: `expected at least one ${what}` }).max(max, atMost(`${what}s`)),
  ], {
    error: (i) =>
      Array.isArray(i.input)
        ? `expected a list of ${what}s (each a non-empty string)`
        : `expected a ${what} or a list of them, got ${describeValue(i.input)}`,
  });

/** Schema of a calibration manifest. */
export const ManifestSchema = mapping({
  instance_config: paths("file path", Infinity).optional(),
  common_config: path().optional(),
  measurements: z.array(
    z.union(MEASUREMENT_KEYS.map((k) => mapping({ [k]: path() })), {
      error: `expected ${MEASUREMENT_KEYS.map((k) => `{${k}: file}`).join(", ").replace(/, ([^,]*)$/, " or $1")}`,
    }),
    { error: (i) => `expected a list of measurement files ({vllm: file}, …), got ${describeValue(i.input)}` },
  ).min(1, { error: "expected at least one measurement file" })
    .max(TASK_LIMITS.fitEntries, atMost("measurement files"))
    .optional(),
  scenarios: paths("scenario path", TASK_LIMITS.fitEntries).optional(),
  engine: z.string({ error: (i) => `expected an engine name, got ${describeValue(i.input)}` })
    .min(1, { error: "expected an engine name, got ''" }).optional(),
  max_requests: positiveInt().optional(),
  // Duplicates first: a list longer than the constants there are names one twice (or one that is none).
  fit: z.array(z.enum(FIT_PARAMETERS, { error: `expected one of ${FIT_PARAMETERS.join(", ")}` }), {
    error: (i) => `expected a list of constants (of ${FIT_PARAMETERS.join(", ")}), got ${describeValue(i.input)}`,
  }).min(1, { error: "expected at least one constant" })
    .superRefine((names, ctx) => {
      const twice = twiceListed(names);
      if (twice !== undefined) ctx.addIssue({ code: "custom", message: `'${twice}' listed twice`, input: names });
    })
    .max(TASK_LIMITS.fitEntries, atMost("constants"))
    .optional(),
  folds: nonNegativeInt().optional(),
  iterations: positiveInt().max(TASK_LIMITS.calibrateIterations, {
    error: (i) =>
      `expected at most ${TASK_LIMITS.calibrateIterations} iterations (a fit converges in tens), got ${
        describeValue(i.input)
      }`,
  }).optional(),
  output: path().optional(),
});

/** A loaded manifest of measured runs: the deployment, the runs and the options. */
export interface Manifest {
  /** Measured runs on one deployment. */
  readonly kind: "runs";
  /** The deployment. */
  readonly setup: CalibrationSetup;
  /** Every measured run, in file order. */
  readonly runs: readonly MeasuredRun[];
  /** Constants to fit. */
  readonly parameters: readonly FitParameter[];
  /** Cross-validation folds. */
  readonly folds: number;
  /** Levenberg–Marquardt iterations per fit. */
  readonly iterations?: number;
  /** Where the fitted device file goes. */
  readonly output: string;
  /**
   * Where `output:` is in the manifest, for its errors; the manifest itself
   * (no line) when the default applies.
   */
  readonly outputAt: SourceLocation;
  /** The files read (the manifest, the configurations, the measurement files): never written over. */
  readonly inputs: readonly string[];
  /** The manifest file. */
  readonly file: string;
}

/** A loaded manifest of validation scenarios. */
export interface ScenarioManifest {
  /** Validation scenarios as measurements. */
  readonly kind: "scenarios";
  /** The scenario files (globs expanded), in order. */
  readonly scenarios: readonly string[];
  /** Where `scenarios:` is in the manifest, for the errors of a file it names that cannot be read. */
  readonly scenariosAt: SourceLocation;
  /** Only the scenarios of this engine. */
  readonly engine?: string;
  /** At most this many requests per simulated case. */
  readonly maxRequests?: number;
  /** Constants to fit. */
  readonly parameters: readonly FitParameter[];
  /** Cross-validation folds. */
  readonly folds: number;
  /** Levenberg–Marquardt iterations per fit. */
  readonly iterations?: number;
  /** The folder the device files go to. */
  readonly outputDir: string;
  /** Where `output:` is in the manifest (the manifest itself when the default applies), for its errors. */
  readonly outputAt: SourceLocation;
  /** The files read (the manifest and the scenarios): never written over. */
  readonly inputs: readonly string[];
  /** The manifest file. */
  readonly file: string;
}

const GLOB = /[*?]/;

/** Why a file could not be read, in a few words. */
function why(e: unknown): string {
  if (e instanceof Deno.errors.NotFound) return "file not found";
  if (e instanceof Deno.errors.PermissionDenied) return "permission denied";
  if (e instanceof Deno.errors.IsADirectory) return "is a directory";
  return e instanceof Error ? e.message.split("\n")[0] : String(e);
}

/**
 * Expands scenario paths: a `*` or `?` in the file name (not in folders)
 * matches the `.yaml`/`.yml` files of that folder, sorted.
 *
 * @throws {InputError} (at `where`) when a pattern matches nothing or its folder cannot be read
 */
export function expandScenarioPaths(patterns: readonly string[], where: { file: string; line?: number }): string[] {
  return patterns.flatMap((p) => {
    const slash = p.lastIndexOf("/");
    const dir = slash >= 0 ? p.slice(0, slash) : ".";
    const name = p.slice(slash + 1);
    if (!GLOB.test(name)) return [p];
    if (GLOB.test(dir)) throw new InputError(where, `${p}: a glob may only be in the file name`);
    const re = new RegExp(
      "^" + name.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".") + "$",
    );
    let names: string[];
    try {
      names = [...Deno.readDirSync(dir || "/")].filter((e) => e.isFile && re.test(e.name) && /\.ya?ml$/i.test(e.name))
        .map((e) => e.name);
    } catch {
      throw new InputError(where, `${p}: cannot read the folder ${dir}`);
    }
    if (names.length === 0) throw new InputError(where, `${p}: no scenario file matches`);
    return names.sort().map((n) => `${slash >= 0 ? dir + "/" : ""}${n}`);
  });
}

/**
 * Reads a manifest and everything it names: measured runs on a deployment,
 * or validation scenarios.
 *
 * @throws {InputError} on a bad manifest, configuration or measurement file (located), or groups on unlike devices
 *
 * @example A manifest of measured runs
 * ```ts
 * import { loadManifest } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const csv = "num_prompts,input_len,output_len,request_rate,median_ttft_ms,median_tpot_ms\n4,128,8,inf,20,8\n";
 * const files: Record<string, string> = {
 *   "cal.yaml": "instance_config: i.yaml\ncommon_config: c.yaml\nmeasurements: [{csv: r.csv}]\nfolds: 0\n",
 *   "i.yaml": i,
 *   "c.yaml": c,
 *   "r.csv": csv,
 * };
 * const m = loadManifest("cal.yaml", { readText: (p) => files[p], isDirectory: () => false });
 * assert.equal(m.kind, "runs");
 * assert.equal(m.folds, 0);
 * if (m.kind === "runs") assert.equal(m.runs[0].requests, 4);
 * ```
 */
export function loadManifest(file: string, fs: FileSystem): Manifest | ScenarioManifest {
  const src: YamlSource = readYaml(file, fs); // typed: its fail() then narrows (TypeScript needs the annotation)
  const m = validate(src, ManifestSchema);
  const rel = (p: string) => resolveFrom(file, p);
  const common = {
    parameters: m.fit ?? DEFAULT_FIT,
    folds: m.folds ?? 5,
    ...(m.iterations !== undefined ? { iterations: m.iterations } : {}),
    outputAt: m.output !== undefined ? src.locate(["output"]) : { file, keyPath: "output" },
    file,
  };
  if (m.scenarios !== undefined) {
    for (const k of ["instance_config", "common_config", "measurements"] as const) {
      if (m[k] !== undefined) src.fail([k], "give scenarios or a deployment with measurements, not both", true);
    }
    const patterns = (Array.isArray(m.scenarios) ? m.scenarios : [m.scenarios]).map(rel);
    const scenarios = expandScenarioPaths(patterns, src.locate(["scenarios"]));
    if (scenarios.length > TASK_LIMITS.fitEntries) {
      src.fail(
        ["scenarios"],
        `${scenarios.length} scenario files, more than the ${TASK_LIMITS.fitEntries} a fit takes (each has a measured figure or more)`,
      );
    }
    return {
      kind: "scenarios",
      scenarios,
      scenariosAt: src.locate(["scenarios"]),
      inputs: [file, ...scenarios],
      ...(m.engine !== undefined ? { engine: m.engine } : {}),
      ...(m.max_requests !== undefined ? { maxRequests: m.max_requests } : {}),
      ...common,
      outputDir: m.output ? rel(m.output) : resolveFrom(file, "."),
    };
  }
  for (const k of ["engine", "max_requests"] as const) {
    if (m[k] !== undefined) src.fail([k], "selects among scenarios: give scenarios, or drop it", true);
  }
  const { instance_config: instanceConfig, common_config: commonConfig, measurements } = m;
  if (instanceConfig === undefined || commonConfig === undefined || measurements === undefined) {
    const k = instanceConfig === undefined
      ? "instance_config"
      : commonConfig === undefined
      ? "common_config"
      : "measurements";
    src.fail([], `missing required key '${k}' (or give scenarios instead)`);
  }
  const instancePaths = (Array.isArray(instanceConfig) ? instanceConfig : [instanceConfig]).map(rel);
  // A file that cannot be read is an error at the manifest's key that names it; one that reads, at its own lines.
  const read = (p: string, key: PathPart[]) => {
    try {
      return readYaml(p, fs);
    } catch (e) {
      if (!(e instanceof InputError) || e.location.file !== p || e.location.line !== undefined) throw e;
      return src.fail(key, `cannot read ${clip(p, 1000)}: ${e.detail.replace(/^cannot read: /, "")}`);
    }
  };
  const instances = instancePaths.map((p, i) =>
    read(p, Array.isArray(instanceConfig) ? ["instance_config", i] : ["instance_config"])
  );
  const commonSrc = read(rel(commonConfig), ["common_config"]);
  const cfg = loadConfigSources(instances, commonSrc, fs);
  // The device as the deployment runs it: with its engine profile's host costs and the calibrated constants, the
  // values a fit starts from and its "before" figures are those of a plain run.
  const device = assemble(cfg).groups[0].device;
  cfg.groups.forEach((g, i) => {
    if (g.device.name !== device.name) {
      src.fail(
        ["instance_config"],
        `group ${i} runs on ${g.device.name}, group 0 on ${device.name}: calibrate one device type at a time`,
      );
    }
  });
  const files: string[] = [];
  let figures = 0;
  const runs = measurements.flatMap((entry, i) => {
    const [kind, p] = Object.entries(entry)[0] as [(typeof MEASUREMENT_KEYS)[number], string];
    const f = rel(p);
    let text: string;
    try {
      text = fs.readText(f);
    } catch (e) {
      return src.fail(["measurements", i, kind], `cannot read measurement file ${clip(f, 1000)}: ${why(e)}`);
    }
    files.push(f);
    const read = readMeasurements(f, text, kind === "file" ? undefined : kind as MeasurementFormat);
    figures += read.reduce((n, r) => n + Object.keys(r.metrics).length, 0);
    if (figures > TASK_LIMITS.fitEntries) {
      src.fail(
        ["measurements", i, kind],
        `${figures} measured figures so far, more than the ${TASK_LIMITS.fitEntries} a fit takes; calibrate on fewer runs`,
      );
    }
    return read;
  });
  const setup = { instances, common: commonSrc, fs, device };
  // Every run's configuration, loaded now: a run the deployment cannot simulate is an error at its results file.
  checkRuns(setup, runs);
  return {
    kind: "runs",
    setup,
    runs,
    inputs: [file, ...instancePaths, rel(commonConfig), ...files],
    ...common,
    output: m.output ? rel(m.output) : file.replace(/\.ya?ml$/i, "") + ".device.yaml",
  };
}
