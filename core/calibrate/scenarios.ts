/**
 * Calibration to validation scenarios: each scenario's `measured:` rows are
 * measurements, simulated through the scenario runner (so every metric a
 * scenario can name is fitted, not only TTFT, TPOT and throughput), with
 * the constants of the device the scenario runs on in place of the
 * catalog's. Scenarios on several devices are fitted one device at a time;
 * the cross-validated error is pooled over all of them.
 *
 * @module
 */
import { InputError } from "../config/errors.ts";
import { denoFileSystem, loadConfigSources } from "../config/load.ts";
import { assemble } from "../assembly/assemble.ts";
import type { FileSystem } from "../config/load.ts";
import type { DeviceSpec } from "../hardware/device.ts";
import { quantileSorted } from "../metrics/percentile.ts";
import { LoadedConfigs, runScenario, scenarioSources } from "../scenario/runner.ts";
import { loadScenario } from "../scenario/scenario.ts";
import type { ConfigRef, Scenario, ScenarioOverride } from "../scenario/scenario.ts";
import { calibrateTargets, trialBudget, trialDevice } from "./fit.ts";
import type { CalibrateOptions, CalibrationResult, FitTarget } from "./fit.ts";

/** A validation scenario to calibrate on. */
export interface ScenarioCase {
  /** The scenario (its `measured:` rows are the measurements). */
  readonly scenario: Scenario;
  /**
   * The device every instance group of it runs on, as the run uses it: with
   * the host costs of its engine profile, when the profile has some.
   */
  readonly device: DeviceSpec;
  /**
   * What its constants are fitted with: the device, and the engine profile
   * record when one applies (engine versions differ in host costs, so each
   * record is fitted on its own).
   */
  readonly group: string;
  /** Its `serving_config.engine`, when set. */
  readonly engine?: string;
  /** Its `load_gen.num_requests` (undefined for a trace without a count). */
  readonly requests?: number;
}

/** Options for reading scenario cases. */
export interface ScenarioCaseOptions {
  /** Keep only the scenarios whose `serving_config.engine` is this. */
  readonly engine?: string;
}

/** A file system that reads each file once (a fit runs every scenario many times). */
function cachedFs(fs: FileSystem): FileSystem {
  const texts = new Map<string, string>();
  return {
    readText: (p) => {
      let t = texts.get(p);
      if (t === undefined) {
        t = fs.readText(p);
        texts.set(p, t);
      }
      return t;
    },
    isDirectory: (p) => fs.isDirectory(p),
  };
}

/** The configurations a scenario runs: its base, or each variant. */
const configsOf = (s: Scenario): ConfigRef[] => (s.variants.size ? [...s.variants.values()] : [s.config]);

/**
 * Reads validation scenarios as calibration cases: each must have
 * `measured:` rows, one instance file (or inline instances) and one device
 * type over all its groups.
 *
 * @param files scenario files
 * @param options `engine`: keep only the scenarios of that engine
 * @throws {InputError} on a bad scenario or configuration, or one that cannot be calibrated (located at the scenario)
 *
 * @example A scenario with a measured figure is a case
 * ```ts
 * import { loadScenarioCases } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const scenario = `name: ttft
 * instances: {${i}}
 * common:
 *   model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
 *   load_gen: {load_gen_type: fixed_length, num_requests: 1, num_input_tokens: 128, num_output_tokens: 2}
 * measured:
 *   - {metric: ttft_from_send.median, value: 0.02, max_error: 0.2, source: a made-up figure}
 * `;
 * const fs = { readText: (p: string) => p === "s.yaml" ? scenario : "", isDirectory: () => false };
 * const [kase] = loadScenarioCases(["s.yaml"], fs);
 * assert.equal(kase.scenario.name, "ttft");
 * assert.equal(kase.device.name, "H100_SXM_80G");
 * assert.equal(kase.requests, 1);
 * ```
 */
