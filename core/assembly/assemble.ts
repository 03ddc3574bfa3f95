/**
 * Turns a validated configuration into what the simulator runs: for each
 * instance group its parallel layout, cost model and memory sizing, and one
 * engine per DP rank of every instance. Every rule that needs the model or
 * the device (TP dividing the heads, the model fitting in memory, the PD
 * topology) is checked here and reported at the key that breaks it.
 *
 * @module
 */
import { publishedAcceptance } from "../config/speculation.ts";
import { runsSglangLoop } from "../engine/sglang_former.ts";
import { runsMindieLoop } from "../engine/mindie_former.ts";
import type { ServingConfig } from "../config/types.ts";
import type { YamlSource } from "../config/source.ts";
import { kvValueBytes, linearQuant } from "../hardware/quant.ts";
import type { LinearQuant } from "../hardware/quant.ts";
import { sizeMemory } from "../hardware/memory.ts";
import type { MemorySizing } from "../hardware/memory.ts";
import { RooflineCostModel } from "../hardware/roofline.ts";
import { decodeBatch } from "../hardware/batch.ts";
import type { EngineLayout } from "../hardware/layout.ts";
import type { DeviceSpec } from "../hardware/device.ts";
import type { ModelSpec } from "../model/model_spec.ts";
import type { EngineSpec, SimulationInput } from "../engine/types.ts";
import { unservableReason } from "../engine/unservable.ts";
import type { LoadedConfig, LoadedGroup } from "../config/load.ts";
import { showLimit } from "../config/errors.ts";
import { workloadOf } from "./workload.ts";
import { resolveLayout } from "../config/layout.ts";
import { calibration } from "../config/engine_profiles.ts";
import type { HostModel, ProfiledServing } from "../config/engine_profiles.ts";
import { resolveEngine } from "./engine_channel.ts";
import type { Calibration } from "../config/calibrated.ts";

/**
 * The slowest KV link a deployment may declare (bandwidth × rate × TP),
 * bytes/s: 1 MB/s, a thousandth of a 10 GbE port. Below it a prompt's KV
 * takes days to move and transfer times leave the integer-µs clock.
 */
const MIN_LINK_BYTES_PER_S = 1e6;

/** The resolved deployment of one instance group. */
export interface AssembledGroup {
  /** Position among all instance groups. */
  readonly index: number;
  /** `name`, or `group<i>`. */
  readonly name: string;
  /** Serving role. */
  readonly role: "prefill" | "decode" | "both";
  /** Instances in the group. */
  readonly numInstances: number;
  /** Devices per instance (world size). */
  readonly devicesPerInstance: number;
  /** DP ranks per instance (engines per instance). */
  readonly dp: number;
  /** The accelerator. */
  readonly device: DeviceSpec;
  /** TP layout of one engine. */
  readonly layout: EngineLayout;
  /** Linear-layer quantization as run on this device. */
  readonly quant: LinearQuant;
  /** The step-time model of one engine. */
  readonly cost: RooflineCostModel;
  /** Memory of one device of an engine. */
  readonly memory: MemorySizing;
  /** The serving settings of its engines, with the engine profile (if any) applied. */
  readonly serving: ProfiledServing;
  /** Its engine's host costs, launch and overlap, when it names an engine. */
  readonly host?: HostModel;
}

/** Everything a run needs, resolved. */
export interface AssembledRun {
  /** The engines, workload and routing to simulate. */
  readonly input: SimulationInput;
  /** The model's architecture. */
  readonly model: ModelSpec;
  /** Per instance group. */
  readonly groups: readonly AssembledGroup[];
  /** Lines to show the user. */
  readonly notices: readonly string[];
  /** The validated files. */
  readonly config: LoadedConfig;
}

/** Options that override the files. */
export interface AssemblyOptions {
  /** Overrides `load_gen.seed`. */
  readonly seed?: number;
  /**
   * The calibrated constants (default: the committed fit): `deno task
   * validate` runs a source's rows with the constants fitted without it.
   */
  readonly calibration?: Calibration;
}

