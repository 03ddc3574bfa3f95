/**
 * One run from files to numbers: load and validate the configuration,
 * resolve the deployment, simulate, summarize. The CLI, the scenario tests
 * and library users all go through here.
 *
 * @module
 */
import { loadConfig, loadConfigSources } from "./config/load.ts";
import type { FileSystem, LoadedConfig } from "./config/load.ts";
import type { YamlSource } from "./config/source.ts";
import { buildPlan } from "./config/plan.ts";
import { hostCostsOf } from "./config/engine_profiles.ts";
import type { SimulationPlan } from "./config/plan.ts";
import { simulate } from "./engine/simulator.ts";
import type { SimulationOptions, SimulationResult } from "./engine/types.ts";
import { summarize } from "./metrics/summary.ts";
import type { GoodputSlos, Summary } from "./metrics/summary.ts";
import { paramCounts } from "./model/model_spec.ts";
import { formatSummaryJson, summaryExtSections } from "./report/json.ts";
import { kvStarvedLine, overloadSummary } from "./report/diagnostics.ts";
import { poolStats } from "./metrics/groups.ts";
import type { PoolStats } from "./metrics/groups.ts";
import { describeLength } from "./workload/lengths.ts";
import { OVERLAP } from "./hardware/kernels.ts";

/** What a run produced. */
export interface RunOutput {
  /** The resolved deployment. */
  readonly plan: SimulationPlan;
  /** Raw per-request and per-engine results. */
  readonly result: SimulationResult;
  /** The statistics the report prints. */
  readonly summary: Summary;
}

