/**
 * One run from files to numbers: load and validate the configuration,
 * resolve the deployment, simulate, summarize. The CLI, the scenario tests
 * and library users all go through here.
 *
 * @module
 */
import { loadConfig, loadConfigSources } from "../config/load.ts";
import type { FileSystem, LoadedConfig } from "../config/load.ts";
import type { DeviceSpec } from "../hardware/device.ts";
import type { YamlSource } from "../config/source.ts";
import { assemble } from "./assemble.ts";
import type { AssembledRun } from "./assemble.ts";
import type { Calibration } from "../config/calibrated.ts";
import { simulate } from "../engine/simulator.ts";
import type { SimulationOptions, SimulationResult } from "../engine/types.ts";
import { summarize } from "../metrics/summary.ts";
import { RequestStream } from "../metrics/stream.ts";
import { EXACT_UP_TO } from "../metrics/sketch.ts";
import { shardInput, unshardable } from "./shard.ts";
import type { Shard } from "./shard.ts";
import { InputError } from "../config/errors.ts";
import { loadStats, middleRate, withProbe } from "../metrics/load.ts";
import type { Probe } from "../metrics/load.ts";
import type { GoodputSlos, Summary } from "../metrics/summary.ts";
import { paramCounts } from "../model/model_spec.ts";
import { kvStarvedLine, overloadSummary } from "../metrics/diagnostics.ts";
import { poolStats } from "../metrics/groups.ts";
import { TimeSeriesCollector } from "../metrics/timeseries.ts";
import type { TimeSeries } from "../metrics/timeseries.ts";
import type { PoolStats } from "../metrics/groups.ts";
import { describeLength } from "../workload/lengths.ts";
import { describeThink } from "../workload/sessions.ts";

/** What a run produced. */
export interface RunOutput {
  /** The resolved deployment: engines, cost models, memory and workload. */
  readonly assembled: AssembledRun;
  /** Raw per-request and per-engine results. */
  readonly result: SimulationResult;
  /** The statistics the report prints. */
  readonly summary: Summary;
  /** Bucketed time series per instance group (when asked for with `timeseries`). */
  readonly series?: TimeSeries;
  /** Its requests' figures as they streamed in, when it was longer than its exact count. */
  readonly stream?: RequestStream;
}

/** Options of {@link runFiles}. */
export interface RunOptions extends SimulationOptions {
  /** Overrides `load_gen.seed`. */
  seed?: number;
  /**
   * Also run the overload probe ({@link saturationProbe}): its completion
   * rate becomes `summary.load.probe`. A trace's arrivals are its own: no
   * probe runs for one.
   */
  saturationProbe?: boolean;
  /** Where files are read from (default: the real filesystem). */
  fs?: FileSystem;
  /** Per-request SLOs for goodput. */
  goodput?: GoodputSlos;
  /**
   * Requests whose figures are kept exactly (default {@link EXACT_UP_TO}).
   * A longer run streams its requests' figures into quantile sketches
   * (within 0.5% of every exact percentile, said in its summary) and keeps
   * a table of every ⌈requests / exactUpTo⌉-th request for its load
   * figures: memory stays bounded however long the run.
   */
  exactUpTo?: number;
  /**
   * Runs one partition of the fleet and its requests (core/assembly/shard.ts);
   * whether its figures stream follows the whole run's request count, so
   * that the shards merge into what one run would report.
   */
  shard?: Shard;
  /** Collect time series for reports (memory bounded; see core/metrics/timeseries.ts). */
  timeseries?: boolean;
  /**
   * Runs every instance group on this device instead of the one its
   * `device_type` names (which is still validated): a calibration's trial
   * constants, without writing and parsing a device file for each trial.
   */
  device?: DeviceSpec;
  /**
   * The calibrated constants to run with (default: the committed fit);
   * `deno task validate` runs each source's rows with those fitted without it.
   */
  calibration?: Calibration;
  /**
   * Called with the resolved deployment before the simulation starts (a
   * profile opens its trace here: the engines' labels name its threads).
   */
  onAssembled?: (assembled: AssembledRun) => void;
}