const gib = (b: number) => `${(b / 2 ** 30).toFixed(1)} GiB`;

/**
 * Said (on stderr) for every run that names no engine: the generic path is
 * upstream's model, with none of an engine's host costs, kernel tables,
 * graph sizes or scheduling defaults, and its numbers are graded against
 * no engine (docs/fidelity.md).
 */
export const GENERIC_PATH_NOTICE =
  "note: no serving_config.engine: the generic path ignores engine host costs, kernel tables, CUDA-graph sizes and scheduling defaults; name the engine you serve with (vllm, sglang, trtllm, mindie or lmdeploy, with engine_version) for engine-aware timings";

function checkTopology(cfg: LoadedConfig): void {
  const roles = new Set(cfg.groups.map((g) => g.config.pd_role));
  const bad = (role: string, rule: string) => {
    const g = cfg.groups.find((x) => x.config.pd_role === role)!;
    g.source.fail([...g.path, "pd_role"], rule);
  };
  if (roles.has("both") && (roles.has("prefill") || roles.has("decode"))) {
    bad(
      roles.has("prefill") ? "prefill" : "decode",
      "'both' groups cannot be mixed with 'prefill' or 'decode' groups: use only 'both' (aggregated) or 'prefill' and 'decode' together (disaggregated)",
    );
  }
  if (roles.has("prefill") !== roles.has("decode")) {
    bad(
      roles.has("prefill") ? "prefill" : "decode",
      `a '${roles.has("prefill") ? "prefill" : "decode"}' group needs a '${
        roles.has("prefill") ? "decode" : "prefill"
      }' group to pair with`,
    );
  }
}

function layoutOf(g: LoadedGroup, model: ModelSpec, notices: string[]): { layout: EngineLayout; dp: number } {
  const r = resolveLayout(model, g.config.parallel_config, g.config.num_devices_per_instance);
  if (r.kind === "violations") {
    const v = r.violations[0];
    g.source.fail([...g.path, "parallel_config", v.key], v.message);
  }
  const who = (note: string) =>
    note.startsWith("ep_size is ignored") ? `${g.config.name ?? `instance group ${g.path[1]}`}: ${note}` : note;
  for (const n of r.notes) notices.push(`note: ${g.source.file}: ${who(n)}`);
  return { layout: r.layout, dp: r.dp };
}

/**
 * Resolves a loaded configuration into engines.
 *
 * @throws {InputError} for a deployment that cannot run (model too large,
 *   layout not dividing the model, unsupported topology)
 *
 * @example Resolve the engines of a configuration
 * ```ts
 * import { assemble, loadConfig } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const files: Record<string, string> = { "i.yaml": i, "c.yaml": c };
 * const fs = { readText: (p: string) => files[p], isDirectory: () => false };
 * const plan = assemble(loadConfig(["i.yaml"], "c.yaml", fs), { seed: 7 });
 * assert.equal(plan.input.engines.length, 1);
 * assert.equal(plan.input.workload.seed, 7);
 * assert.equal(plan.groups[0].device.name, "H100_SXM_80G");
 * assert.ok(plan.groups[0].memory.kvTokens > 100_000);
 * ```
 */
