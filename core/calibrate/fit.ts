/**
 * Calibration to the user's own cluster: fit a few named constants of the
 * device profile (the matmul, attention and memory efficiencies and the
 * fixed host cost of a step) so that simulated runs match measured ones,
 * within bounds, by Levenberg–Marquardt on the log of simulated / measured
 * (npm `ml-levenberg-marquardt`), with k-fold cross-validation so that
 * over-fitting shows. The result is a device file (the format `device_type`
 * already takes) with the fitted values.
 *
 * @module
 */
import { levenbergMarquardt } from "ml-levenberg-marquardt";
import { loadConfigSources } from "../config/load.ts";
import { assemble } from "../assembly/assemble.ts";
import type { FileSystem, LoadedConfig } from "../config/load.ts";
import type { YamlSource } from "../config/source.ts";
import { deviceFromFile, MICROS_MAX } from "../config/device_schema.ts";
import type { DeviceFile } from "../config/device_schema.ts";
import { InputError } from "../config/errors.ts";
import type { DeviceSpec } from "../hardware/device.ts";
import { runLoaded } from "../assembly/run.ts";
import { quantileSorted } from "../metrics/percentile.ts";
import type { MeasuredMetrics, MeasuredRun } from "./measurements.ts";

/** The constants calibration may fit. */
export const FIT_PARAMETERS = [
  "matmul",
  "attention",
  "memory",
  "step_overhead",
  "seq_overhead",
  "request_overhead",
] as const;

/** What a fit adjusts unless told otherwise: all but the per-request latency, which only TTFT and E2E figures show. */
export const DEFAULT_FIT: readonly FitParameter[] = ["matmul", "attention", "memory", "step_overhead", "seq_overhead"];

/** A fitted constant. */
export type FitParameter = (typeof FIT_PARAMETERS)[number];

/** Values of the constants: efficiencies as fractions, the host overheads (per step, per sequence) in seconds. */
export type FitValues = Record<FitParameter, number>;

/**
 * How far a constant may move from its catalog value (a factor each way),
 * so that a fit cannot wander into values no chip shows: efficiencies stay
 * within (0, 1] as well.
 */
export const FIT_RANGE = 4;

/**
 * The per-sequence host cost has no catalog value to scale (it is 0 until
 * measured): it is fitted in steps of 100 µs, from 0 to this many (1 ms a
 * sequence, well above the tens of µs engines spend).
 */
const SEQ_OVERHEAD_MAX = 10;
const SEQ_OVERHEAD_UNIT = 100e-6;

/** The per-request latency is fitted likewise, in steps of 10 ms from 0 to 200 ms. */
const REQUEST_OVERHEAD_MAX = 20;
const REQUEST_OVERHEAD_UNIT = 10e-3;

/**
 * Constants fitted in fixed units from 0 rather than as a factor of their
 * catalog value: their unit and upper bound (in units). The step cost, in
 * 100 µs units up to 100 ms: engines without CUDA graphs spend tens of ms a
 * step launching kernels, far beyond 4× the catalog's 0.5 ms.
 */
const ABSOLUTE: Partial<Record<FitParameter, { unit: number; max: number }>> = {
  step_overhead: { unit: 100e-6, max: 1000 },
  seq_overhead: { unit: SEQ_OVERHEAD_UNIT, max: SEQ_OVERHEAD_MAX },
  request_overhead: { unit: REQUEST_OVERHEAD_UNIT, max: REQUEST_OVERHEAD_MAX },
};

/** The range a fit keeps a constant in: its lower and upper bound, from its starting value. */
export function boundsOf(p: FitParameter, start: FitValues): { readonly min: number; readonly max: number } {
  const abs = ABSOLUTE[p];
  if (abs) return { min: 0, max: abs.max * abs.unit };
  return { min: start[p] / FIT_RANGE, max: Math.min(1, start[p] * FIT_RANGE) };
}

/**
 * The fitted constants that ended at an end of their range (within 0.01% of
 * it: the fit clamps a constant that wants to go further exactly there), a
 * warning: the data want more than the range allows.
 */
export function atBounds(r: CalibrationResult): AtBound[] {
  return r.parameters.flatMap((p): AtBound[] => {
    const { min, max } = boundsOf(p, r.start);
    const v = r.fitted[p];
    const tol = 1e-4 * (max - min);
    const bound = v <= min + tol ? "min" : v >= max - tol ? "max" : undefined;
    return bound ? [{ parameter: p, value: v, bound, min, max }] : [];
  });
}

