/**
 * The capacity planner: the cheapest deployment that meets the SLOs at a
 * target load. Each candidate (device type × tensor-parallel size,
 * aggregated) is first checked without simulating it (the model must fit,
 * the layout must divide the model); the survivors get a lower bound on
 * their instance count from the cost model, and then the fewest instances
 * that keep up with the offered load and meet every SLO judged from arrival
 * are found by the scenario runner's `min_value_meeting` search (full event
 * simulation, integer bisection). The answer is ranked by cost (or devices)
 * with its Pareto front of tokens/s per device against tokens/s per user.
 *
 * @module
 */
import { clip, InputError } from "../config/errors.ts";
import { TASK_LIMITS } from "../config/limits.ts";
import { denoFileSystem, loadConfigSources, readYaml } from "../config/load.ts";
import type { FileSystem } from "../config/load.ts";
import { YamlSource } from "../config/source.ts";
import { assemble } from "../assembly/assemble.ts";
import { workloadOf } from "../assembly/workload.ts";
import { resolveLayout } from "../config/layout.ts";
import type { AssembledRun } from "../assembly/assemble.ts";
import { decodeBatch, prefillBatch } from "../hardware/batch.ts";
import { DEVICE_CATALOG } from "../hardware/devices.ts";
import { meanLength } from "../workload/lengths.ts";
import { backlogAtSomeLength } from "../metrics/load.ts";
import { launchSettings } from "../launch/settings.ts";
import { launchFiles } from "../launch/mod.ts";
import type { LaunchTarget } from "../launch/mod.ts";
import type { LaunchSettings } from "../launch/settings.ts";
import {
  boundValue,
  CAPACITY_MAX_REQUESTS,
  CONFIRM_FACTOR,
  loadScenario,
  parseBound,
  resolveMetric,
  runScenario,
  scenarioSources,
} from "../scenario/mod.ts";
import type { ScenarioResult } from "../scenario/mod.ts";
import type { RunOutput } from "../assembly/run.ts";

/** Aggregated serving (every instance prefills and decodes) or prefill/decode disaggregated. */
export type Topology = "agg" | "disagg";

/**
 * How an instance of W devices splits the model: `tp` tensor parallelism
 * throughout (experts split by TP); `tp-ep` TP attention with the experts
 * spread by expert parallelism (ep_size W); `dp-ep` data-parallel attention
 * (W engines of one device each) with expert parallelism over all W, as
 * DeepSeek serves. The EP layouts apply to mixture-of-experts models only.
 */
export type ParallelKind = "tp" | "tp-ep" | "dp-ep";

/**
 * The parallel_config lines of an instance of `devices` devices laid out as
 * `kind`; with `tp` the experts of a mixture-of-experts model are split by TP
 * too (moe_tp_size, whose default of 1 would copy every expert to every
 * device).
 */
function parallelLines(devices: number, kind: ParallelKind, moe: boolean): string[] {
  const lines = ["    parallel_config:"];
  if (kind === "dp-ep") lines.push("      tp_size: 1", `      dp_size: ${devices}`);
  else lines.push(`      tp_size: ${devices}`);
  if (kind !== "tp") lines.push(`      ep_size: ${devices}`, "      moe_tp_size: 1");
  else if (moe && devices > 1) lines.push(`      moe_tp_size: ${devices}`);
  return lines;
}

/** One SLO: a metric key of the scenario language and its bound, e.g. `ttft.p99` and `<= 2`. */
export interface PlanSlo {
  /** Metric key (`ttft.p99`, `tpot.p99`, `e2e.p90`, …). */
  readonly key: string;
  /** Bound expression (`<= 2`). */
  readonly bound: string;
}

/** What to plan for. */
export interface PlanRequest {
  /** The common file (model, workload, serving limits); its `load_gen.request_rate` is replaced by `targetRate`. */
  readonly commonFile: string;
  /** Offered load, requests per second. */
  readonly targetRate: number;
  /** Every SLO a deployment must meet (judged from arrival, on the worst seed). */
  readonly slos: readonly PlanSlo[];
  /** Device types to consider. */
  readonly devices: readonly string[];
  /** Tensor-parallel sizes to consider (devices per instance). */
  readonly tpSizes: readonly number[];
  /** Parallel layouts to consider (default `tp` only; the EP layouts for MoE models). */
  readonly parallel?: readonly ParallelKind[];
  /** Aggregated, and/or disaggregated prefill and decode groups (default aggregated only). */
  readonly topologies?: readonly Topology[];
  /**
   * Settings to try, by key path of the common file (e.g. `serving_config.max_num_seqs: [128, 256]`,
   * `model_config.quantize_linear_action: [DISABLED, W8A8_DYNAMIC]`): every combination is a candidate with
   * each device, TP size and topology. Without it, the common file's values.
   */
  readonly settings?: Readonly<Record<string, readonly (number | string)[]>>;
  /** The most devices a deployment may use. */
  readonly maxDevices: number;
  /** Price of one device-hour by device type; without it, candidates rank by device count. */
  readonly prices?: Readonly<Record<string, number>>;
  /** Seeds each point runs (default 1). */
  readonly seeds?: number;
}

/** A candidate that cannot serve the model, and why (found without simulating it). */
export interface InfeasibleCandidate extends CandidateId {
  /** Discriminant. */
  readonly kind: "infeasible";
  /** Why: the model does not fit, the layout does not divide it, … */
  readonly reason: string;
}

/** A candidate that cannot meet the SLOs at the target rate within `maxDevices`. */
export interface FailingCandidate extends CandidateId {
  /** Discriminant. */
  readonly kind: "fails";
  /** The most instances tried. */
  readonly instances: number;
  /** What they missed. */
  readonly reason: string;
}