/**
 * Runs the simulation described by upstream-format files.
 *
 * @param instancePaths instance files (groups concatenated)
 * @param commonPath the common file
 * @param options seed override, file system, profiling hooks
 * @throws {InputError} on bad input or an impossible deployment
 *
 * @example Run two in-memory files
 * ```ts
 * import { runFiles } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const files: Record<string, string> = { "i.yaml": i, "c.yaml": c };
 * const fs = { readText: (p: string) => files[p], isDirectory: () => false };
 * const out = runFiles(["i.yaml"], "c.yaml", { fs });
 * assert.equal(out.summary.overall.total_requests, 4);
 * assert.equal(out.summary.overall.total_output_tokens, 32);
 * assert.ok(out.summary.perMetric["TTFT(s)"].MEDIAN > 0);
 * ```
 */
export function runFiles(instancePaths: readonly string[], commonPath: string, options: RunOptions = {}): RunOutput {
  return runLoaded(loadConfig(instancePaths, commonPath, options.fs), options);
}

/**
 * Runs already parsed sources: instance and common files or inline blocks
 * (a scenario's, with its overrides applied).
 *
 * @throws {InputError} on bad input or an impossible deployment
 *
 * @example Run parsed sources
 * ```ts
 * import { runSources, YamlSource } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", c));
 * assert.equal(out.summary.overall.total_input_tokens, 4 * 128);
 * assert.equal(out.result.requests.count, 4);
 * ```
 */
export function runSources(instances: readonly YamlSource[], common: YamlSource, options: RunOptions = {}): RunOutput {
  return runLoaded(loadConfigSources(instances, common, options.fs), options);
}

/** Quantiles kept per latency column for a report's CDFs (every percentile, 0 to 100). */
const CDF_POINTS = 101;

/**
 * Runs an already loaded configuration ({@link loadConfig}): one configuration, loaded and validated once, runs with
 * several seeds or on several devices. `options.fs` is not read here.
 *
 * @throws {InputError} on an impossible deployment
 *
 * @example One loaded configuration, two seeds
 * ```ts
 * import { loadConfig, runLoaded } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 20, num_input_tokens: 128, num_output_tokens: 8, " +
 *   "request_rate: 50, arrival_process: poisson}";
 * const files: Record<string, string> = { "i.yaml": i, "c.yaml": c };
 * const cfg = loadConfig(["i.yaml"], "c.yaml", { readText: (p) => files[p], isDirectory: () => false });
 * const a = runLoaded(cfg, { seed: 1 });
 * const b = runLoaded(cfg, { seed: 2 });
 * assert.equal(a.summary.overall.total_requests, 20);
 * assert.notEqual(a.result.endTime, b.result.endTime);
 * assert.equal(runLoaded(cfg, { seed: 1 }).result.endTime, a.result.endTime);
 * ```
 */
export function runLoaded(loaded: LoadedConfig, options: RunOptions = {}): RunOutput {
  const device = options.device;
  const cfg = device
    ? { ...loaded, groups: loaded.groups.map((g) => ({ ...g, device, deviceOrigin: "given" as const })) }
    : loaded;
  const assembled = assemble(cfg, {
    seed: options.seed,
    ...(options.calibration ? { calibration: options.calibration } : {}),
  });
  options.onAssembled?.(assembled);
  const probed = (summary: Summary): Summary => {
    const p = options.saturationProbe ? saturationProbe(assembled) : undefined;
    return p ? { ...summary, load: withProbe(summary.load, p) } : summary;
  };
  // A run longer than its exact count streams its figures (see RunOptions.exactUpTo).
  const n = assembled.input.workload.numRequests;
  const exactUpTo = options.exactUpTo ?? EXACT_UP_TO;
  const stream = n > exactUpTo ? new RequestStream(exactUpTo, exactUpTo, options.goodput) : undefined;
  const { onRecord, shard } = options;
  const streamed: SimulationOptions = stream
    ? {
      keepEvery: Math.ceil(n / exactUpTo),
      onRecord: onRecord ? (r) => (stream.add(r), onRecord(r)) : (r) => stream.add(r),
    }
    : {};
  let input = assembled.input;
  if (shard) {
    const why = unshardable(input, shard);
    if (why) throw new InputError({ file: `--shard ${shard.index}/${shard.count}` }, why);
    input = shardInput(input, shard);
  }
  if (!options.timeseries) {
    const result = simulate(input, { ...options, ...streamed });
    return { assembled, result, summary: probed(summarize(result, { goodput: options.goodput, stream })), stream };
  }
  const engines = input.engines;
  const c = new TimeSeriesCollector(
    assembled.groups.map((g, i) => ({
      name: g.name,
      kvBlocks: engines.reduce((n, e) => n + (e.group === i ? e.kvBlocks : 0), 0),
    })),
    engines.map((e) => e.group),
  );
  const { onStep, onTransfer } = options;
  const result = simulate(input, {
    ...options,
    ...streamed,
    onStep: onStep ? (s) => (c.onStep(s), onStep(s)) : c.onStep,
    onTransfer: onTransfer ? (t) => (c.onTransfer(t), onTransfer(t)) : c.onTransfer,
  });
  return {
    assembled,
    result,
    summary: probed(summarize(result, { goodput: options.goodput, cdfPoints: CDF_POINTS, stream })),
    series: c.result(result.requests, result.endTime),
    stream,
  };
}