/** A fitted constant at an end of its range. */
export interface AtBound {
  /** The constant. */
  readonly parameter: FitParameter;
  /** Its fitted value. */
  readonly value: number;
  /** Which end. */
  readonly bound: "min" | "max";
  /** Its range. */
  readonly min: number;
  /** Its range. */
  readonly max: number;
}

/** The deployment the measurements ran on. */
export interface CalibrationSetup {
  /** Instance sources (their groups all run on one device type). */
  readonly instances: readonly YamlSource[];
  /** The common source (its `load_gen` is replaced by each run's workload). */
  readonly common: YamlSource;
  /** Where files are read from. */
  readonly fs: FileSystem;
  /** The device of the deployment, as the catalog (or its device file) gives it. */
  readonly device: DeviceSpec;
}

/** The values of a device. */
export function deviceValues(d: DeviceSpec): FitValues {
  return {
    matmul: d.efficiency.matmul,
    attention: d.efficiency.attention,
    memory: d.efficiency.memory,
    step_overhead: d.stepOverhead,
    seq_overhead: d.seqOverhead ?? 0,
    request_overhead: d.requestOverhead ?? 0,
  };
}

/** Where a calibration's own errors point. */
const at = { file: "(calibration)" };

const num = (x: number) => Number(x.toPrecision(6));

/**
 * The device file of `d` with `v` in place of its fitted constants, as
 * values: each to 6 significant digits, as {@link deviceFileText} writes
 * them. The low-precision matmul efficiency moves with the BF16 one.
 */
function deviceFileOf(d: DeviceSpec, v: FitValues): DeviceFile {
  const T = 1e12;
  const e = d.efficiency;
  return {
    name: d.name,
    memory_gib: num(d.memoryBytes / 2 ** 30),
    hbm_bandwidth_tb_s: num(d.hbmBandwidth / T),
    tflops: {
      bf16: num(d.peaks.bf16 / T),
      fp16: num(d.peaks.fp16 / T),
      fp8: num(d.peaks.fp8 / T),
      int8: num(d.peaks.int8 / T),
      fp4: num(d.peaks.fp4 / T),
    },
    efficiency: {
      matmul: num(v.matmul),
      matmul_low_precision: num(Math.min(1, e.matmulLowPrecision * (v.matmul / e.matmul))),
      attention: num(v.attention),
      memory: num(v.memory),
      link: num(e.link),
    },
    scale_up_bandwidth_gb_s: num(d.scaleUpBandwidth / 1e9),
    scale_out_bandwidth_gb_s: num(d.scaleOutBandwidth / 1e9),
    devices_per_node: d.devicesPerNode,
    collective_latency_us: num(d.collectiveLatency * 1e6),
    scale_out_latency_us: num(d.scaleOutLatency * 1e6),
    matmul_op_overhead_us: num(d.matmulOpOverhead * 1e6),
    other_op_overhead_us: num(d.otherOpOverhead * 1e6),
    step_overhead_us: num(v.step_overhead * 1e6),
    seq_overhead_us: num(v.seq_overhead * 1e6),
    request_overhead_us: num(v.request_overhead * 1e6),
  };
}

/**
 * A device file (YAML) of `d` with `v` in place of its fitted constants.
 * The low-precision matmul efficiency moves with the BF16 one.
 *
 * @param header comment lines (without `#`) to put on top
 *
 * @example A device file with fitted constants
 * ```ts
 * import { DEVICE_CATALOG, deviceFileText } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const d = DEVICE_CATALOG.H100_SXM_80G;
 * const v = { matmul: 0.5, attention: 0.75, memory: 0.9, step_overhead: 5e-4, seq_overhead: 0, request_overhead: 0 };
 * const text = deviceFileText(d, v, ["fitted by hand"]);
 * assert.match(text, /^# fitted by hand\nname: H100_SXM_80G\n/);
 * assert.match(text, /^efficiency: \{matmul: 0\.5, /m);
 * assert.match(text, /^step_overhead_us: 500$/m);
 * ```
 */