/** A candidate's fewest instances meeting the SLOs, and its figures there. */
export interface PlannedCandidate extends CandidateId {
  /** Discriminant. */
  readonly kind: "planned";
  /** Whether the model is a mixture of experts (its `tp` layout then splits the experts by TP too). */
  readonly moe: boolean;
  /** Fewest instances that keep up and meet every SLO (prefill and decode together when disaggregated). */
  readonly instances: number;
  /** Disaggregated: the prefill instances (0 when aggregated). */
  readonly prefill: number;
  /** Disaggregated: the decode instances (0 when aggregated). */
  readonly decode: number;
  /** instances × tp. */
  readonly devices: number;
  /** devices × price, when a price is given. */
  readonly costPerHour?: number;
  /**
   * With prices: what a million output tokens cost at the target rate,
   * `costPerHour` over the millions of output tokens it serves an hour.
   */
  readonly costPerMillionTokens?: number;
  /** Output tokens per second per device at the target rate. */
  readonly tokensPerDevice: number;
  /** Output tokens per second per user (1 / median TPOT). */
  readonly tokensPerUser: number;
  /** p99 TTFT from arrival, s. */
  readonly ttftP99: number;
  /** p99 TPOT, s. */
  readonly tpotP99: number;
  /** Each SLO's metric value at the chosen count. */
  readonly values: Readonly<Record<string, number>>;
  /** The instance count the cost model alone suggests (a lower bound where the search started). */
  readonly lowerBound: number;
  /** Simulated runs the search took (bisection included, × seeds). */
  readonly runs: number;
  /**
   * Requests each run at the chosen counts simulated: the confirmation's
   * ({@link CONFIRM_FACTOR} × the common file's, within
   * {@link CAPACITY_MAX_REQUESTS}), or more where those runs did not decide
   * (4× as many each time).
   */
  readonly requests: number;
  /** On the Pareto front of tokens/s per device against tokens/s per user. */
  readonly pareto: boolean;
  /** What its launch configurations set (core/launch): the settings it was simulated with. */
  readonly launch: LaunchSettings;
}

/** Any candidate's outcome. */
export type CandidateOutcome = InfeasibleCandidate | FailingCandidate | PlannedCandidate;

/** The plan: every candidate's outcome, the planned ones ranked best first. */
export interface PlanResult {
  /** What was planned for. */
  readonly request: PlanRequest;
  /** Planned candidates, cheapest first (then most tokens/s per device). */
  readonly ranked: readonly PlannedCandidate[];
  /** Every candidate in search order. */
  readonly candidates: readonly CandidateOutcome[];
}

/** The instance file of a disaggregated candidate: `prefill` prefill and `decode` decode instances. */
export function disaggYaml(
  device: string,
  tp: number,
  prefill: number,
  decode: number,
  parallel: ParallelKind = "tp",
  moe = false,
): string {
  // The KV cache moves from prefill to decode over each device's scale-out NIC (RDMA), at the share of link
  // bandwidth the device's collectives achieve: the catalog's figures, not upstream's 4 GB/s × 0.5 default.
  const spec = Object.hasOwn(DEVICE_CATALOG, device) ? DEVICE_CATALOG[device] : undefined;
  const link = spec
    ? [
      "    communication_config:",
      `      device2device_bandwidth: ${spec.scaleOutBandwidth}`,
      `      device2device_rate: ${spec.efficiency.link}`,
    ]
    : [];
  const group = (role: "prefill" | "decode", n: number) => [
    ...groupLines(device, tp, n, role, role, parallel, moe),
    ...link,
  ];
  return ["instance_groups:", ...group("prefill", prefill), ...group("decode", decode), ""].join("\n");
}

/** The instance file of a planned candidate. */
export function deploymentYaml(c: PlannedCandidate): string {
  return c.topology === "disagg"
    ? disaggYaml(c.device, c.tp, c.prefill, c.decode, c.parallel, c.moe)
    : instanceYaml(c.device, c.tp, c.instances, c.parallel, c.moe);
}

/** The instance file of an aggregated candidate with `instances` instances. */
export function instanceYaml(
  device: string,
  tp: number,
  instances: number,
  parallel: ParallelKind = "tp",
  moe = false,
): string {
  const name = `${device.toLowerCase()}_${parallel === "tp" ? "tp" : `${parallel}`}${tp}`;
  return ["instance_groups:", ...groupLines(device, tp, instances, "both", name, parallel, moe), ""].join("\n");
}

/** One instance group of an instance file: `n` instances of `tp` devices in a role, and its parallel layout. */
function groupLines(
  device: string,
  tp: number,
  n: number,
  role: "both" | "prefill" | "decode",
  name: string,
  parallel: ParallelKind,
  moe: boolean,
): string[] {
  return [
    `  - num_instances: ${n}`,
    `    num_devices_per_instance: ${tp}`,
    `    device_type: ${device}`,
    `    pd_role: ${role}`,
    `    name: ${name}`,
    ...parallelLines(tp, parallel, moe),
  ];
}

/** The "file" of a {@link PlanRequestError}: the request itself, not a file. */
export const PLAN_REQUEST = "(plan request)";

/**
 * A value of the request the common file cannot take (a target rate whose
 * arrivals would outlast the simulated clock, …): the CLI names the flag it
 * came from, never the planner's in-memory scenario.
 */
export class PlanRequestError extends InputError {
  /** The request's field (`targetRate`, `seeds`, `settings`, `slos`). */
  readonly field: keyof PlanRequest;

  /**
   * @param field the request's field
   * @param detail what is wrong with its value
   */
  constructor(field: keyof PlanRequest, detail: string) {
    super({ file: PLAN_REQUEST, keyPath: field }, detail);
    this.name = "PlanRequestError";
    this.field = field;
  }
}

/**
 * Checks the request against its common file before any search: the file
 * reads and validates (its errors propagate, located in it), and the target
 * rate is one its workload can take (the arrivals of its requests at that
 * rate fit the simulated clock), so that no candidate's run fails on it.
 *
 * @throws {InputError} on a bad common file
 * @throws {PlanRequestError} on a target rate the common file cannot take
 */
