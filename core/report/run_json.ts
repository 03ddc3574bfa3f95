/**
 * The `--output_json` document of a run and its ext sections (simulation,
 * deployment, groups, instances, distributions, time series), built from a
 * {@link RunOutput}. The run itself (core/assembly/run.ts) knows nothing of them.
 *
 * @module
 */
import type { RunOutput } from "../assembly/run.ts";
import { headlineIntervals, intervalJson } from "./intervals.ts";
import { diagnostics, pools } from "../assembly/run.ts";
import type { PoolStats } from "../metrics/groups.ts";
import { OVERLAP } from "../hardware/kernels.ts";
import { formatSummaryJson, summaryExtSections } from "./json.ts";

const gib = (b: number) => b / 2 ** 30;

/**
 * The ext `deployment` section of the JSON output, one entry per instance
 * group: the device profile and where its numbers come from, the parallel
 * layout, quantization, the memory sizing of one device, KV capacity, and the
 * efficiencies and overheads the step-time model used.
 *
 * @example Read the deployment of each group
 * ```ts
 * import { deploymentSection, runSources, YamlSource } from "../../mod.ts";
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
  return out.assembled.groups.map((g) => {
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
            host: g.host ?? null,
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
        linear: out.assembled.config.common.model_config.quantize_linear_action,
        weight_bytes: g.quant.weightBytes,
        matmul_type: g.quant.peak,
        fallback: g.quant.fallback ?? null,
        kv_cache: out.assembled.config.common.model_config.quantize_attention_action,
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

const poolJson = (p: PoolStats) => ({
  group: p.group,
  ...(p.instance >= 0 ? { instance: p.instance } : {}),
  role: p.role,
  engines: p.engines,
  batch_occupancy: p.headroom.batchOccupancy,
  kv_occupancy: p.headroom.kvOccupancy,
  kv_occupancy_peak: p.headroom.kvOccupancyPeak,
  kv_cached: p.headroom.kvCached,
  busy_fraction: p.headroom.busyFraction,
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
 * import { poolSections, runSources, YamlSource } from "../../mod.ts";
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
 * import { runJson, runSources, YamlSource } from "../../mod.ts";
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
    ...seriesSections(out),
    ...intervalJson(headlineIntervals(out)),
  });
}

/**
 * The ext `distributions` (evenly spaced quantiles of each latency column,
 * for CDFs) and `timeseries` sections, when the run collected them
 * (`timeseries: true`); what `deno task compare` overlays.
 */
export function seriesSections(out: RunOutput): Record<string, unknown> {
  const { cdf } = out.summary;
  const ts = out.series;
  return {
    ...(cdf ? { distributions: { quantiles: Object.values(cdf)[0]?.length ?? 0, seconds: cdf } } : {}),
    ...(ts
      ? {
        timeseries: {
          bucket_seconds: ts.bucketSeconds,
          time_s: ts.time,
          offered_rate: ts.offeredRate,
          achieved_rate: ts.achievedRate,
          groups: ts.groups.map((g) => ({
            group: g.group,
            running: g.running,
            waiting: g.waiting,
            kv_occupancy: g.kvOccupancy,
            batch: g.batch,
            preemptions_per_s: g.preemptions,
            kv_transfers_in_flight: g.transfersInFlight,
          })),
        },
      }
      : {}),
  };
}

/**
 * The ext `simulation` section of the JSON output: what ran, deterministic.
 *
 * @example What ran, per engine
 * ```ts
 * import { runSources, simulationSection, YamlSource } from "../../mod.ts";
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
  const { assembled, result, summary } = out;
  return {
    model: assembled.model.id,
    seed: assembled.input.workload.seed,
    simulated_seconds: summary.simulatedSeconds,
    preemptions: summary.preemptions,
    unservable_requests: summary.unservable,
    // Scenario metric names (null: no prefix cache looked anything up; no engine served a request).
    prefix_hit_rate: summary.prefixCache ? summary.prefixCache.hitTokens / summary.prefixCache.promptTokens : null,
    host_hit_rate: summary.prefixCache?.hostHitTokens !== undefined
      ? summary.prefixCache.hostHitTokens / summary.prefixCache.promptTokens
      : null,
    load_imbalance: Number.isFinite(summary.loadImbalance) ? summary.loadImbalance : null,
    ...(summary.prefixCache
      ? {
        prefix_cache: {
          prompt_blocks: summary.prefixCache.promptBlocks,
          hit_blocks: summary.prefixCache.hitBlocks,
          block_hit_rate: summary.prefixCache.hitBlocks / summary.prefixCache.promptBlocks,
          prompt_tokens: summary.prefixCache.promptTokens,
          hit_tokens: summary.prefixCache.hitTokens,
          token_hit_rate: summary.prefixCache.hitTokens / summary.prefixCache.promptTokens,
          ...(summary.prefixCache.hostHitTokens !== undefined
            ? {
              host_hit_tokens: summary.prefixCache.hostHitTokens,
              host_token_hit_rate: summary.prefixCache.hostHitTokens / summary.prefixCache.promptTokens,
            }
            : {}),
        },
      }
      : {}),
    diagnostics: diagnostics(out),
    ...(summary.sketch
      ? {
        percentiles_sketched: {
          requests: summary.sketch.requests,
          exact_up_to: summary.sketch.exactUpTo,
          relative_accuracy: summary.sketch.relativeAccuracy,
        },
      }
      : {}),
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