export function deviceFileText(d: DeviceSpec, v: FitValues, header: readonly string[] = []): string {
  const f = deviceFileOf(d, v);
  const t = f.tflops;
  const e = f.efficiency;
  return [
    ...header.map((h) => `# ${h}`),
    `name: ${f.name}`,
    `memory_gib: ${f.memory_gib}`,
    `hbm_bandwidth_tb_s: ${f.hbm_bandwidth_tb_s}`,
    `tflops: {bf16: ${t.bf16}, fp16: ${t.fp16}, fp8: ${t.fp8}, int8: ${t.int8}, fp4: ${t.fp4}}`,
    `efficiency: {matmul: ${e.matmul}, matmul_low_precision: ${e.matmul_low_precision}, attention: ${e.attention}, ` +
    `memory: ${e.memory}, link: ${e.link}}`,
    `scale_up_bandwidth_gb_s: ${f.scale_up_bandwidth_gb_s}`,
    `scale_out_bandwidth_gb_s: ${f.scale_out_bandwidth_gb_s}`,
    `devices_per_node: ${f.devices_per_node}`,
    `collective_latency_us: ${f.collective_latency_us}`,
    `scale_out_latency_us: ${f.scale_out_latency_us}`,
    `matmul_op_overhead_us: ${f.matmul_op_overhead_us}`,
    `other_op_overhead_us: ${f.other_op_overhead_us}`,
    `step_overhead_us: ${f.step_overhead_us}`,
    `seq_overhead_us: ${f.seq_overhead_us}`,
    `request_overhead_us: ${f.request_overhead_us}`,
  ].join("\n") + "\n";
}

/**
 * The device `d` with the constants `v`, exactly as the device file
 * {@link deviceFileText} writes loads (so a fit's figures are those the
 * written file gives). A trial of a fit runs on it, without writing or
 * parsing a file.
 *
 * @throws {InputError} when a constant is outside the device file's bounds: efficiencies in (0, 1], host costs from
 * 0 to {@link MICROS_MAX} µs
 */
export function trialDevice(d: DeviceSpec, v: FitValues): DeviceSpec {
  for (const p of FIT_PARAMETERS) {
    // The constants fitted in fixed units are the host costs (seconds); the others are efficiencies.
    const cost = ABSOLUTE[p] !== undefined;
    if (cost ? !(v[p] >= 0 && v[p] * 1e6 <= MICROS_MAX) : !(v[p] > 0 && v[p] <= 1)) {
      const bounds = cost ? `0 to ${MICROS_MAX / 1e6} s` : "(0, 1]";
      throw new InputError(at, `trial constant ${p}: expected a value in ${bounds}, got ${v[p]}`);
    }
  }
  return deviceFromFile(deviceFileOf(d, v), "calibration trial");
}

/**
 * Simulates one measured run on the deployment with the constants `v`:
 * its request count, mean lengths, rate (Poisson) and max concurrency.
 *
 * @returns the metrics the run measured, simulated (median TTFT and TPOT from send, output tok/s)
 *
 * @example A larger step overhead, a longer TTFT
 * ```ts
 * import { DEVICE_CATALOG, readMeasurements, simulateRun, YamlSource } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const setup = {
 *   instances: [new YamlSource("i.yaml", i)],
 *   common: new YamlSource("c.yaml", c),
 *   fs: { readText: () => "", isDirectory: () => false },
 *   device: DEVICE_CATALOG.H100_SXM_80G,
 * };
 * const csv = "num_prompts,input_len,output_len,request_rate,median_ttft_ms,median_tpot_ms\n4,128,8,inf,20,8\n";
 * const [run] = readMeasurements("r.csv", csv);
 * const v = { matmul: 0.8, attention: 0.75, memory: 0.9, step_overhead: 5e-4, seq_overhead: 0, request_overhead: 0 };
 * const fast = simulateRun(setup, v, run);
 * const slow = simulateRun(setup, { ...v, step_overhead: 2e-3 }, run);
 * assert.ok(slow.ttft! > fast.ttft!);
 * ```
 */
export function simulateRun(setup: CalibrationSetup, v: FitValues, run: MeasuredRun): MeasuredMetrics {
  return atRunOf(run, () => simulateLoaded(loadRun(setup, run), setup.device, v));
}