export function checkPlanRequest(req: PlanRequest, fs: FileSystem = denoFileSystem): void {
  const common = readYaml(req.commonFile, fs);
  const probe = `${req.commonFile.replace(/[^/]*$/, "")}.plan-request.yaml`;
  const text = [
    ...scenarioHead("plan-request", instanceYaml(req.devices[0], 1, 1), req),
    "overrides:",
    `  ${rateKey(common)}: ${req.targetRate}`,
    'expect: {total_requests: ">= 0"}',
    "",
  ].join("\n");
  try {
    const v = virtualLoad(probe, text, fs);
    const [insts, withRate] = scenarioSources(v.scenario, undefined, [], v.fs);
    const cfg = loadConfigSources(insts, withRate, v.fs);
    const c = cfg.common;
    workloadOf(
      cfg.commonSource,
      c.load_gen,
      c.serving_config.max_concurrency,
      undefined,
      cfg.trace,
      c.limits,
      cfg.model.maxPositions,
    );
  } catch (e) {
    throw requestError(e, probe, rateKey(common)) ?? e;
  }
}

/**
 * An error of a scenario the planner wrote at `virtual`, as the request's
 * field it comes from (the rate, the seeds, a setting, an SLO); undefined
 * for any other error (the user's files': they propagate as they are).
 */
function requestError(e: unknown, virtual: string, rate: string): PlanRequestError | undefined {
  if (!(e instanceof InputError) || e.location.file !== virtual) return undefined;
  const key = e.location.keyPath ?? "";
  const field: keyof PlanRequest = key === rate
    ? "targetRate"
    : key === "seeds"
    ? "seeds"
    : /^(serving_config|model_config)\./.test(key)
    ? "settings"
    : /^(expect|min_value_meeting)\b/.test(key)
    ? "slos"
    : "commonFile";
  return new PlanRequestError(field, key && field !== "targetRate" ? `${key}: ${e.detail}` : e.detail);
}

/** A file system that serves `extra` (path → text) and reads everything else from `base`. */
function overlay(base: FileSystem, extra: Map<string, string>): FileSystem {
  return {
    readText: (p) => extra.get(p) ?? base.readText(p),
    isDirectory: (p) => !extra.has(p) && base.isDirectory(p),
  };
}

/**
 * The candidate's plan with one instance, or why it cannot run, without a
 * simulation: the layout rules first (a pure check, every violation named),
 * then the memory sizing (the model and a KV block must fit). Errors of the
 * user's common file are not a candidate's: they propagate.
 */
function feasibility(
  req: PlanRequest,
  id: CandidateId,
  common: YamlSource,
  fs: FileSystem,
): AssembledRun | string {
  const { device, tp } = id;
  // The model decides the instance file (a MoE model's experts are split by TP): read it first.
  const model = loadConfigSources([new YamlSource("(candidate)", instanceYaml(device, 1, 1))], common, fs).model;
  const moe = model.moe !== undefined;
  const inst = new YamlSource(`(candidate ${device} tp${tp})`, instanceYaml(device, tp, 1, id.parallel, moe));
  const cfg = loadConfigSources([inst], common, fs); // the user's common file: its errors propagate
  if (id.parallel !== "tp" && !cfg.model.moe) {
    return `${id.parallel}: expert parallelism needs a mixture-of-experts model`;
  }
  const mtp = Number(id.settings["model_config.num_mtp_tokens"] ?? 0);
  if (mtp > 0 && cfg.model.mtpLayers === 0) {
    return `MTP speculation (${mtp} draft token${
      mtp > 1 ? "s" : ""
    }) needs a model with MTP layers; ${cfg.model.id} has none (num_nextn_predict_layers)`;
  }
  const layout = resolveLayout(cfg.model, cfg.groups[0].config.parallel_config, tp);
  if (layout.kind === "violations") return layout.violations.map((v) => `${v.key} ${v.message}`).join("; ");
  try {
    if (Object.keys(id.settings).length === 0) return assemble(cfg);
    // With settings, the common file as the candidate's scenario overrides it.
    const text = [
      ...scenarioHead("feasibility", instanceYaml(device, tp, 1, id.parallel, moe), req),
      "overrides:",
      ...settingLines(id.settings),
      // Loaded for its sources, never run; a scenario needs an assertion.
      'expect: {total_requests: ">= 0"}',
      "",
    ].join("\n");
    const v = virtualLoad(virtualScenario(req, id), text, fs);
    const [insts, withSettings] = scenarioSources(v.scenario, undefined, [], v.fs);
    return assemble(loadConfigSources(insts, withSettings, v.fs));
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    // Without the location, and without the key path into the candidate's own instance file (ours, not the user's).
    return e.message.replace(/^[^:]*:(\d+:\d+: )?/, "").replace(/^instance_groups\[\d+\][\w[\].]*: /, "").trim();
  }
}

/** Where a candidate's scenarios live (in memory, beside the common file so that its relative paths resolve). */
function virtualScenario(req: PlanRequest, id: CandidateId): string {
  const settings = Object.values(id.settings).join("-");
  return `${req.commonFile.replace(/[^/]*$/, "")}.plan-${id.device}-${id.parallel}${id.tp}-${id.topology}${
    settings ? `-${settings}` : ""
  }.yaml`;
}

/**
 * The key path of the offered rate in the common file: `load_gen.arrival.request_rate` for a synthetic
 * workload, `load_gen.request_rate` otherwise.
 */
export function rateKey(common: YamlSource): string {
  const lg = (common.data as { load_gen?: { load_gen_type?: unknown } } | null)?.load_gen;
  return lg?.load_gen_type === "synthetic" ? "load_gen.arrival.request_rate" : "load_gen.request_rate";
}

/** The head of a candidate's in-memory scenario: its name, the instance file inline, the user's common file. */
function scenarioHead(name: string, instances: string, req: PlanRequest): string[] {
  return [
    `name: ${name}`,
    "instances:",
    ...instances.trimEnd().split("\n").map((l) => `  ${l}`),
    `common_config: ${JSON.stringify(req.commonFile)}`,
  ];
}