/**
 * The overload probe of a run: the same deployment and requests at twice
 * the run's rate, doubling (up to {@link PROBE_DOUBLINGS} times) until a
 * run does not keep up: that run's offered rate and completion rate (the
 * deployment's service rate under overload), or the last one's when every
 * rate kept up. The arrivals keep the run's process: a burst of identical
 * requests would start and finish in lockstep, batching unlike any steady
 * overload. Undefined for a trace or a rate schedule, whose arrivals are
 * their own, and for a run whose requests all arrive at once (it is its own
 * probe).
 *
 * @example One H100 kept up with 8 and 16 req/s of Llama-3.1-8B chat, and fell behind at 32
 * ```ts
 * import { assemble, loadConfig, saturationProbe } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const files: Record<string, string> = {
 *   "i.yaml": "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: both}]",
 *   "c.yaml": "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *     "load_gen: {load_gen_type: fixed_length, num_requests: 1000, num_input_tokens: 1024, num_output_tokens: 256, " +
 *     "request_rate: 4, arrival_process: poisson}",
 * };
 * const run = assemble(loadConfig(["i.yaml"], "c.yaml", { readText: (p) => files[p], isDirectory: () => false }));
 * const probe = saturationProbe(run)!;
 * assert.equal(probe.keepsUp, false);
 * assert.equal(Math.round(probe.offeredRate), 32);
 * assert.ok(probe.serviceRate > 16 && probe.serviceRate < 32); // what it serves under overload
 * ```
 */
export function saturationProbe(assembled: AssembledRun): Probe | undefined {
  const w = assembled.input.workload;
  if (w.source || w.arrival.schedule || !Number.isFinite(w.arrival.rate) || w.arrival.process === "burst") {
    return undefined;
  }
  let probe: Probe | undefined;
  for (let k = 1; k <= PROBE_DOUBLINGS && !(probe && !probe.keepsUp); k++) {
    const workload = { ...w, arrival: { ...w.arrival, rate: w.arrival.rate * 2 ** k } };
    const t = simulate({ ...assembled.input, workload }).requests;
    const load = loadStats(t);
    // Under overload the completions come at the service rate while requests still arrive (the batch full, a queue
    // behind it): their rate over the middle 80% of the completions before the last arrival. After it the queue
    // drains and the batch empties, and decode-only steps finish requests faster than a steady overload does (over
    // 1,000 requests at 1.5× one H100's capacity, counting them put it 13% high).
    const last = t.arrival[t.count - 1];
    const done: number[] = [];
    for (let i = 0; i < t.count; i++) {
      if (t.engine[i] >= 0 && t.finish[i] >= 0 && t.finish[i] <= last) done.push(t.finish[i]);
    }
    const serviceRate = done.length >= 20 ? middleRate(Float64Array.from(done).sort()) : load.achievedRate;
    probe = { offeredRate: load.offeredRate, keepsUp: load.keepsUp, serviceRate };
  }
  return probe;
}

/** How many times the overload probe doubles the rate (to 64× the run's) before it gives up finding an overload. */
export const PROBE_DOUBLINGS = 6;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** ", prefix cache hits 63.2% of prompt tokens" when prefix caching found anything. */
function cacheNote(s: Summary): string {
  return s.prefixCache && s.prefixCache.promptTokens > 0
    ? `, prefix cache hits ${
      ((100 * s.prefixCache.hitTokens) / s.prefixCache.promptTokens).toFixed(1)
    }% of prompt tokens${
      s.prefixCache.hostHitTokens !== undefined
        ? ` (host tier: ${((100 * s.prefixCache.hostHitTokens) / s.prefixCache.promptTokens).toFixed(1)}% more loaded)`
        : ""
    }`
    : "";
}