/** The configuration key each field of a measured run is simulated as, and how a message names it. */
const SIMULATED_AS: Readonly<Record<string, { field: keyof NonNullable<MeasuredRun["origin"]>; as: string }>> = {
  "load_gen.num_requests": { field: "requests", as: "simulated as load_gen.num_requests" },
  "load_gen.num_input_tokens": { field: "input", as: "the mean per request, simulated as load_gen.num_input_tokens" },
  "load_gen.num_output_tokens": {
    field: "output",
    as: "the mean per request, simulated as load_gen.num_output_tokens",
  },
  "load_gen.request_rate": { field: "rate", as: "simulated as load_gen.request_rate" },
  "serving_config.max_concurrency": { field: "maxConcurrency", as: "simulated as serving_config.max_concurrency" },
};

/**
 * An error in the configuration calibration made of `run` (located at
 * {@link at}, keys the user never wrote) as an error at the user's own file
 * and key: the field's origin in the results file, else the run's `where`.
 */
function atRun(run: MeasuredRun, e: InputError): InputError {
  const key = e.location.keyPath ?? "";
  const known = Object.hasOwn(SIMULATED_AS, key) ? SIMULATED_AS[key] : undefined;
  // Without a max_concurrency of its own, a run is simulated with as many slots as requests.
  const field = known?.field === "maxConcurrency" && run.maxConcurrency === undefined ? "requests" : known?.field;
  const origin = field !== undefined ? run.origin?.[field] : undefined;
  const as = known?.as ?? `simulated as ${key || "a configuration"}`;
  return new InputError(origin ?? { file: run.where }, `${e.detail} (${as})`);
}

/** The loaded configuration of each run, per deployment: a fit loads each once, and {@link checkRuns} before it. */
const loadedRuns = new WeakMap<CalibrationSetup, WeakMap<MeasuredRun, LoadedConfig>>();

/**
 * The deployment of `setup` with the workload of `run`, loaded and
 * validated (the same for every trial, so loaded once); an error of that
 * configuration is one at the user's results file and key.
 */
function loadRun(setup: CalibrationSetup, run: MeasuredRun): LoadedConfig {
  let runs = loadedRuns.get(setup);
  if (!runs) loadedRuns.set(setup, runs = new WeakMap());
  const cached = runs.get(run);
  if (cached) return cached;
  const common = setup.common.view([], [
    {
      path: ["load_gen"],
      value: {
        load_gen_type: "fixed_length",
        num_requests: run.requests,
        num_input_tokens: Math.max(1, Math.round(run.input)),
        num_output_tokens: Math.max(1, Math.round(run.output)),
        request_rate: run.rate,
        arrival_process: "poisson",
        seed: 0,
      },
      location: at,
    },
    { path: ["serving_config", "max_concurrency"], value: run.maxConcurrency ?? run.requests, location: at },
  ]);
  const loaded = atRunOf(run, () => {
    const cfg = loadConfigSources(setup.instances, common, setup.fs);
    // The plan checks what the configuration alone cannot (the limits, the model's context): once, here.
    assemble(cfg);
    return cfg;
  });
  // Lengths the simulator can repeat: a token a request at least, and two outputs for a TPOT (between two tokens).
  const where = (field: "input" | "output") => run.origin?.[field] ?? { file: run.where };
  if (!(run.input >= 1)) {
    throw new InputError(where("input"), `expected at least one prompt token a request, got a mean of ${run.input}`);
  }
  if (!(run.output >= 1)) {
    throw new InputError(where("output"), `expected at least one output token a request, got a mean of ${run.output}`);
  }
  if (run.metrics.tpot !== undefined && Math.round(run.output) < 2) {
    throw new InputError(
      where("output"),
      `a TPOT was measured, so the requests had 2 output tokens or more; got a mean of ${run.output}`,
    );
  }
  runs.set(run, loaded);
  return loaded;
}

/** `f()`, whose errors in the configuration made of `run` are errors at the user's key (see {@link atRun}). */
function atRunOf<T>(run: MeasuredRun, f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw e instanceof InputError && e.location.file === at.file ? atRun(run, e) : e;
  }
}