export function assemble(cfg: LoadedConfig, options: AssemblyOptions = {}): AssembledRun {
  const { common, model } = cfg;
  const mc = common.model_config;
  const sc = common.serving_config;
  const lg = common.load_gen;
  const notices = [...cfg.notices];
  if (sc.engine === undefined) notices.push(GENERIC_PATH_NOTICE);
  checkTopology(cfg);
  const spec = speculation(cfg, notices);
  // The serving_config keys the user wrote: an engine profile fills in only the others.
  const data = cfg.commonSource.data as { serving_config?: Record<string, unknown> } | null;
  const written = new Set(Object.keys(data?.serving_config ?? {}));
  const groups: AssembledGroup[] = [];
  const engines: EngineSpec[] = [];
  const limits = common.limits;
  let instanceCount = 0;
  for (const [index, g] of cfg.groups.entries()) {
    instanceCount += g.config.num_instances;
    const raise = "raise it in the common file's limits";
    if (instanceCount > limits.max_instances) {
      const limit = showLimit(limits.max_instances);
      g.source.fail(
        [...g.path, "num_instances"],
        `${instanceCount} instances in all exceed limits.max_instances (${limit}); ${raise}`,
      );
    }
    const { layout, dp } = layoutOf(g, model, notices);
    const engineCount = engines.length + g.config.num_instances * dp;
    if (engineCount > limits.max_engines) {
      const limit = showLimit(limits.max_engines);
      g.source.fail(
        [...g.path, "num_instances"],
        `${engineCount} engines in all (instances × dp_size) exceed limits.max_engines (${limit}); ${raise}`,
      );
    }
    const engine = resolveEngine(g, sc, written, {
      dp,
      tp: layout.tp,
      mla: model.mla !== undefined,
      ...(model.maxPositions ? { maxModelLen: model.maxPositions } : {}),
    }, options.calibration ?? calibration());
    const { profiled, device, host } = engine;
    const notice = profiled.profile?.resolved.notice;
    if (notice && !notices.includes(notice)) notices.push(notice);
    const gs = profiled.serving;
    const quant = linearQuant(mc.quantize_linear_action, mc.mxfp4_group_size, device);
    if (quant.fallback) notices.push(`note: ${quant.fallback}`);
    const comm = g.config.communication_config;
    const cost = new RooflineCostModel({
      model,
      device,
      layout,
      linear: quant,
      lmheadWeightBytes: mc.quantize_lmhead ? quant.weightBytes : 2,
      kvBytes: kvValueBytes(mc.quantize_attention_action),
      host2deviceBandwidth: mc.enable_preprocessing_modeling ? comm.host2device_bandwidth * comm.host2device_rate : 0,
      blockSize: gs.block_size,
      draftTokens: spec.tokens,
      drafter: spec.drafter,
      kernelTables: engine.kernelTables,
      graphSizes: engine.graphSizes,
      ...(host
        ? {
          launch: {
            perKernel: host.launch === "compiled" ? 0 : host.launchUs * 1e-6,
            eager: host.launch === "eager",
            floor: host.floorUs * 1e-6,
            overlap: host.overlap,
          },
        }
        : {}),
    });
    const memory = sizeMemory(cost, {
      memoryFraction: gs.kv_cache_memory_fraction,
      blockSize: gs.block_size,
      maxTokens: gs.max_tokens_budget,
      maxSeqs: gs.max_num_seqs,
      pinnedBlocks: gs.num_kv_blocks,
      ...(profiled.profile ? { accounting: profiled.profile.resolved.record.kvMemory } : {}),
    });
    const where = g.config.parallel_config.tp_size !== undefined
      ? [...g.path, "parallel_config", "tp_size"]
      : [...g.path, "num_devices_per_instance"];
    const need = memory.weightBytes + memory.activationBytes + memory.runtimeBytes;
    if (memory.kvBytes < memory.kvBlockBytes) {
      g.source.fail(
        where,
        `${model.id} does not fit on ${device.name} with tp_size ${layout.tp}: needs ${gib(need)} per device (weights ${
          gib(memory.weightBytes)
        }, activations ${gib(memory.activationBytes)}, runtime ${gib(memory.runtimeBytes)}) plus KV blocks of ${
          (memory.kvBlockBytes / 2 ** 20).toFixed(1)
        } MiB, but ${gib(memory.usableBytes)} is usable (kv_cache_memory_fraction ${gs.kv_cache_memory_fraction} of ${
          gib(memory.deviceBytes)
        })${
          model.moe && layout.ep * layout.moeTp === 1 && layout.tp * layout.dp > 1
            ? "; every device holds all experts (ep_size 1, moe_tp_size 1): split them with ep_size or moe_tp_size"
            : ""
        }`,
      );
    }
    if (gs.num_kv_blocks !== null && gs.num_kv_blocks * memory.kvBlockBytes > memory.kvBytes) {
      cfg.commonSource.fail(
        ["serving_config", "num_kv_blocks"],
        `${gs.num_kv_blocks} blocks need ${
          gib(gs.num_kv_blocks * memory.kvBlockBytes)
        } per device on ${device.name}, but only ${
          gib(memory.kvBytes)
        } is left after weights and activations (at most ${Math.floor(memory.kvBytes / memory.kvBlockBytes)} blocks)`,
      );
    }
    const name = g.config.name ?? `group${index}`;
    groups.push({
      index,
      name,
      role: g.config.pd_role,
      numInstances: g.config.num_instances,
      devicesPerInstance: g.config.num_devices_per_instance,
      dp,
      device,
      layout,
      quant,
      cost,
      memory,
      serving: profiled,
      ...(host ? { host } : {}),
    });
    // Seconds per token of a reference decode batch (32 sequences at 1K
    // context): routers weigh outstanding work by it across unlike engines.
    const tokenTime = cost.stepTime(decodeBatch(32, 1024)) / 32;
    const link = mc.enable_kv_transfer_modeling
      ? comm.device2device_bandwidth * comm.device2device_rate * layout.tp
      : Infinity;
    if (link < MIN_LINK_BYTES_PER_S) {
      // Slower than this, one request's KV takes longer to move than a run may last (times are integer µs).
      g.source.fail(
        [...g.path, "communication_config", "device2device_rate"],
        `the KV link's usable bandwidth (device2device_bandwidth × device2device_rate × TP = ${
          link.toPrecision(3)
        } bytes/s) is below ${MIN_LINK_BYTES_PER_S.toLocaleString("en-US")} bytes/s`,
      );
    }
    for (let inst = 0; inst < g.config.num_instances; inst++) {
      for (let rank = 0; rank < dp; rank++) {
        engines.push({
          role: g.config.pd_role,
          instance: inst,
          tokenTime,
          // Each device of the receiving engine gets the KV of its own heads
          // (replicas included): its per-device bytes × its devices.
          kvTransferBytesPerToken: cost.kvBytesPerToken * layout.tp,
          linkBandwidth: link,
          linkLatency: mc.enable_kv_transfer_modeling ? comm.device2device_latency : 0,
          label: `${name}/${inst}/dp${rank}`,
          group: index,
          cost,
          kvBlocks: memory.kvBlocks,
          blockSize: gs.block_size,
          maxTokens: gs.max_tokens_budget,
          maxSeqs: gs.max_num_seqs,
          chunkedPrefill: gs.enable_chunked_prefill,
          prefixCaching: gs.enable_prefix_caching,
          mixPrefillDecode: gs.mix_prefill_decode,
          ...offload(
            gs,
            cost.kvBytesPerToken,
            layout.tp,
            device.hostLinkBandwidth ?? comm.host2device_bandwidth * comm.host2device_rate,
            cfg.commonSource,
          ),
          draftTokens: spec.tokens,
          draftAcceptance: mc.mtp_acceptance_rate,
          ...(spec.perPosition ? { draftAcceptances: spec.perPosition } : {}),
          admission: gs.admission_policy,
          scheduler: engine.scheduler,
          ...(engine.sglangTuning ? { sglangTuning: engine.sglangTuning } : {}),
          schedulerSteps: gs.num_scheduler_steps,
          requestDelay: engine.requestDelay,
          maxModelLen: model.maxPositions,
        });
      }
    }
  }
  // Identical requests: if none fits any engine, the deployment cannot serve the workload at all.
  if (lg.load_gen_type === "fixed_length") {
    const reasons = engines.map((e) => unservableReason(e, lg.num_input_tokens, lg.num_output_tokens));
    if (reasons.every((r) => r !== undefined)) {
      cfg.commonSource.fail(
        ["load_gen", "num_input_tokens"],
        `no engine can ever serve a request of ${lg.num_input_tokens} + ${lg.num_output_tokens} tokens: ${reasons[0]}`,
      );
    }
  }
  // The host tier is read by the vLLM-style admission; SGLang's and MindIE's own loops admit by their own rules.
  const ownLoop = engines.find((e) => (e.hostKvBlocks ?? 0) > 0 && (runsSglangLoop(e) || runsMindieLoop(e)));
  if (ownLoop) {
    cfg.commonSource.fail(
      ["serving_config", "kv_offload"],
      `${runsSglangLoop(ownLoop) ? "SGLang's" : "MindIE's"} scheduling loop does not read a host KV tier here ` +
        `(only the vLLM-style scheduler does): drop kv_offload or serve with another engine`,
    );
  }
  const input: SimulationInput = {
    engines,
    routing: sc.routing_policy,
    ...(sc.prefix_aware_weights ? { routingWeights: sc.prefix_aware_weights } : {}),
    workload: workloadOf(cfg.commonSource, lg, sc.max_concurrency, options.seed, cfg.trace, limits, model.maxPositions),
  };
  return { input, model, groups, notices, config: cfg };
}