/** The `expect:` block that judges a deployment: every SLO, and keeping up with the offered load. */
export function sloExpectLines(slos: readonly PlanSlo[]): string[] {
  return [
    "expect:",
    ...slos.map((s) => `  ${s.key}: ${JSON.stringify(s.bound)}`),
    ...(slos.some((s) => s.key === "keeps_up") ? [] : [`  keeps_up: "== 1"`]),
  ];
}

/** A scenario given as text at the (in-memory) path `virtual`, and a file system that serves it. */
function virtualLoad(virtual: string, text: string, fs: FileSystem) {
  const scenarioFs = overlay(fs, new Map([[virtual, text]]));
  return { scenario: loadScenario(virtual, scenarioFs), fs: scenarioFs };
}

/**
 * A speculation a search tries (`serving_config.speculative_config`):
 * `none`, or `eagle:K` / `ngram:K`, K draft tokens at the method's published
 * per-position acceptance (core/config/speculation.ts).
 */
export const SPECULATION_PATTERN = /^(none|(eagle|ngram):([1-5]))$/;

/** Scenario override lines of a candidate's settings. */
export function settingLines(settings: Readonly<Record<string, number | string>>): string[] {
  return Object.entries(settings).map(([k, v]) => {
    if (k !== "serving_config.speculative_config") return `  ${k}: ${JSON.stringify(v)}`;
    // `eagle:3` is the mapping {method: eagle, num_speculative_tokens: 3}; `none` is null (no speculation).
    const m = SPECULATION_PATTERN.exec(String(v));
    return m && m[2] ? `  ${k}: {method: ${m[2]}, num_speculative_tokens: ${m[3]}}` : `  ${k}: null`;
  });
}

/** Requests per second one instance can serve at most, by what it does (see {@link rateBounds}). */
export interface RateBounds {
  /** Prefill and decode (aggregated). */
  readonly both: number;
  /** Prefill only (a disaggregated prefill instance). */
  readonly prefill: number;
  /** Decode only (a disaggregated decode instance). */
  readonly decode: number;
}

/**
 * Requests per second one instance can serve at most, from the cost model:
 * each request's prompt in full prefill steps, and its share of full decode
 * batches (max_num_seqs sequences, or as many as the KV cache holds, at the
 * mean context). Upper bounds (no queueing, no preemption), so the target
 * rate over them bounds the instance counts from below.
 *
 * @param plan a candidate's plan (its first group is the one bounded)
 *
 * @example
 * ```ts
 * import { assemble, loadConfig, rateBounds } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 10, num_input_tokens: 1024, num_output_tokens: 256}";
 * const files: Record<string, string> = { "i.yaml": i, "c.yaml": c };
 * const b = rateBounds(assemble(loadConfig(["i.yaml"], "c.yaml", { readText: (p) => files[p], isDirectory: () => false })));
 * assert.ok(b.both < b.prefill && b.both < b.decode); // doing both is slower than either
 * ```
 */
export function rateBounds(plan: AssembledRun): RateBounds {
  const g = plan.groups[0];
  const w = plan.input.workload;
  // The mean lengths, over the request classes by weight when there are several.
  const classes = w.classes ?? [{ weight: 1, input: w.input, output: w.output }];
  const total = classes.reduce((a, c) => a + c.weight, 0);
  const mean = (k: "input" | "output") => classes.reduce((a, c) => a + c.weight * meanLength(c[k]), 0) / total;
  const input = Math.max(1, Math.round(mean("input")));
  const output = Math.max(1, Math.round(mean("output")));
  const budget = g.serving.serving.max_tokens_budget;
  const seqs = Math.max(1, Math.min(g.serving.serving.max_num_seqs, Math.floor(g.memory.kvTokens / (input + output))));
  const prefill = g.cost.stepTime(prefillBatch(Math.min(input, budget))) * Math.ceil(input / budget);
  const decode = Math.max(1, output - 1) * g.cost.stepTime(decodeBatch(seqs, input + output / 2)) / seqs;
  return { both: g.dp / (prefill + decode), prefill: g.dp / prefill, decode: g.dp / decode };
}

/** The scenario text that finds the fewest instances over `grid`. */
function searchScenario(req: PlanRequest, id: CandidateId, grid: readonly number[], ctx: SearchContext): string {
  const seeds = req.seeds ?? 1;
  return [
    ...scenarioHead(
      `plan-${id.device.toLowerCase()}-tp${id.tp}`,
      instanceYaml(id.device, id.tp, grid[0], id.parallel, ctx.moe),
      req,
    ),
    "overrides:",
    `  ${ctx.rate}: ${req.targetRate}`,
    ...settingLines(id.settings),
    ...(seeds > 1 ? [`seeds: ${seeds}`] : []),
    "sweep:",
    `  instance_groups[0].num_instances: [${grid.join(", ")}]`,
    "min_value_meeting:",
    ...req.slos.map((s) => `  ${s.key}: ${JSON.stringify(s.bound)}`),
    "",
  ].join("\n");
}

/** A run's figure for an SLO key, read the way the scenario judged it (worst seed). */
function figures(outs: readonly RunOutput[]) {
  const worst = (f: (o: RunOutput) => number) => Math.max(...outs.map(f));
  const s = (o: RunOutput) => o.summary;
  return {
    ttftP99: worst((o) => s(o).extMetric["TTFT_FROM_ARRIVAL(s)"].P99),
    tpotP99: worst((o) => s(o).perMetric["TPOT(s)"].P99),
    tpotMedian: Math.max(...outs.map((o) => s(o).perMetric["TPOT(s)"].MEDIAN)),
    tokens: Math.min(...outs.map((o) => s(o).overall["output_token_throughput(tok/s)"])),
  };
}