/**
 * Loads the configuration every run is simulated with (kept for the fit):
 * a run the deployment cannot simulate (more requests than the common
 * file's `limits.max_requests`, a prompt beyond the model's context, …)
 * is an error at the key of the user's results file it came from, found
 * before any simulation.
 *
 * @throws {InputError} at the run's file and key (`completed`, `total_input_tokens`, a CSV column, …)
 *
 * @example A run of more requests than the limits allow
 * ```ts
 * import { DEVICE_CATALOG, readMeasurements, YamlSource } from "../../mod.ts";
 * import { checkRuns } from "./fit.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "limits: {max_requests: 100}";
 * const setup = {
 *   instances: [new YamlSource("i.yaml", i)],
 *   common: new YamlSource("c.yaml", c),
 *   fs: { readText: () => "", isDirectory: () => false },
 *   device: DEVICE_CATALOG.H100_SXM_80G,
 * };
 * const runs = readMeasurements("r.json", '{"completed": 1000, "total_input_tokens": 9000, ' +
 *   '"total_output_tokens": 900, "median_ttft_ms": 20}');
 * assert.throws(
 *   () => checkRuns(setup, runs),
 *   (e: Error) => e.message.startsWith("r.json:1:15: completed: 1000 requests exceed limits.max_requests (100;"),
 * );
 * ```
 */
export function checkRuns(setup: CalibrationSetup, runs: readonly MeasuredRun[]): void {
  for (const run of runs) loadRun(setup, run);
}

/** The metrics of a measured run, simulated on `device` with the constants `v`. */
function simulateLoaded(cfg: LoadedConfig, device: DeviceSpec, v: FitValues): MeasuredMetrics {
  const s = runLoaded(cfg, { device: trialDevice(device, v) }).summary;
  return {
    ttft: s.perMetric["TTFT(s)"].MEDIAN,
    tpot: s.perMetric["TPOT(s)"].MEDIAN,
    throughput: s.overall["output_token_throughput(tok/s)"],
  };
}

/**
 * Something measured that the simulator repeats with trial constants: a
 * measured run, or a validation scenario (its `measured:` rows).
 */
export interface FitTarget {
  /** For messages and per-point reports: a run's `where`, a scenario's file. */
  readonly source: string;
  /** The measured figures: a name (the metric) and a positive value. */
  readonly measured: readonly { readonly metric: string; readonly value: number }[];
  /** The simulated figures with the constants `v`, in the order of `measured`. */
  simulate(v: FitValues): readonly number[];
}

/** A measured run as a fit target: its median TTFT, median TPOT and output throughput. */
function runTarget(setup: CalibrationSetup, run: MeasuredRun): FitTarget {
  // Loaded at the first trial and kept (loadRun's cache): a trial changes the device alone.
  const keys = (Object.keys(run.metrics) as (keyof MeasuredMetrics)[]).filter((k) => run.metrics[k] !== undefined);
  return {
    source: run.where,
    measured: keys.map((k) => ({ metric: k, value: run.metrics[k]! })),
    simulate: (v) => {
      const m = atRunOf(run, () => simulateLoaded(loadRun(setup, run), setup.device, v));
      return keys.map((k) => m[k]!);
    },
  };
}

/** One compared figure: a target and the index of one of its measured figures. */
interface Point {
  readonly target: number;
  readonly metric: number;
}

function pointsOf(targets: readonly FitTarget[], which: readonly number[]): Point[] {
  return which.flatMap((target) => targets[target].measured.map((_, metric) => ({ target, metric })));
}

/** Simulated figures per target, remembered per set of values (the fit asks for the same point again and again). */
class Simulations {
  #memo = new Map<string, readonly number[]>();
  constructor(readonly targets: readonly FitTarget[]) {}
  get(v: FitValues, target: number): readonly number[] {
    const key = `${target}|${FIT_PARAMETERS.map((p) => v[p]).join(",")}`;
    let m = this.#memo.get(key);
    if (!m) {
      m = this.targets[target].simulate(v);
      this.#memo.set(key, m);
    }
    return m;
  }
  /** Simulated figure of a point (NaN or non-positive kept: the caller's log makes it an error the fit avoids). */
  value(v: FitValues, p: Point): number {
    return this.get(v, p.target)[p.metric];
  }
  measured(p: Point): number {
    return this.targets[p.target].measured[p.metric].value;
  }
  /** simulated / measured − 1 of each point. */
  errors(v: FitValues, points: readonly Point[]): number[] {
    return points.map((p) => this.value(v, p) / this.measured(p) - 1);
  }
}