export function loadScenarioCases(
  files: readonly string[],
  fs: FileSystem = denoFileSystem,
  options: ScenarioCaseOptions = {},
): ScenarioCase[] {
  const cases: ScenarioCase[] = [];
  for (const file of files) {
    const s = loadScenario(file, fs);
    if (s.measured.length === 0) s.source.fail([], "no 'measured:' rows to calibrate to");
    let device: DeviceSpec | undefined;
    let group: string | undefined;
    let engine: string | undefined;
    let requests: number | undefined;
    for (const c of configsOf(s)) {
      if ("files" in c.instances && c.instances.files.length > 1) {
        s.source.fail(["instance_config"], "calibration takes scenarios with one instance file (or inline instances)");
      }
      const [inst, common] = scenarioSources(s, c, [], fs);
      const cfg = loadConfigSources(inst, common, fs);
      const plan = assemble(cfg);
      for (const g of plan.groups) {
        const record = g.serving.profile?.resolved.record;
        const label = record ? `${g.device.name} ${record.engine}-${record.since}` : g.device.name;
        device ??= g.device;
        group ??= label;
        if (g.device.name !== device.name) {
          s.source.fail(
            [],
            `runs on ${device.name} and ${g.device.name}: calibration fits one device type per scenario`,
          );
        }
        if (label !== group) {
          s.source.fail(
            [],
            `runs as ${group} and ${label}: calibration fits one device and engine record per scenario`,
          );
        }
      }
      engine ??= cfg.common.serving_config.engine;
      const lg = cfg.common.load_gen as { num_requests?: number | null };
      requests ??= lg.num_requests ?? undefined;
    }
    if (options.engine !== undefined && engine !== options.engine) continue;
    if (device === undefined || group === undefined) {
      throw new InputError(s.source.locate([]), "no instance group to run");
    }
    cases.push({
      scenario: s,
      device,
      group,
      ...(engine !== undefined ? { engine } : {}),
      ...(requests !== undefined ? { requests } : {}),
    });
  }
  return cases;
}

/**
 * A scenario case as a fit target: the scenario with every instance group
 * on the trial device (and at most `maxRequests` requests), its measured
 * values in row order.
 */
export function scenarioTarget(
  c: ScenarioCase,
  fs: FileSystem = denoFileSystem,
  options: { readonly maxRequests?: number } = {},
): FitTarget {
  const s = c.scenario;
  const files = cachedFs(fs);
  const location = { file: s.file };
  // At most `maxRequests` requests (a trace is replayed whole).
  const capped = (ref: ConfigRef): ConfigRef => {
    const [, common] = scenarioSources(s, ref, [], files);
    const lg = (common.data as { load_gen?: { load_gen_type?: string; num_requests?: number } } | null)?.load_gen;
    const n = lg?.num_requests ?? 500;
    if (options.maxRequests === undefined || lg?.load_gen_type === "trace" || n <= options.maxRequests) return ref;
    const cap: ScenarioOverride = {
      key: "load_gen.num_requests",
      path: ["load_gen", "num_requests"],
      value: options.maxRequests,
      location,
    };
    return { ...ref, overrides: [...ref.overrides, cap] };
  };
  // Only the measurements matter here: no assertions, capacity searches or baselines.
  const trial: Scenario = {
    ...s,
    config: capped(s.config),
    variants: new Map([...s.variants].map(([name, ref]) => [name, capped(ref)])),
    assertions: [],
    perPoint: [],
    slos: [],
    minValueSlos: [],
    baseline: undefined,
  };
  // Loaded once: a trial changes the device alone.
  const loaded = new LoadedConfigs();
  return {
    source: s.file,
    measured: s.measured.map((m) => ({ metric: m.key, value: m.value })),
    simulate: (v) =>
      runScenario(trial, files, { device: trialDevice(c.device, v), loaded }).measurements.map((m) => m.simulated),
  };
}

/** One device's calibration on its scenarios. */
export interface DeviceCalibration {
  /** The device (the catalog's, or its device file's). */
  readonly device: DeviceSpec;
  /** The device and engine profile record fitted (see {@link ScenarioCase.group}). */
  readonly group: string;
  /** Its cases, in the order given. */
  readonly cases: readonly ScenarioCase[];
  /** Always true: a device with fewer cases than the folds is cross-validated leaving one case out. */
  readonly fitted: boolean;
  /** The fit, its errors and cross-validation. */
  readonly result: CalibrationResult;
}