/**
 * Plans the cheapest deployments that meet `req.slos` at `req.targetRate`.
 *
 * @param req what to plan for
 * @param fs where the common file (and anything it names) is read from
 * @throws {InputError} on a bad common file
 *
 * @example Plan Llama-3.1-8B on H100 at 5 req/s
 * ```ts
 * import { planDeployments } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const common = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 100, num_input_tokens: 512, num_output_tokens: 64," +
 *   " request_rate: 1.0}\n";
 * const fs = { readText: (p: string) => (p === "/c.yaml" ? common : ""), isDirectory: () => false };
 * const plan = planDeployments({
 *   commonFile: "/c.yaml",
 *   targetRate: 5,
 *   slos: [{ key: "ttft.p99", bound: "<= 1" }],
 *   devices: ["H100_SXM_80G"],
 *   tpSizes: [1],
 *   maxDevices: 8,
 * }, fs);
 * assert.equal(plan.ranked[0].device, "H100_SXM_80G");
 * assert.ok(plan.ranked[0].instances >= 1);
 * ```
 */
export function planDeployments(req: PlanRequest, fs: FileSystem = denoFileSystem): PlanResult {
  return assemblePlan(req, planShard(req, { index: 0, count: 1 }, fs).outcomes);
}

/** A share of a search: the `index`-th (0-based) of `count`, candidates dealt round-robin in search order. */
export interface PlanShard {
  /** This share, 0 ≤ index < count (Kubernetes' JOB_COMPLETION_INDEX, a CI matrix entry). */
  readonly index: number;
  /** How many shares the search is split into. */
  readonly count: number;
}

/** One shard's work: its candidates' outcomes, each with its position in the search order. */
export interface ShardOutcome {
  /** The request, the same in every shard of one search. */
  readonly request: PlanRequest;
  /** Which share. */
  readonly shard: PlanShard;
  /** [position in the search order, outcome], in search order. */
  readonly outcomes: readonly (readonly [number, CandidateOutcome])[];
}

/** The candidates of a request in search order: every device type, every TP size, every topology. */
export function candidateList(req: PlanRequest): CandidateId[] {
  const topologies = req.topologies ?? ["agg"];
  const grid = Object.entries(req.settings ?? {}).reduce<Record<string, number | string>[]>(
    (acc, [key, values]) => acc.flatMap((s) => values.map((v) => ({ ...s, [key]: v }))),
    [{}],
  );
  const kinds = req.parallel ?? ["tp"];
  return req.devices.flatMap((device) =>
    req.tpSizes.flatMap((tp) =>
      // On one device every layout is the same: only tp.
      kinds.filter((k) => tp > 1 || k === "tp").flatMap((parallel) =>
        topologies.flatMap((topology) => grid.map((settings) => ({ device, tp, parallel, topology, settings })))
      )
    )
  );
}

/**
 * Plans the candidates of one shard. Each candidate's outcome depends on the
 * request alone, so shards run anywhere (CI matrix jobs, a Kubernetes
 * Indexed Job) and {@link assemblePlan} over all of them equals the
 * unsharded plan.
 *
 * @param req what to plan for
 * @param shard which share of the candidates
 * @param fs where the common file is read from
 * @param onProgress called after each candidate with how many of the shard's are done
 */
export function planShard(
  req: PlanRequest,
  shard: PlanShard,
  fs: FileSystem = denoFileSystem,
  onProgress?: (done: number, total: number) => void,
): ShardOutcome {
  const common = readYaml(req.commonFile, fs);
  const mine = candidateList(req).map((c, position) => ({ ...c, position }))
    .filter((c) => c.position % shard.count === shard.index);
  const outcomes = mine.map(({ position, ...candidate }, i) => {
    const outcome = planCandidate(req, candidate, common, fs);
    onProgress?.(i + 1, mine.length);
    return [position, outcome] as const;
  });
  return { request: req, shard, outcomes };
}

/**
 * The plan from candidates' outcomes (of one search, any shards together):
 * the Pareto front of tokens/s per device against tokens/s per user over the
 * planned ones, and the ranking, cheapest first.
 *
 * @param req what was planned for
 * @param outcomes [position in the search order, outcome] of every candidate
 */
export function assemblePlan(
  req: PlanRequest,
  outcomes: readonly (readonly [number, CandidateOutcome])[],
): PlanResult {
  const ordered = [...outcomes].sort((a, b) => a[0] - b[0]).map(([, o]) => o);
  const planned = ordered.filter((o): o is PlannedCandidate => o.kind === "planned");
  const front = planned.filter((c) =>
    !planned.some((d) =>
      d !== c && d.tokensPerDevice >= c.tokensPerDevice && d.tokensPerUser >= c.tokensPerUser &&
      (d.tokensPerDevice > c.tokensPerDevice || d.tokensPerUser > c.tokensPerUser)
    )
  );
  const marked = ordered.map((o) => (o.kind === "planned" ? { ...o, pareto: front.includes(o) } : o));
  const ranked = marked.filter((o): o is PlannedCandidate => o.kind === "planned").sort((a, b) =>
    (a.costPerMillionTokens ?? a.devices) - (b.costPerMillionTokens ?? b.devices) ||
    b.tokensPerDevice - a.tokensPerDevice ||
    a.device.localeCompare(b.device) || a.tp - b.tp || a.parallel.localeCompare(b.parallel) ||
    a.topology.localeCompare(b.topology) ||
    JSON.stringify(a.settings).localeCompare(JSON.stringify(b.settings))
  );
  return { request: req, ranked, candidates: marked };
}

/**
 * Plans one candidate of `req` (as {@link candidateList} gives it): what a
 * worker of {@link planInWorkers} does for each of its candidates.
 */
export function planCandidateAt(req: PlanRequest, id: CandidateId, fs: FileSystem = denoFileSystem): CandidateOutcome {
  return planCandidate(req, id, readYaml(req.commonFile, fs), fs);
}