/** Root mean square of ln(simulated / measured): what the fit minimizes. */
const rmsLog = (errors: readonly number[]) =>
  Math.sqrt(errors.reduce((s, e) => s + (e > -1 ? Math.log(1 + e) : 50) ** 2, 0) / Math.max(1, errors.length));

/**
 * The constants among `params` that move no point at all (a run timed by an
 * engine's measured kernel tables ignores the device's efficiencies, for
 * one): each moved a quarter of its range from the start, every point
 * simulated again.
 */
function withoutEffect(
  sims: Simulations,
  start: FitValues,
  params: readonly FitParameter[],
  points: readonly Point[],
): FitParameter[] {
  const base = points.map((p) => sims.value(start, p));
  return params.filter((p) => {
    const { min, max } = boundsOf(p, start);
    const moved = { ...start, [p]: start[p] + 0.25 * (max - min) <= max ? start[p] + 0.25 * (max - min) : min };
    return points.every((q, i) => sims.value(moved, q) === base[i]);
  });
}

/** Median |simulated / measured − 1|. */
const medianAbs = (errors: readonly number[]) => quantileSorted(errors.map(Math.abs).sort((a, b) => a - b), 0.5);

/** Default Levenberg–Marquardt iterations of a fit. */
export const FIT_ITERATIONS = 40;

/** Fits `params` on the points of `train`, from `start`. */
function fitOn(
  sims: Simulations,
  start: FitValues,
  params: readonly FitParameter[],
  train: readonly number[],
  iterations: number,
  trial: () => void = () => {},
) {
  const found = pointsOf(sims.targets, train);
  if (found.length === 0) return { ...start };
  // The fit takes two figures or more: a single one is given twice (the same least-squares problem).
  const points = found.length === 1 ? [found[0], found[0]] : found;
  const values = (scales: number[]): FitValues => {
    const v = { ...start };
    // The fit's finite differences step past its bounds: efficiencies are held within (0, 1] here too.
    params.forEach((p, i) => {
      const abs = ABSOLUTE[p];
      v[p] = abs ? Math.max(0, scales[i]) * abs.unit : Math.min(1, start[p] * scales[i]);
    });
    return v;
  };
  // A figure the simulator cannot produce (a metric with no value: NaN) counts as far off, not as a hole in the fit.
  const logOf = (x: number) => (x > 0 ? Math.log(x) : -50);
  const result = levenbergMarquardt(
    { x: points.map((_, i) => i), y: points.map((p) => Math.log(sims.measured(p))) },
    (scales: number[]) => {
      trial();
      const v = values(scales);
      return (i: number) => logOf(sims.value(v, points[i]));
    },
    {
      initialValues: params.map((p) => (ABSOLUTE[p] ? start[p] / ABSOLUTE[p]!.unit : 1)),
      // Efficiencies stay within (0, 1]; every scaled constant within FIT_RANGE of its catalog value.
      minValues: params.map((p) => (ABSOLUTE[p] ? 0 : 1 / FIT_RANGE)),
      maxValues: params.map((p) => ABSOLUTE[p]?.max ?? Math.min(FIT_RANGE, 1 / start[p])),
      gradientDifference: 0.02,
      // Small: a host cost moves a step by a few percent of itself, so its gradient is small and a damping of 1
      // would hold it still; the damping adapts (×11 up on a step that fails, ÷9 down on one that helps).
      damping: 1e-2,
      maxIterations: iterations,
      errorTolerance: 1e-6,
    },
  );
  // A fit that lost its way (a NaN step) keeps the values it started from.
  return result.parameterValues.every(Number.isFinite) ? values(result.parameterValues) : { ...start };
}

/** One compared figure, with the catalog values, the fitted ones and (with cross-validation) those fitted without it. */
export interface PointError {
  /** The run (`file:line`) or scenario file it belongs to. */
  readonly source: string;
  /** The metric: ttft, tpot or throughput for runs; the scenario's metric key for a scenario. */
  readonly metric: string;
  /** The measured value. */
  readonly measured: number;
  /** simulated / measured − 1 with the catalog values. */
  readonly before: number;
  /** … with the fitted values. */
  readonly after: number;
  /** … with the values fitted on the other folds (absent without cross-validation). */
  readonly heldOut?: number;
}