/**
 * One line saying what was simulated (without wall time, so it is
 * deterministic): model, devices, instances, engines, KV capacity,
 * requests and simulated seconds.
 *
 * @example Say what a run simulated
 * ```ts
 * import { describeRun, runSources, YamlSource } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", c));
 * const line = describeRun(out);
 * assert.match(line, /^Simulated meta-llama\/Llama-3\.1-8B-Instruct \(8\.0B, DISABLED\) on 1 instance of 1 × H100/);
 * assert.match(line, /: 1 engine, 4 requests of 128 in \/ 8 out at 2 req\/s constant, /);
 * ```
 */
export function describeRun(out: RunOutput): string {
  const { assembled, summary } = out;
  const w = assembled.input.workload;
  const groups = assembled.groups.map((g) =>
    `${plural(g.numInstances, "instance")} of ${g.devicesPerInstance} × ${g.device.name} (TP${g.layout.tp}${
      g.dp > 1 ? ` DP${g.dp}` : ""
    }, ${g.memory.kvTokens.toLocaleString("en-US")} KV tokens per engine)`
  ).join(" + ");
  const params = (paramCounts(assembled.model).total / 1e9).toFixed(1);
  const a = w.arrival;
  const rate = a.schedule
    ? `a ${a.process} rate schedule of ${a.schedule.length} segments`
    : Number.isFinite(a.rate) && a.process !== "burst"
    ? `${a.rate} req/s ${a.process}`
    : "all at t=0";
  const lengths = w.classes && w.classes.length > 1
    ? `${w.classes.length} classes (${
      w.classes.map((c) => `${c.name}: ${describeLength(c.input)} in / ${describeLength(c.output)} out`).join("; ")
    })`
    : w.dataset
    ? `${w.dataset}'s lengths (${describeLength(w.input)} in / ${describeLength(w.output)} out)`
    : `${describeLength(w.input)} in / ${describeLength(w.output)} out`;
  const profiles = [
    ...new Set(assembled.groups.flatMap((g) => g.serving.profile ? [g.serving.profile.resolved.record.label] : [])),
  ];
  const s = w.sessions;
  const workload = s
    ? `${lengths} per turn, in sessions of ${describeLength(s.turns)} turns (think time ${
      describeThink(s.thinkTime)
    }) starting at ${rate.replace("req/s", "sessions/s")}`
    : `${lengths} at ${rate}`;
  return `Simulated ${assembled.model.id} (${params}B, ${assembled.config.common.model_config.quantize_linear_action}) on ${groups}${
    profiles.length ? ` with the ${profiles.join(" and ")} profile` : ""
  }: ${plural(assembled.input.engines.length, "engine")}, ${plural(w.numRequests, "request")} of ${
    w.label ?? workload
  }${cacheNote(summary)}, ${summary.simulatedSeconds.toFixed(1)} s simulated`;
}

/** The run's span for time averages: from the first arrival to the last event, µs. */
function window(out: RunOutput): number {
  const t = out.result.requests;
  return out.result.endTime - (t.count > 0 ? t.arrival[0] : 0);
}

/**
 * Per-group and per-instance figures of a run.
 *
 * @example Requests served per group and per instance
 * ```ts
 * import { pools, runSources, YamlSource } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", c));
 * const { groups, instances } = pools(out);
 * assert.equal(groups[0].served, 4);
 * assert.equal(instances.length, 1);
 * ```
 */
export function pools(out: RunOutput): { groups: PoolStats[]; instances: PoolStats[] } {
  return poolStats(out.assembled.groups.map((g) => g.name), out.result.engines, window(out));
}

/**
 * Lines for stderr that diagnose the run: overload (achieved against
 * offered rate, client waits) and a KV cache too small for the workload.
 *
 * @example A run that kept up has nothing to diagnose
 * ```ts
 * import { diagnostics, runSources, YamlSource } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", c));
 * assert.deepEqual(diagnostics(out), []);
 * ```
 */
export function diagnostics(out: RunOutput): string[] {
  const { assembled, summary, result } = out;
  const t = result.requests;
  let tokens = 0;
  for (let i = 0; i < t.count; i++) tokens += t.input[i] + t.output[i];
  const overload = overloadSummary(summary, assembled.input.workload.maxConcurrency);
  const lines = [
    overload && `warning: ${overload}`,
    kvStarvedLine(
      summary,
      assembled.groups.filter((g) => g.role !== "prefill").map((g) => ({
        group: g.name,
        tokensPerEngine: g.memory.kvTokens,
      })),
      t.count > 0 ? tokens / t.count : 1,
    ),
  ];
  return lines.filter((x): x is string => x !== undefined);
}