/** One candidate: feasibility, the cost-model bound, then the simulated search. */
function planCandidate(req: PlanRequest, id: CandidateId, common: YamlSource, fs: FileSystem): CandidateOutcome {
  const o = searchCandidate(req, id, common, fs);
  // A reason is one printed line: control characters escaped, at most REASON_CHARS (what a merge reads back).
  if (o.kind === "planned") return o;
  const reason = clip(o.reason, Number.MAX_SAFE_INTEGER);
  return { ...o, reason: reason.length <= REASON_CHARS ? reason : `${reason.slice(0, REASON_CHARS - 1)}…` };
}

/** The most characters of a candidate's reason (half the message limit: room for the line around it). */
const REASON_CHARS = TASK_LIMITS.messageChars / 2;

/** {@link planCandidate}'s search. */
function searchCandidate(req: PlanRequest, id: CandidateId, common: YamlSource, fs: FileSystem): CandidateOutcome {
  const { tp, topology } = id;
  const plan = feasibility(req, id, common, fs);
  if (typeof plan === "string") return { kind: "infeasible", ...id, reason: plan };
  // Within max_devices, and within the common file's limits.max_instances (a search never runs what a file could not).
  const maxInstances = Math.min(Math.floor(req.maxDevices / tp), plan.config.common.limits.max_instances);
  const least = topology === "disagg" ? 2 : 1;
  if (maxInstances < least) {
    return {
      kind: "infeasible",
      ...id,
      reason: `${least} instance${least > 1 ? "s" : ""} of ${tp} device${
        tp > 1 ? "s" : ""
      } exceed max_devices ${req.maxDevices}`,
    };
  }
  const bounds = rateBounds(plan);
  const ctx: SearchContext = { rate: rateKey(common), moe: plan.model.moe !== undefined };
  const virtual = virtualScenario(req, id);
  const run = (text: string) => {
    try {
      const v = virtualLoad(virtual, text, fs);
      return runScenario(v.scenario, v.fs);
    } catch (e) {
      // A problem of the planner's own scenario is one of the request's values: named as that, not as the scenario.
      throw requestError(e, virtual, ctx.rate) ?? e;
    }
  };
  return topology === "agg"
    ? searchAggregated(req, id, ctx, bounds, maxInstances, run)
    : searchDisaggregated(req, id, ctx, bounds, maxInstances, run);
}

/** A candidate: device type, TP size, topology and settings. */
export interface CandidateId {
  /** Device type. */
  readonly device: string;
  /** Tensor-parallel size (devices per instance). */
  readonly tp: number;
  /** How an instance's devices split the model. */
  readonly parallel: ParallelKind;
  /** Aggregated or disaggregated. */
  readonly topology: Topology;
  /** Common-file settings by key path (see {@link PlanRequest.settings}). */
  readonly settings: Readonly<Record<string, number | string>>;
}
type Runner = (scenarioText: string) => ScenarioResult;

/** What a candidate's scenarios need beyond the request: the rate's key path, and whether the model is MoE. */
interface SearchContext {
  readonly rate: string;
  readonly moe: boolean;
}

/** A planned candidate's figures from its runs at the chosen counts. */
function planned(
  req: PlanRequest,
  id: CandidateId,
  ctx: SearchContext,
  counts: { prefill: number; decode: number; instances: number },
  outs: readonly RunOutput[],
  lowerBound: number,
  runs: number,
): PlannedCandidate {
  const f = figures(outs);
  const devices = counts.instances * id.tp;
  const price = req.prices?.[id.device];
  return {
    kind: "planned",
    ...id,
    moe: ctx.moe,
    ...counts,
    devices,
    ...(price !== undefined
      ? {
        costPerHour: devices * price,
        costPerMillionTokens: costPerMillionTokens(devices * price, (f.tokens / devices) * devices),
      }
      : {}),
    tokensPerDevice: f.tokens / devices,
    tokensPerUser: f.tpotMedian > 0 ? 1 / f.tpotMedian : 0,
    ttftP99: f.ttftP99,
    tpotP99: f.tpotP99,
    values: Object.fromEntries(req.slos.map((s) => [s.key, sloValue(s, outs)])),
    lowerBound,
    runs,
    requests: outs[0].assembled.input.workload.numRequests,
    pareto: false,
    launch: launchSettings(outs[0].assembled),
  };
}

/**
 * Aggregated: the cost-model bound and counts around it, min_value_meeting
 * over the instance count (the grid grows while every point fails, and
 * restarts from one instance when even the smallest count passes).
 */
function searchAggregated(
  req: PlanRequest,
  id: CandidateId,
  ctx: SearchContext,
  bounds: RateBounds,
  maxInstances: number,
  run: Runner,
): CandidateOutcome {
  const { tp } = id;
  const lowerBound = Math.max(1, Math.ceil(req.targetRate / bounds.both));
  if (lowerBound > maxInstances) {
    return {
      kind: "fails",
      ...id,
      instances: maxInstances,
      reason: `the cost model alone needs ≥ ${lowerBound} instances (${
        lowerBound * tp
      } devices) for ${req.targetRate} req/s`,
    };
  }
  let runs = 0;
  let low = lowerBound;
  for (;;) {
    const high = Math.min(maxInstances, Math.max(low + 1, Math.ceil(low * 1.5)));
    const grid = [...new Set(low > 1 ? [low - 1, low, high] : [low, high])].filter((n) => n <= maxInstances);
    const r = run(searchScenario(req, id, grid, ctx));
    runs += r.points.reduce((n, p) => n + p.outputs.length, 0);
    const c = r.capacity;
    if (c && c.value === grid[0] && grid[0] > 1) {
      // Even the smallest count tried passes: the cost-model bound was not one; search from a single instance.
      low = 1;
      continue;
    }
    if (c && !Number.isNaN(c.value)) {
      // The answer's last run: its confirmation with more requests, when it had one.
      const at = r.points.findLast((p) => p.values[0] === c.value);
      if (!at) throw new Error(`planner: no run at the answer ${c.value}`);
      return planned(req, id, ctx, { instances: c.value, prefill: 0, decode: 0 }, at.outputs, lowerBound, runs);
    }
    if (high >= maxInstances) {
      return {
        kind: "fails",
        ...id,
        instances: maxInstances,
        reason: c?.failingWhy || "no instance count within max_devices meets the SLOs",
      };
    }
    low = high + 1;
  }
}