/** What a calibration found. */
export interface CalibrationResult {
  /** The catalog values. */
  readonly start: FitValues;
  /** The fitted values (unfitted constants keep the catalog's). */
  readonly fitted: FitValues;
  /** The constants fitted. */
  readonly parameters: readonly FitParameter[];
  /** Compared figures (runs × metrics). */
  readonly points: number;
  /** Median |error| of every point with the catalog values. */
  readonly errorBefore: number;
  /** … with the fitted values. */
  readonly errorAfter: number;
  /** Root mean square of ln(simulated / measured) over every point with the catalog values: what the fit minimizes. */
  readonly rmsBefore: number;
  /** … with the fitted values. */
  readonly rmsAfter: number;
  /** Constants asked for that move no point (not fitted; they keep their values). */
  readonly noEffect: readonly FitParameter[];
  /** k-fold cross-validation: median |error| of held-out points, uncalibrated and fitted on the other folds. */
  readonly crossValidation?: { readonly folds: number; readonly before: number; readonly after: number };
  /** Every compared figure. */
  readonly errors: readonly PointError[];
}

/** Options of a calibration. */
export interface CalibrateOptions {
  /** Constants to fit (default: all of {@link FIT_PARAMETERS}). */
  readonly parameters?: readonly FitParameter[];
  /** k of k-fold cross-validation over the runs or cases (default 5; 0 or 1: none). */
  readonly folds?: number;
  /** Levenberg–Marquardt iterations per fit (default {@link FIT_ITERATIONS}). */
  readonly iterations?: number;
  /**
   * Called as the fit goes: `done` of at most `total` trials (a trial
   * simulates the targets with one set of values; see {@link trialBudget}).
   */
  readonly onProgress?: (done: number, total: number) => void;
}

/**
 * The most trials a calibration of `targets` targets runs with `options`:
 * one with the starting values and one per constant (does it move
 * anything?), then per fit (the whole set, and one per cross-validation
 * fold) the start and, per Levenberg–Marquardt iteration, a step and its
 * finite differences. A fit that converges early runs fewer. The total of
 * {@link CalibrateOptions.onProgress}.
 */
export function trialBudget(targets: number, options: CalibrateOptions = {}): number {
  const asked = (options.parameters ?? DEFAULT_FIT).length;
  if (asked === 0) return 1;
  const k = Math.min(options.folds ?? 5, targets);
  const fits = 1 + (k >= 2 ? k : 0);
  return 1 + asked + fits * fitBudget(asked, options.iterations ?? FIT_ITERATIONS);
}

/** Trials of one fit of `params` constants: the start, then a step and its finite differences per iteration. */
const fitBudget = (params: number, iterations: number) => 1 + iterations * (params + 2);