/** Options of {@link runFiles}. */
export interface RunOptions extends SimulationOptions {
  /** Overrides `load_gen.seed`. */
  seed?: number;
  /** Where files are read from (default: the real filesystem). */
  fs?: FileSystem;
  /** Per-request SLOs for goodput. */
  goodput?: GoodputSlos;
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
 * import { runFiles } from "../mod.ts";
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
 * import { runSources, YamlSource } from "../mod.ts";
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

function runLoaded(cfg: LoadedConfig, options: RunOptions): RunOutput {
  const plan = buildPlan(cfg, { seed: options.seed });
  const result = simulate(plan.input, options);
  return { plan, result, summary: summarize(result, { goodput: options.goodput }) };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** ", prefix cache hits 63.2% of prompt tokens" when prefix caching found anything. */
function cacheNote(s: Summary): string {
  return s.prefixCache && s.prefixCache.promptTokens > 0
    ? `, prefix cache hits ${
      ((100 * s.prefixCache.hitTokens) / s.prefixCache.promptTokens).toFixed(1)
    }% of prompt tokens`
    : "";
}

/**
 * One line saying what was simulated (without wall time, so it is
 * deterministic): model, devices, instances, engines, KV capacity,
 * requests and simulated seconds.
 *
 * @example Say what a run simulated
 * ```ts
 * import { describeRun, runSources, YamlSource } from "../mod.ts";
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
  const { plan, summary } = out;
  const w = plan.input.workload;
  const groups = plan.groups.map((g) =>
    `${plural(g.numInstances, "instance")} of ${g.devicesPerInstance} × ${g.device.name} (TP${g.layout.tp}${
      g.dp > 1 ? ` DP${g.dp}` : ""
    }, ${g.memory.kvTokens.toLocaleString("en-US")} KV tokens per engine)`
  ).join(" + ");
  const params = (paramCounts(plan.model).total / 1e9).toFixed(1);
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
    : `${describeLength(w.input)} in / ${describeLength(w.output)} out`;
  const profiles = [
    ...new Set(plan.groups.flatMap((g) => g.serving.profile ? [g.serving.profile.resolved.record.label] : [])),
  ];
  return `Simulated ${plan.model.id} (${params}B, ${plan.config.common.model_config.quantize_linear_action}) on ${groups}${
    profiles.length ? ` with the ${profiles.join(" and ")} profile` : ""
  }: ${plural(plan.input.engines.length, "engine")}, ${plural(w.numRequests, "request")} of ${
    w.label ?? `${lengths} at ${rate}`
  }${cacheNote(summary)}, ${summary.simulatedSeconds.toFixed(1)} s simulated`;
}

const gib = (b: number) => b / 2 ** 30;

/**
 * The ext `deployment` section of the JSON output, one entry per instance
 * group: the device profile and where its numbers come from, the parallel
 * layout, quantization, the memory plan of one device, KV capacity, and the
 * efficiencies and overheads the step-time model used.
 *
 * @example Read the deployment of each group
 * ```ts
 * import { deploymentSection, runSources, YamlSource } from "../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", c));
 * const [group] = deploymentSection(out);
 * assert.equal(group.group, "group0");
 * assert.equal(group.devices_per_instance, 1);
 * assert.equal((group.device as { name: string }).name, "H100_SXM_80G");
 * ```
 */
export function deploymentSection(out: RunOutput): Record<string, unknown>[] {
  return out.plan.groups.map((g) => {
    const d = g.device;
    const l = g.layout;
    return {
      group: g.name,
      pd_role: g.role,
      instances: g.numInstances,
      devices_per_instance: g.devicesPerInstance,
      engines_per_instance: g.dp,
      device: { name: d.name, provenance: d.provenance, extrapolated: d.extrapolated },
      ...(g.serving.profile
        ? {
          engine_profile: {
            engine: g.serving.profile.resolved.record.engine,
            version: g.serving.profile.resolved.version ?? null,
            record: g.serving.profile.resolved.record.label,
            since: g.serving.profile.resolved.record.since,
            source: g.serving.profile.resolved.record.source,
            supplied: g.serving.profile.supplied,
            kernel_tables: g.cost.kernels.tables?.label ?? null,
            host_costs: hostCostsOf(g.serving.profile.resolved.record, {
              deviceName: d.name,
              memoryBytes: d.memoryBytes,
              tp: l.tp,
            }) ?? null,
          },
        }
        : {}),
      parallel: {
        tp: l.tp,
        dp: l.dp,
        dcp: l.dcp,
        mlp_tp: l.mlpTp,
        mlp_dp: l.mlpDp,
        lmhead_tp: l.lmheadTp,
        lmhead_dp: l.lmheadDp,
        ep: l.ep,
        moe_tp: l.moeTp,
        moe_dp: l.moeDp,
      },
      quantization: {
        linear: out.plan.config.common.model_config.quantize_linear_action,
        weight_bytes: g.quant.weightBytes,
        matmul_type: g.quant.peak,
        fallback: g.quant.fallback ?? null,
        kv_cache: out.plan.config.common.model_config.quantize_attention_action,
      },
      memory_gib_per_device: {
        device: gib(g.memory.deviceBytes),
        usable: gib(g.memory.usableBytes),
        weights: gib(g.memory.weightBytes),
        activation_reserve: gib(g.memory.activationBytes),
        runtime_reserve: gib(g.memory.runtimeBytes),
        kv_cache: gib(g.memory.kvBlocks * g.memory.kvBlockBytes),
      },
      kv_cache: {
        block_size: g.serving.serving.block_size,
        blocks_per_engine: g.memory.kvBlocks,
        tokens_per_engine: g.memory.kvTokens,
        bytes_per_token_per_device: g.cost.kvBytesPerToken,
      },
      efficiency: {
        matmul: d.efficiency.matmul,
        matmul_low_precision: d.efficiency.matmulLowPrecision,
        attention: d.efficiency.attention,
        memory: d.efficiency.memory,
        link: d.efficiency.link,
        gemm_overlap: OVERLAP,
      },
      overheads_us: {
        matmul_op: d.matmulOpOverhead * 1e6,
        other_op: d.otherOpOverhead * 1e6,
        step: d.stepOverhead * 1e6,
        per_sequence: (d.seqOverhead ?? 0) * 1e6,
        per_request: (d.requestOverhead ?? 0) * 1e6,
        collective_latency: d.collectiveLatency * 1e6,
        scale_out_latency: d.scaleOutLatency * 1e6,
      },
    };
  });
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
 * import { pools, runSources, YamlSource } from "../mod.ts";
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
  return poolStats(out.plan.groups.map((g) => g.name), out.result.engines, window(out));
}

/**
 * Lines for stderr that diagnose the run: overload (achieved against
 * offered rate, client waits) and a KV cache too small for the workload.
 *
 * @example A run that kept up has nothing to diagnose
 * ```ts
 * import { diagnostics, runSources, YamlSource } from "../mod.ts";
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
  const { plan, summary, result } = out;
  const t = result.requests;
  let tokens = 0;
  for (let i = 0; i < t.count; i++) tokens += t.input[i] + t.output[i];
  const overload = overloadSummary(summary, plan.input.workload.maxConcurrency);
  const lines = [
    overload && `warning: ${overload}`,
    kvStarvedLine(
      summary,
      plan.groups.filter((g) => g.role !== "prefill").map((g) => ({
        group: g.name,
        tokensPerEngine: g.memory.kvTokens,
      })),
      t.count > 0 ? tokens / t.count : 1,
    ),
  ];
  return lines.filter((x): x is string => x !== undefined);
}

const poolJson = (p: PoolStats) => ({
  group: p.group,
  ...(p.instance >= 0 ? { instance: p.instance } : {}),
  role: p.role,
  engines: p.engines,
  batch_occupancy: p.headroom.batchOccupancy,
  kv_occupancy: p.headroom.kvOccupancy,
  kv_occupancy_peak: p.headroom.kvOccupancyPeak,
  mfu: p.headroom.mfu,
  mbu: p.headroom.mbu,
  mean_batch: p.meanBatch,
  peak_batch: p.peakBatch,
  preemptions: p.preemptions,
  kv_transfers: {
    count: p.transfers,
    bytes: p.transferBytes,
    mean_seconds: p.meanTransferSeconds,
    backpressure_waits: p.kvWaits,
    mean_backpressure_wait_seconds: p.meanKvWaitSeconds,
  },
  requests_served: p.served,
});

/**
 * The ext `groups` and `instances` sections of the JSON output.
 *
 * @example The groups section of the JSON output
 * ```ts
 * import { poolSections, runSources, YamlSource } from "../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", c));
 * const { groups } = poolSections(out);
 * assert.equal(groups.length, 1);
 * assert.equal((groups[0] as { requests_served: number }).requests_served, 4);
 * ```
 */
export function poolSections(out: RunOutput): { groups: unknown[]; instances: unknown[] } {
  const p = pools(out);
  return { groups: p.groups.map(poolJson), instances: p.instances.map(poolJson) };
}

/**
 * The `--output_json` document of a run: the contract's two sections and
 * the ext `simulation`, `deployment`, `groups` and `instances` sections.
 *
 * @example The JSON document of a run
 * ```ts
 * import { runJson, runSources, YamlSource } from "../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", c));
 * const doc = JSON.parse(runJson(out));
 * assert.equal(doc.overall_summary.total_requests, 4);
 * assert.equal(doc.simulation.model, "meta-llama/Llama-3.1-8B-Instruct");
 * assert.equal(doc.deployment[0].device.name, "H100_SXM_80G");
 * ```
 */
export function runJson(out: RunOutput): string {
  return formatSummaryJson(out.summary, {
    ...summaryExtSections(out.summary),
    simulation: simulationSection(out),
    deployment: deploymentSection(out),
    ...poolSections(out),
  });
}

/**
 * The ext `simulation` section of the JSON output: what ran, deterministic.
 *
 * @example What ran, per engine
 * ```ts
 * import { runSources, simulationSection, YamlSource } from "../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", c));
 * const sim = simulationSection(out);
 * assert.equal(sim.preemptions, 0);
 * assert.equal((sim.engines as { requests_served: number }[])[0].requests_served, 4);
 * ```
 */
export function simulationSection(out: RunOutput): Record<string, unknown> {
  const { plan, result, summary } = out;
  return {
    model: plan.model.id,
    seed: plan.input.workload.seed,
    simulated_seconds: summary.simulatedSeconds,
    preemptions: summary.preemptions,
    unservable_requests: summary.unservable,
    ...(summary.prefixCache
      ? {
        prefix_cache: {
          prompt_blocks: summary.prefixCache.promptBlocks,
          hit_blocks: summary.prefixCache.hitBlocks,
          block_hit_rate: summary.prefixCache.hitBlocks / summary.prefixCache.promptBlocks,
          prompt_tokens: summary.prefixCache.promptTokens,
          hit_tokens: summary.prefixCache.hitTokens,
          token_hit_rate: summary.prefixCache.hitTokens / summary.prefixCache.promptTokens,
        },
      }
      : {}),
    diagnostics: diagnostics(out),
    engines: result.engines.map((e) => ({
      name: e.label,
      steps: e.steps,
      mean_batch: e.steps > 0 ? e.batchedSeqs / e.steps : 0,
      peak_batch: e.peakBatch,
      peak_kv_blocks: e.peakKvBlocks,
      preemptions: e.preemptions,
      requests_served: e.served,
    })),
  };
}