/**
 * Disaggregated: prefill and decode counts from the cost model's bounds of
 * each side, then, while the run fails, one more instance on the side its
 * failures point to (TTFT: prefill; TPOT or inter-token gaps: decode;
 * anything else, keeping up included: both); then one fewer on each side
 * while that still passes. The answer passes and neither side can lose an
 * instance.
 */
function searchDisaggregated(
  req: PlanRequest,
  id: CandidateId,
  ctx: SearchContext,
  bounds: RateBounds,
  maxInstances: number,
  run: Runner,
): CandidateOutcome {
  let prefill = Math.max(1, Math.ceil(req.targetRate / bounds.prefill));
  let decode = Math.max(1, Math.ceil(req.targetRate / bounds.decode));
  const lowerBound = prefill + decode;
  if (lowerBound > maxInstances) {
    return {
      kind: "fails",
      ...id,
      instances: maxInstances,
      reason: `the cost model alone needs ≥ ${prefill} prefill + ${decode} decode instances (${
        lowerBound * id.tp
      } devices) for ${req.targetRate} req/s`,
    };
  }
  let runs = 0;
  const memo = new Map<string, ScenarioResult>();
  const once = (p: number, d: number, n?: number) => {
    const key = `${p}+${d}@${n ?? ""}`;
    let r = memo.get(key);
    if (!r) {
      r = run(disaggScenario(req, id, ctx, p, d, n));
      runs += r.seeds.length;
      memo.set(key, r);
    }
    return r;
  };
  // The file's request count, then more where the runs do not decide (as a capacity search does): a failing split
  // whose failures are all undecided percentiles, or whose runs are too short to tell whether they keep up, runs
  // again with 4× the requests, within CAPACITY_MAX_REQUESTS.
  const at = (p: number, d: number) => {
    let r = once(p, d);
    const file = requestsOf(r);
    for (let n = file * 4; !r.pass && !decided(r) && n <= CAPACITY_MAX_REQUESTS; n *= 4) r = once(p, d, n);
    return r;
  };
  // A split that passes is confirmed with CONFIRM_FACTOR × the file's requests before it is the answer: it passes,
  // and keeps up at every length of run up to that (as a capacity search confirms its answer).
  const confirm = (p: number, d: number) => {
    const file = requestsOf(once(p, d));
    let long = at(p, d);
    if (requestsOf(long) < file * CONFIRM_FACTOR) {
      long = once(p, d, Math.min(CAPACITY_MAX_REQUESTS, file * CONFIRM_FACTOR));
    }
    for (let n = requestsOf(long) * 4; !long.pass && !decided(long) && n <= CAPACITY_MAX_REQUESTS; n *= 4) {
      long = once(p, d, n);
    }
    const steady = [...long.seedRuns.values()].flat().every((o) => !backlogAtSomeLength(o.result.requests));
    return { long, steady };
  };
  // Splits whose long run failed: the search goes on above them.
  const refuted: [number, number][] = [];
  for (let tries = 0;; tries++) {
    let r = at(prefill, decode);
    while (!r.pass) {
      const failing = r.checks.filter((c) => !c.pass).map((c) => c.name);
      const prefillSide = failing.some((n) => n.startsWith("ttft"));
      const decodeSide = failing.some((n) => n.startsWith("tpot") || n.startsWith("itl"));
      const both = !prefillSide && !decodeSide || failing.some((n) => !/^(ttft|tpot|itl)/.test(n));
      // One more on the failing side, or a tenth more when the side is large (then trimmed below).
      const p = prefill + (prefillSide || both ? step(prefill) : 0);
      const d = decode + (decodeSide || both ? step(decode) : 0);
      if (p + d > maxInstances) {
        return {
          kind: "fails",
          ...id,
          instances: prefill + decode,
          reason: firstFailure(r) ?? "no prefill:decode split within max_devices meets the SLOs",
        };
      }
      [prefill, decode] = [p, d];
      r = at(prefill, decode);
    }
    // Trimmed, but never to a split a long run refuted (nor one with no more instances on either side).
    const passes = (p: number, d: number) => !refuted.some(([x, y]) => p <= x && d <= y) && at(p, d).pass;
    while (prefill > 1 && passes(prefill - 1, decode)) prefill--;
    while (decode > 1 && passes(prefill, decode - 1)) decode--;
    const { long, steady } = confirm(prefill, decode);
    if (!(long.pass && steady) && tries + 1 >= CONFIRM_TRIES) {
      return {
        kind: "fails",
        ...id,
        instances: prefill + decode,
        reason: `${prefill}P+${decode}D passes ${
          requestsOf(at(prefill, decode)).toLocaleString("en-US")
        } requests a run but not ${requestsOf(long).toLocaleString("en-US")}, after ${CONFIRM_TRIES} tries: ${
          firstFailure(long) ?? "a prefix of its runs falls behind"
        }`,
      };
    }
    if (long.pass && steady) {
      return planned(
        req,
        id,
        ctx,
        { instances: prefill + decode, prefill, decode },
        [...long.seedRuns.values()][0],
        lowerBound,
        runs,
      );
    }
    // Not confirmed: the long run's failures point to the side that gets one more (both when only a prefix of its runs
    // falls behind), and the search goes on from there.
    const failing = long.checks.filter((c) => !c.pass).map((c) => c.name);
    const decodeSide = failing.some((n) => n.startsWith("tpot") || n.startsWith("itl")) || failing.length === 0;
    const prefillSide = failing.some((n) => n.startsWith("ttft")) || !failing.some((n) => /^(tpot|itl)/.test(n));
    refuted.push([prefill, decode]);
    if (prefillSide) prefill += step(prefill);
    if (decodeSide) decode += step(decode);
    if (prefill + decode > maxInstances) {
      return {
        kind: "fails",
        ...id,
        instances: maxInstances,
        reason: firstFailure(long) ?? "no prefill:decode split within max_devices meets the SLOs over a long run",
      };
    }
  }
}