/** Counts trials for {@link CalibrateOptions.onProgress}. */
class TrialCount {
  #done = 0;
  constructor(readonly total: number, readonly report?: (done: number, total: number) => void) {}
  /** One more trial. */
  readonly tick = () => this.to(this.#done + 1);
  /** Trials done so far. */
  get done(): number {
    return this.#done;
  }
  /** `n` trials done (a fit that ended early skips the rest of its budget). */
  to(n: number): void {
    this.#done = Math.min(n, this.total);
    this.report?.(this.#done, this.total);
  }
}

/**
 * Fits the constants to the runs.
 *
 * @param setup the deployment
 * @param runs the measured runs
 * @param options which constants (default all), how many folds (default 5; 0 or 1: none), iterations
 *
 * @example Fit the step overhead to one measured run
 * ```ts
 * import { calibrate, DEVICE_CATALOG, readMeasurements, YamlSource } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const setup = {
 *   instances: [new YamlSource("i.yaml", i)],
 *   common: new YamlSource("c.yaml", c),
 *   fs: { readText: () => "", isDirectory: () => false },
 *   device: DEVICE_CATALOG.H100_SXM_80G,
 * };
 * const csv = "num_prompts,input_len,output_len,request_rate,median_ttft_ms,median_tpot_ms\n4,128,8,inf,20,8\n";
 * const runs = readMeasurements("r.csv", csv);
 * const r = calibrate(setup, runs, { parameters: ["step_overhead"], folds: 0, iterations: 3 });
 * assert.equal(r.points, 2); // median TTFT and TPOT
 * assert.ok(r.errorAfter <= r.errorBefore);
 * assert.equal(r.fitted.matmul, r.start.matmul); // not fitted: the catalog's
 * ```
 */
export function calibrate(
  setup: CalibrationSetup,
  runs: readonly MeasuredRun[],
  options: CalibrateOptions = {},
): CalibrationResult {
  return calibrateTargets(setup.device, runs.map((r) => runTarget(setup, r)), options);
}

/**
 * Fits the constants of `device` to any measured targets (runs, scenarios),
 * with k-fold cross-validation over the targets: fold f holds out every
 * k-th target from the f-th, and its figures are predicted by constants
 * fitted on the others.
 */
export function calibrateTargets(
  device: DeviceSpec,
  targets: readonly FitTarget[],
  options: CalibrateOptions = {},
): CalibrationResult {
  const asked = options.parameters ?? DEFAULT_FIT;
  const count = new TrialCount(trialBudget(targets.length, options), options.onProgress);
  if (asked.length === 0) return (count.to(count.total), unfitted(device, targets));
  const iterations = options.iterations ?? FIT_ITERATIONS;
  const sims = new Simulations(targets);
  const start = deviceValues(device);
  const all = targets.map((_, i) => i);
  const points = pointsOf(targets, all);
  const noEffect = withoutEffect(sims, start, asked, points);
  count.to(1 + asked.length);
  const params = asked.filter((p) => !noEffect.includes(p));
  if (params.length === 0) return (count.to(count.total), { ...unfitted(device, targets), noEffect });
  // Each fit has its budget of trials; one that converges early skips the rest of it.
  const budget = fitBudget(asked.length, iterations);
  const fit = (train: readonly number[]) => {
    const end = count.done + budget;
    const v = fitOn(sims, start, params, train, iterations, count.tick);
    count.to(end);
    return v;
  };
  const fitted = fit(all);
  // With fewer targets than folds, every target is its own fold (leave one out); one target has nothing to hold out.
  const k = Math.min(options.folds ?? 5, targets.length);
  const heldOut = new Map<string, number>();
  let crossValidation: CalibrationResult["crossValidation"];
  if (k >= 2) {
    const before: number[] = [];
    const after: number[] = [];
    for (let f = 0; f < k; f++) {
      const test = pointsOf(targets, all.filter((i) => i % k === f));
      const v = fit(all.filter((i) => i % k !== f));
      before.push(...sims.errors(start, test));
      const e = sims.errors(v, test);
      after.push(...e);
      test.forEach((p, i) => heldOut.set(`${p.target}|${p.metric}`, e[i]));
    }
    crossValidation = { folds: k, before: medianAbs(before), after: medianAbs(after) };
  }
  const before = sims.errors(start, points);
  const after = sims.errors(fitted, points);
  const errors = points.map((p, i): PointError => {
    const h = heldOut.get(`${p.target}|${p.metric}`);
    return {
      source: targets[p.target].source,
      metric: targets[p.target].measured[p.metric].metric,
      measured: sims.measured(p),
      before: before[i],
      after: after[i],
      ...(h !== undefined ? { heldOut: h } : {}),
    };
  });
  return {
    start,
    fitted,
    parameters: params,
    points: points.length,
    errorBefore: medianAbs(before),
    errorAfter: medianAbs(after),
    rmsBefore: rmsLog(before),
    rmsAfter: rmsLog(after),
    noEffect,
    ...(crossValidation ? { crossValidation } : {}),
    errors,
  };
}

/**
 * The errors of `device`'s own values on the targets, nothing fitted: every
 * figure counts as its own held-out prediction.
 */
function unfitted(device: DeviceSpec, targets: readonly FitTarget[]): CalibrationResult {
  const sims = new Simulations(targets);
  const start = deviceValues(device);
  const points = pointsOf(targets, targets.map((_, i) => i));
  const before = sims.errors(start, points);
  return {
    start,
    fitted: start,
    parameters: [],
    points: points.length,
    errorBefore: medianAbs(before),
    errorAfter: medianAbs(before),
    rmsBefore: rmsLog(before),
    rmsAfter: rmsLog(before),
    noEffect: [],
    errors: points.map((p, i): PointError => ({
      source: targets[p.target].source,
      metric: targets[p.target].measured[p.metric].metric,
      measured: sims.measured(p),
      before: before[i],
      after: before[i],
      heldOut: before[i],
    })),
  };
}