/** How a run speculates: draft tokens per decode step, what drafts them, per-position acceptance when given. */
interface Speculation {
  readonly tokens: number;
  readonly drafter: "module" | "none";
  readonly perPosition?: readonly number[];
}

/**
 * The run's speculation: the model's MTP layers (`model_config.num_mtp_tokens`)
 * or `serving_config.speculative_config` (EAGLE, n-gram), never both, with one
 * acceptance rate per draft token.
 */
function speculation(cfg: LoadedConfig, notices: string[]): Speculation {
  const mc = cfg.common.model_config;
  const sp = cfg.common.serving_config.speculative_config;
  if (!sp) return { tokens: mc.num_mtp_tokens, drafter: "module" };
  const src = cfg.commonSource;
  if (mc.num_mtp_tokens > 0) {
    src.fail(
      ["serving_config", "speculative_config"],
      `speculate one way: model_config.num_mtp_tokens is ${mc.num_mtp_tokens}; set it to 0 or drop speculative_config`,
    );
  }
  let rates = sp.acceptance_rates;
  if (rates && rates.length !== sp.num_speculative_tokens) {
    src.fail(
      ["serving_config", "speculative_config", "acceptance_rates"],
      `expected one rate per draft token (${sp.num_speculative_tokens}), got ${rates.length}`,
    );
  }
  if (!rates) {
    const p = publishedAcceptance(sp.method, cfg.model.id);
    if (sp.num_speculative_tokens > p.rates.length) {
      src.fail(
        ["serving_config", "speculative_config", "num_speculative_tokens"],
        `published ${sp.method} rates cover ${p.rates.length} draft tokens (${p.source}); give acceptance_rates ` +
          `for ${sp.num_speculative_tokens}`,
      );
    }
    rates = p.rates.slice(0, sp.num_speculative_tokens);
    notices.push(`note: ${sp.method} acceptance per draft position ${rates.join(", ")}: ${p.source}`);
  }
  return { tokens: sp.num_speculative_tokens, drafter: sp.method === "ngram" ? "none" : "module", perPosition: rates };
}

/**
 * An engine's host tier (`serving_config.kv_offload`): its blocks (host
 * memory over the KV bytes of a block across the engine's devices) and the
 * seconds to load one (each device loads its share over its own link: the
 * device's host link, else the instance's host2device bandwidth × rate).
 */
function offload(
  gs: ServingConfig,
  kvBytesPerTokenPerDevice: number,
  devices: number,
  link: number,
  common: YamlSource,
): { hostKvBlocks?: number; hostBlockLoadSeconds?: number } {
  const o = gs.kv_offload;
  if (!o) return {};
  if (!gs.enable_prefix_caching) {
    common.fail(
      ["serving_config", "kv_offload"],
      "KV offload moves the prefix cache's evicted blocks: set enable_prefix_caching: true",
    );
  }
  const blockBytes = gs.block_size * kvBytesPerTokenPerDevice;
  const bandwidth = o.bandwidth ?? link;
  return {
    hostKvBlocks: Math.floor((o.host_memory_gb * 1e9) / (blockBytes * devices)),
    hostBlockLoadSeconds: blockBytes / bandwidth,
  };
}