/** A side's growth in a disaggregated search: one more instance, or a tenth more when the side is large. */
const step = (n: number) => Math.max(1, Math.floor(n / 10));

/** A scenario's first failing check, without its location (the planner's own scenario, not the user's file). */
const firstFailure = (r: ScenarioResult) => r.checks.find((c) => !c.pass)?.message.replace(/^[^:]*:\d+:\d+: /, "");

/** The most splits a disaggregated search tries to confirm with a long run before it gives the candidate up. */
const CONFIRM_TRIES = 6;

/** Requests each run of a scenario's base run simulated. */
const requestsOf = (r: ScenarioResult) => [...r.seedRuns.values()][0][0].assembled.input.workload.numRequests;

/** Whether a scenario's failures are decided: none is an undecided percentile, and every run decides keeping up. */
const decided = (r: ScenarioResult) =>
  !r.checks.some((c) => !c.pass && c.undecided) &&
  [...r.seedRuns.values()].every((outs) => outs.every((o) => o.summary.load.decided));

/** The scenario text of a disaggregated candidate: the SLOs and keeping up, as assertions. */
function disaggScenario(
  req: PlanRequest,
  id: CandidateId,
  ctx: SearchContext,
  prefill: number,
  decode: number,
  requests?: number,
): string {
  const seeds = req.seeds ?? 1;
  return [
    ...scenarioHead(
      `plan-${id.device.toLowerCase()}-tp${id.tp}-disagg`,
      disaggYaml(id.device, id.tp, prefill, decode, id.parallel, ctx.moe),
      req,
    ),
    "overrides:",
    `  ${ctx.rate}: ${req.targetRate}`,
    // Disaggregation pays for moving the KV cache: transfers are timed, not free (the upstream default).
    "  model_config.enable_kv_transfer_modeling: true",
    ...(requests ? [`  load_gen.num_requests: ${requests}`] : []),
    ...settingLines(id.settings),
    ...(seeds > 1 ? [`seeds: ${seeds}`] : []),
    ...sloExpectLines(req.slos),
    "",
  ].join("\n");
}

/**
 * The worst seed's value of an SLO's metric at a point (for the margin to
 * the bound): the simulated value, or with a confidence (`<= 2 @ 90%`) the
 * end of its prediction interval that the bound faces.
 */
function sloValue(slo: PlanSlo, outs: readonly RunOutput[]): number {
  const m = resolveMetric(slo.key);
  const bound = parseBound(slo.bound);
  if (!m || typeof bound === "string") return NaN;
  const values = outs.map((o) => boundValue(m, bound, o));
  return m.better === "higher" ? Math.min(...values) : Math.max(...values);
}

/**
 * What a million output tokens cost on a deployment: its price an hour over
 * the millions of output tokens it produces an hour; undefined when it
 * produces none.
 *
 * @param costPerHour the deployment's price per hour
 * @param tokensPerSecond its output tokens per second
 */
export function costPerMillionTokens(costPerHour: number, tokensPerSecond: number): number | undefined {
  return tokensPerSecond > 0 ? costPerHour / (tokensPerSecond * 3600 / 1e6) : undefined;
}

/** A Kubernetes-safe name: lower case letters, digits and dashes, at most 40 characters. */
const k8sName = (s: string) => s.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 40);

/**
 * The launch configurations of a plan (core/launch): for its winner and
 * every Pareto point, a folder `launch/<rank>-<candidate>/` with a script
 * per server and a Kubernetes manifest for vLLM, SGLang and TensorRT-LLM,
 * and `launch/README.md` listing them.
 */
export function planLaunchFiles(r: PlanResult): Record<string, string> {
  const files: Record<string, string> = {};
  const chosen = r.ranked.map((c, i) => [c, i + 1] as const).filter(([c, i]) => i === 1 || c.pareto);
  const index = [
    "# Launch configurations",
    "",
    "Written by `deno task plan` for the winner and each point of the Pareto front (rank in the plan's table):",
    "",
  ];
  for (const [c, rank] of chosen) {
    const engine = c.settings["serving_config.engine"];
    // Its objects' names (the engine and role follow), and its folder's (with the engine it was simulated with).
    const name = k8sName(
      `${c.device.replace(/_.*$/, "")}-${c.parallel}${c.tp}${c.topology === "disagg" ? "-disagg" : ""}`,
    );
    const slug = `${name}${engine ? `-${engine}` : ""}`;
    const folder = `launch/${rank}-${slug}`;
    const what = `${instancesText(c)} × ${c.device} (${c.parallel} ${c.tp})`;
    const target: LaunchTarget = {
      name,
      description: what,
      device: c.device,
      topology: c.topology,
      instances: c.topology === "disagg" ? 0 : c.instances,
      prefill: c.prefill,
      decode: c.decode,
      devicesPerInstance: c.tp,
      settings: c.launch,
    };
    for (const [name, text] of Object.entries(launchFiles(target))) files[`${folder}/${name}`] = text;
    index.push(
      `- \`${rank}-${slug}/\`: ${what}${rank === 1 ? ", the winner" : ""}${c.pareto ? " (Pareto front)" : ""}`,
    );
  }
  files["launch/README.md"] = index.join("\n") + "\n";
  return files;
}

/** Instances as a sentence says them: "5 prefill + 2 decode", or the count. */
function instancesText(c: PlannedCandidate): string {
  return c.topology === "disagg" ? `${c.prefill} prefill + ${c.decode} decode` : String(c.instances);
}