/** A calibration on scenarios, device by device, with errors pooled over all of them. */
export interface ScenarioCalibration {
  /** One calibration per device type, in order of first appearance. */
  readonly devices: readonly DeviceCalibration[];
  /** Compared figures over all devices. */
  readonly points: number;
  /** Median |error| of every figure with the catalog values. */
  readonly errorBefore: number;
  /** … with each device's fitted values. */
  readonly errorAfter: number;
  /**
   * Median |error| of every figure predicted by constants fitted without
   * its case's fold (k-fold per device; a device with one case has nothing
   * else to fit on, so its figures count with the catalog values).
   * Undefined when cross-validation is off.
   */
  readonly crossValidated?: number;
}

/** Options of {@link calibrateScenarios}. */
export interface ScenarioCalibrateOptions extends CalibrateOptions {
  /** Simulate each case with at most this many requests (faster; trace workloads keep theirs). */
  readonly maxRequests?: number;
}

const medianAbs = (errors: readonly number[]) =>
  errors.length ? quantileSorted(errors.map(Math.abs).sort((a, b) => a - b), 0.5) : NaN;

/**
 * Fits each device's constants to its scenarios (k-fold cross-validated
 * over cases) and pools the errors.
 *
 * @throws {InputError} when there is no case
 *
 * @example Fit one device to one case
 * ```ts
 * import { calibrateScenarios, loadScenarioCases } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const scenario = `name: ttft
 * instances: {${i}}
 * common:
 *   model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
 *   load_gen: {load_gen_type: fixed_length, num_requests: 1, num_input_tokens: 128, num_output_tokens: 2}
 * measured:
 *   - {metric: ttft_from_send.median, value: 0.02, max_error: 0.2, source: a made-up figure}
 * `;
 * const fs = { readText: (p: string) => p === "s.yaml" ? scenario : "", isDirectory: () => false };
 * const cases = loadScenarioCases(["s.yaml"], fs);
 * const r = calibrateScenarios(cases, fs, { parameters: ["step_overhead"], folds: 0, iterations: 3 });
 * assert.equal(r.points, 1);
 * assert.equal(r.devices[0].group, "H100_SXM_80G");
 * assert.ok(r.errorAfter <= r.errorBefore);
 * ```
 */
export function calibrateScenarios(
  cases: readonly ScenarioCase[],
  fs: FileSystem = denoFileSystem,
  options: ScenarioCalibrateOptions = {},
): ScenarioCalibration {
  if (cases.length === 0) throw new InputError({ file: "(scenarios)" }, "no scenario to calibrate on");
  const byDevice = new Map<string, ScenarioCase[]>();
  for (const c of cases) byDevice.set(c.group, [...(byDevice.get(c.group) ?? []), c]);
  // Progress over every device's fit: each device's trials after those of the devices before it.
  const groups = [...byDevice.values()];
  const total = groups.reduce((n, cs) => n + trialBudget(cs.length, options), 0);
  let offset = 0;
  // k-fold cross-validation over a device's cases; with fewer cases than folds, leave one case out.
  const devices = groups.map((cs): DeviceCalibration => {
    const base = offset;
    offset += trialBudget(cs.length, options);
    const report = options.onProgress;
    const result = calibrateTargets(cs[0].device, cs.map((c) => scenarioTarget(c, fs, options)), {
      ...options,
      ...(report ? { onProgress: (done: number) => report(base + done, total) } : {}),
    });
    return { device: cs[0].device, group: cs[0].group, cases: cs, fitted: true, result };
  });
  const errors = devices.flatMap((d) => d.result.errors);
  const cv = (options.folds ?? 5) >= 2;
  return {
    devices,
    points: errors.length,
    errorBefore: medianAbs(errors.map((e) => e.before)),
    errorAfter: medianAbs(errors.map((e) => e.after)),
    ...(cv ? { crossValidated: medianAbs(errors.map((e) => e.heldOut ?? e.before)) } : {}),
  };
}
