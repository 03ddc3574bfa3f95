/**
 * Engine profiles: the serving defaults of the engine a deployment runs
 * (`serving_config.engine`, ext), by version range. A profile fills in only
 * what the user's file leaves out; an explicit key always wins. With no
 * `engine` key nothing changes: the upstream defaults apply, as before.
 *
 * Each record says where its values come from (the engine's own defaults in
 * its source code or sample configuration, for the versions named). The
 * records cover scheduling and batching defaults, whose measured kernel
 * tables time the engine's kernels (`kernels`), and the host costs of a
 * version where a public calibration set pins them (`host`).
 *
 * @module
 */
import type { ServingConfig } from "./types.ts";
import type { KernelTableEngine } from "../hardware/mod.ts";

/** Engines with a profile. */
export const ENGINES = ["vllm", "sglang", "trtllm", "mindie", "lmdeploy"] as const;

/** An engine name. */
export type EngineName = (typeof ENGINES)[number];

/** Execution backends of an engine that has more than one (TensorRT-LLM). */
export const ENGINE_BACKENDS = ["tensorrt", "pytorch"] as const;

/** An execution backend. */
export type EngineBackend = (typeof ENGINE_BACKENDS)[number];

/** The `serving_config` keys a profile may supply. */
export type ProfileKey =
  | "max_tokens_budget"
  | "max_num_seqs"
  | "enable_chunked_prefill"
  | "mix_prefill_decode"
  | "enable_prefix_caching"
  | "admission_policy"
  | "kv_cache_memory_fraction";

/** Values a profile supplies. */
export type ProfileDefaults = Partial<Pick<ServingConfig, ProfileKey>>;

/** What a profile's defaults may depend on: the device and the engine's tensor-parallel size. */
export interface ProfileContext {
  /** Device name (catalog name or the device file's). */
  readonly deviceName: string;
  /** Device memory, bytes. */
  readonly memoryBytes: number;
  /** Tensor-parallel size of one engine. */
  readonly tp: number;
}

/** One version range of an engine. */
export interface ProfileRecord {
  /** The engine. */
  readonly engine: EngineName;
  /** First version the record covers; it holds until the next record's. */
  readonly since: string;
  /** What the record stands for, for reports. */
  readonly label: string;
  /** Where the values come from. */
  readonly source: string;
  /** The defaults for a device and TP size. */
  readonly defaults: (c: ProfileContext) => ProfileDefaults;
  /**
   * Whose measured kernel tables (core/hardware/data/aiconfigurator) time
   * this engine's GEMMs, attention and all-reduce on the GPUs they cover;
   * none: the roofline with the device's constant efficiencies.
   */
  readonly kernels?: KernelTableEngine;
  /**
   * The engine's host costs, where public runs of this version pin them:
   * they replace a catalog device's step and per-sequence costs (a device
   * file's own values, such as `deno task calibrate` writes, are kept).
   */
  readonly host?: HostCosts | ((c: ProfileContext) => HostCosts | undefined);
  /** The execution backend the record describes, for an engine with several; absent: the default one. */
  readonly backend?: EngineBackend;
  /** Decode batch sizes captured as CUDA graphs (ascending), when the engine captures them by default. */
  readonly graphSizes?: readonly number[];
}

/** Host costs of an engine version, and the runs they were fitted to. */
export interface HostCosts {
  /** Fixed cost of one engine step, µs. */
  readonly stepUs: number;
  /** Cost per sequence in a step, µs. */
  readonly seqUs: number;
  /** Latency per request before the engine sees it (API server, tokenization), µs; 0 when absent. */
  readonly requestUs?: number;
  /** The calibration runs (never validation cases) and how the values were fitted. */
  readonly source: string;
}

/**
 * vLLM V1 (0.8 and later) on 8 × MI300X: fitted by `deno task calibrate`
 * (step and per-sequence cost; the device's HBM efficiency fitted beside
 * them stayed at the catalog's 0.80) to AMD's benchmark_latency sweep of
 * Llama-3.1-70B FP8 at TP8, 128 in / 2,048 out, batch 1–128 (ROCM-L01..L08
 * of docs/validation-candidates.md; core/hardware/data/calibration/
 * mi300x-vllm-0.10). Median error 35% → 1.7% (4-fold cross-validated
 * 2.4%). A lumped figure: host work (scheduling, input preparation,
 * sampling, output processing) and whatever per-step and per-sequence GPU
 * cost the kernel model leaves out on that stack. Those rows are a
 * calibration set and never a validation case.
 */
const VLLM_V1_HOST: HostCosts = {
  stepUs: 1970,
  seqUs: 75,
  source:
    "fitted to ROCM-L01..L08 (vLLM 0.10.0, Llama-3.1-70B FP8, 8×MI300X TP8, 128/2048, batch 1-128; calibration set core/hardware/data/calibration/mi300x-vllm-0.10)",
};

/**
 * vLLM V0 (0.6–0.7): fitted to dstack's benchmark_throughput runs of
 * Llama-3.1-405B FP8 on 8 × H100 at TP8, 128 in / 2,048 out, batch 4–32
 * (D405-01..D405-04; core/hardware/data/calibration/h100-vllm-0.6.3), with
 * vLLM's measured kernel tables: a step costs 8.1–8.9 ms more than the
 * kernels at every batch (least squares: 8.3 ms, no per-sequence slope).
 * V0 schedules, prepares inputs and broadcasts them to the TP workers on
 * the critical path of every step (vLLM's v0.6.0 performance post measured
 * the GPU idle for most of each step before its fixes). Batch 64 (D405-05)
 * runs 26 ms slower per step for reasons the data does not show and is
 * left out of the fit.
 */
const VLLM_V0_HOST: HostCosts = {
  stepUs: 8300,
  seqUs: 0,
  source:
    "fitted to D405-01..D405-04 (vLLM 0.6.3, Llama-3.1-405B FP8, 8×H100 TP8, 128/2048, batch 4-32; calibration set core/hardware/data/calibration/h100-vllm-0.6.3)",
};

const GiB = 2 ** 30;

/**
 * SGLang 0.4 (0.4.0–0.4.6): fitted by `deno task calibrate --scenarios`
 * (step, per-sequence and per-request cost, with vLLM's kernel tables
 * standing for SGLang's) to DataCrunch's runs of Llama-3.3-70B BF16 on
 * 4 × H200 at TP4 with a Dec 2024 build: offline throughput of three
 * length mixes, ITL, TTFT and E2E at 2 req/s, ITL and TTFT at 8 req/s
 * (DC-05, 06, 07, 23, 24, 26, 28, 29; core/hardware/data/calibration/
 * h200-sglang-0.4). Step and per-sequence cost alone: median error 18.9% →
 * 5.6% (3-fold cross-validated 9.3%) on the six figures without TTFT. The
 * per-request latency is what TTFT shows beyond the steps: 87 ms measured
 * at 2 req/s where the prefill and the wait for a running step take about
 * 35 ms; fitted 51 ms (TTFT −45% and −65% → +12% and −3%; each TTFT row
 * predicted from the other within 18%). Lumped figures: the scheduler's
 * work per step and per running request, and per request whatever lies
 * between the client's send and the engine (API server, tokenization,
 * inter-process hand-off, streaming). Those rows are a calibration set and
 * never a validation case.
 */
const SGLANG_04_HOST: HostCosts = {
  stepUs: 1158,
  seqUs: 46,
  requestUs: 51_000,
  source:
    "fitted to DC-05/06/07/23/24/26/28/29 (SGLang ~0.4.0, Llama-3.3-70B BF16, 4xH200 TP4; calibration set core/hardware/data/calibration/h200-sglang-0.4)",
};

/**
 * TensorRT-LLM's PyTorch backend in its first releases (0.17–0.20), without
 * CUDA graphs (off unless configured): a step costs about 40 ms more than
 * its kernels for DeepSeek-R1 on 8 × H200, at every batch size — the time
 * to launch each step's kernels from Python one by one (61 layers of some
 * 30 kernels at ~20 µs each), which the GPU waits for. Fitted to dstack's
 * runs at concurrency 8, 16 and 32 (DSR1-076..084; core/hardware/data/
 * calibration/h200-trtllm-pytorch-0.17): TPOT and throughput within 7% at
 * 38–42 ms per step, no per-sequence slope; least squares 40 ms. Their TTFT
 * stays 66–82% low: prefill in that build is slower than its kernels
 * explain, and is not in this figure; the value comes from a scan of the
 * step cost on TPOT and throughput (`deno task calibrate` on the whole set
 * is pulled away by its TTFT rows). A lumped figure for graph-less launches: it grows
 * with the kernels a step launches, which this constant does not.
 */
const TRTLLM_PYTORCH_017_HOST: HostCosts = {
  stepUs: 40_000,
  seqUs: 0,
  source:
    "fitted to DSR1-076..084 (TensorRT-LLM 0.17 PyTorch backend, DeepSeek-R1 FP8, 8xH200 TP8 EP4, concurrency 8-32; calibration set core/hardware/data/calibration/h200-trtllm-pytorch-0.17)",
};

/**
 * DeepSeek-R1 on the ROCm builds of early 2025 (vLLM 0.7.3 and SGLang 0.4.2
 * staging images on 8 × MI300X): decode runs 2–3× slower than the kernel
 * model, with a large fixed part and a steeper slope per sequence — early
 * ROCm MoE and MLA kernels and launches. Fitted by `deno task calibrate
 * --scenarios` (step and per-sequence cost, TPOT and throughput) to
 * dstack's runs at concurrency 8, 16 and 32 (DSR1-004..012 and
 * DSR1-022..030; core/hardware/data/calibration/mi300x-{vllm,sglang}-
 * deepseek-r1): vLLM 40.0 ms per step + 65 µs per sequence (median error
 * 88% → 5.4%, 3-fold cross-validated 4.6%), SGLang 24.3 ms + 499 µs
 * (107% → 5.7%, 4.7%). Lumped figures from one model: they stand for these
 * builds on MI300X until runs of other models pin them down.
 */
const VLLM_V0_ROCM_HOST: HostCosts = {
  stepUs: 40_030,
  seqUs: 65,
  source:
    "fitted to DSR1-004..012 (vLLM 0.7.3 ROCm staging, DeepSeek-R1 FP8, 8xMI300X TP8, concurrency 8-32; calibration set core/hardware/data/calibration/mi300x-vllm-deepseek-r1)",
};
const SGLANG_04_ROCM_HOST: HostCosts = {
  stepUs: 24_270,
  seqUs: 499,
  requestUs: 51_000,
  source:
    "fitted to DSR1-022..030 (SGLang 0.4.2 ROCm staging, DeepSeek-R1 FP8, 8xMI300X TP8, concurrency 8-32; calibration set core/hardware/data/calibration/mi300x-sglang-deepseek-r1); per-request latency as on NVIDIA",
};

/** TensorRT-LLM's executor defaults, the same under the TensorRT engine flow and the PyTorch backend. */
const TRTLLM_EXECUTOR_DEFAULTS: ProfileDefaults = {
  max_tokens_budget: 8192,
  max_num_seqs: 2048,
  enable_chunked_prefill: false,
  mix_prefill_decode: true,
  enable_prefix_caching: false,
  admission_policy: "guaranteed_no_evict",
};

/** 1, 2, 4, then multiples of 8 up to `max`. */
const byEights = (max: number): number[] => [1, 2, 4, ...Array.from({ length: max / 8 }, (_, i) => 8 * (i + 1))];

/** vLLM V0 (_BATCH_SIZES_TO_CAPTURE in the 0.6–0.7 model runner): 1, 2, 4, 8, 16, …, 256. */
const VLLM_V0_GRAPHS = byEights(256);
/** vLLM V1 (the default cudagraph_capture_sizes, 0.8 and later): 1, 2, 4, 8, 16, …, 512. */
const VLLM_V1_GRAPHS = byEights(512);
/** SGLang 0.4 (the default cuda_graph_bs with cuda_graph_max_bs 160): 1, 2, 4, 8, 12, 16, 24, …, 160. */
const SGLANG_GRAPHS = [1, 2, 4, 8, 12, ...Array.from({ length: 19 }, (_, i) => 16 + 8 * i)];

/** The records, oldest first per engine. */
export const PROFILE_RECORDS: readonly ProfileRecord[] = [
  {
    engine: "vllm",
    since: "0.6.0",
    label: "vLLM V0 engine (0.6–0.7)",
    host: (c) => (rocm(c) ? VLLM_V0_ROCM_HOST : VLLM_V0_HOST),
    graphSizes: VLLM_V0_GRAPHS,
    source:
      "vLLM 0.6–0.7 EngineArgs: prefix caching off by default; chunked prefill on for long-context models (as Llama-3.1) with an API-server budget of 2,048 tokens and max_num_seqs 256; decodes and prefill chunks share a step",
    kernels: "vllm",
    defaults: () => ({
      max_tokens_budget: 2048,
      max_num_seqs: 256,
      enable_chunked_prefill: true,
      mix_prefill_decode: true,
      enable_prefix_caching: false,
      admission_policy: "greedy",
    }),
  },
  {
    engine: "vllm",
    since: "0.8.0",
    label: "vLLM V1 engine (0.8)",
    host: VLLM_V1_HOST,
    graphSizes: VLLM_V1_GRAPHS,
    source:
      "vLLM 0.8 EngineArgs._set_default_args_v1: V1 always uses chunked prefill and enables prefix caching by default; API server: max_num_batched_tokens 2,048, max_num_seqs 256; the V1 scheduler mixes prefill chunks and decodes and preempts by recomputation",
    kernels: "vllm",
    defaults: () => ({
      max_tokens_budget: 2048,
      max_num_seqs: 256,
      enable_chunked_prefill: true,
      mix_prefill_decode: true,
      enable_prefix_caching: true,
      admission_policy: "greedy",
    }),
  },
  {
    engine: "vllm",
    since: "0.9.0",
    label: "vLLM V1 engine (0.9 and later)",
    host: VLLM_V1_HOST,
    graphSizes: VLLM_V1_GRAPHS,
    source:
      "vLLM EngineArgs.get_batch_defaults (0.9 and later): on devices with at least 70 GiB other than A100 (H100, H200, MI300X) the API server takes max_num_batched_tokens 8,192 and max_num_seqs 1,024, elsewhere 2,048 and 256 (A100 excluded after vLLM PR #17885 measured lower throughput with the larger budget); prefix caching on, chunked prefill always. The first release with this split is taken as 0.9.0 (not pinned down)",
    kernels: "vllm",
    defaults: (c) => {
      const large = c.memoryBytes >= 70 * GiB && !/a100/i.test(c.deviceName);
      return {
        max_tokens_budget: large ? 8192 : 2048,
        max_num_seqs: large ? 1024 : 256,
        enable_chunked_prefill: true,
        mix_prefill_decode: true,
        enable_prefix_caching: true,
        admission_policy: "greedy",
      };
    },
  },
  {
    engine: "sglang",
    since: "0.4.0",
    label: "SGLang (0.4)",
    graphSizes: SGLANG_GRAPHS,
    host: (c) => (rocm(c) ? SGLANG_04_ROCM_HOST : SGLANG_04_HOST),
    source:
      "SGLang 0.4 ServerArgs: chunked_prefill_size 8,192 (2,048 below 25 GB), mem_fraction_static 0.88 / 0.87 / 0.85 / 0.81 at TP 1 / 2 / 4 / 8, radix cache on, enable_mixed_chunk off (a step is prefill-only when a prefill can run), decode requests retracted (recomputed) when memory runs out",
    // SGLang runs the same library kernels as vLLM on NVIDIA (FlashInfer / FlashAttention-3 attention,
    // cuBLAS and CUTLASS FP8 GEMMs, a custom all-reduce): vLLM's measured tables stand for them.
    kernels: "vllm",
    defaults: (c) => ({
      max_tokens_budget: c.memoryBytes < 25e9 ? 2048 : 8192,
      enable_chunked_prefill: true,
      mix_prefill_decode: false,
      enable_prefix_caching: true,
      admission_policy: "conservative",
      kv_cache_memory_fraction: c.tp >= 8 ? 0.81 : c.tp >= 4 ? 0.85 : c.tp >= 2 ? 0.87 : 0.88,
    }),
  },
  {
    engine: "sglang",
    since: "0.4.7",
    label: "SGLang (0.4.7 and later)",
    graphSizes: SGLANG_GRAPHS,
    source:
      "SGLang ServerArgs, later 0.4 and 0.5 releases: chunked_prefill_size by device memory: 2,048 below 35 GB, 8,192 below 160 GB (H100, H200, A100), 16,384 above (B200, MI300X); otherwise as 0.4. The first release with these tiers is taken as 0.4.7 (not pinned down)",
    // SGLang runs the same library kernels as vLLM on NVIDIA (FlashInfer / FlashAttention-3 attention,
    // cuBLAS and CUTLASS FP8 GEMMs, a custom all-reduce): vLLM's measured tables stand for them.
    kernels: "vllm",
    defaults: (c) => ({
      max_tokens_budget: c.memoryBytes < 35 * 2 ** 30 ? 2048 : c.memoryBytes < 160 * 2 ** 30 ? 8192 : 16384,
      enable_chunked_prefill: true,
      mix_prefill_decode: false,
      enable_prefix_caching: true,
      admission_policy: "conservative",
      kv_cache_memory_fraction: c.tp >= 8 ? 0.81 : c.tp >= 4 ? 0.85 : c.tp >= 2 ? 0.87 : 0.88,
    }),
  },
  {
    engine: "trtllm",
    since: "0.12.0",
    label: "TensorRT-LLM (0.12 and later)",
    source:
      "TensorRT-LLM BuildConfig and executor defaults (0.12 and later): max_num_tokens 8,192, max_batch_size 2,048, capacity scheduler GUARANTEED_NO_EVICT, chunked context off, in-flight batching mixes context and generation requests in one step; KV block reuse off in the TensorRT engine flow",
    kernels: "trtllm",
    defaults: () => TRTLLM_EXECUTOR_DEFAULTS,
  },
  {
    engine: "trtllm",
    backend: "pytorch",
    since: "0.17.0",
    label: "TensorRT-LLM PyTorch backend (0.17 and later)",
    host: TRTLLM_PYTORCH_017_HOST,
    source:
      "TensorRT-LLM PyTorch backend (trtllm-serve --backend pytorch, 0.17 and later; the only backend for DeepSeek-V3/R1 then): the executor's defaults as in the TensorRT flow (max_num_tokens 8,192, GUARANTEED_NO_EVICT, chunked context off, mixed steps); CUDA graphs off unless configured (use_cuda_graph), so no graph padding",
    kernels: "trtllm",
    defaults: () => TRTLLM_EXECUTOR_DEFAULTS,
  },
  {
    engine: "mindie",
    since: "1.0.0",
    label: "MindIE Service (1.0 and later)",
    source:
      "MindIE Service config.json defaults (1.0.RC3 and later samples): maxPrefillTokens 8,192, maxBatchSize 200, maxPreemptCount 0 (no preemption: a request is admitted only when it can finish), supportSelectBatch false (prefill batches go first), no chunked prefill or prefix caching unless their plugins are enabled",
    defaults: () => ({
      max_tokens_budget: 8192,
      max_num_seqs: 200,
      enable_chunked_prefill: false,
      mix_prefill_decode: false,
      enable_prefix_caching: false,
      admission_policy: "guaranteed_no_evict",
    }),
  },
  {
    engine: "lmdeploy",
    since: "0.6.0",
    label: "LMDeploy TurboMind (0.6 and later)",
    source:
      "LMDeploy TurbomindEngineConfig (0.6 and later): max_prefill_token_num 8,192 per iteration, enable_prefix_caching False, max_batch_size 256 on data-centre GPUs; prefill chunks run beside decodes; a sequence that runs out of cache is recomputed",
    defaults: () => ({
      max_tokens_budget: 8192,
      max_num_seqs: 256,
      enable_chunked_prefill: true,
      mix_prefill_decode: true,
      enable_prefix_caching: false,
      admission_policy: "greedy",
    }),
  },
];

/**
 * The host costs a record gives a device, if any.
 *
 * @example Host costs of an engine profile
 * ```ts
 * import { hostCostsOf, resolveProfile } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const context = { deviceName: "H100_SXM_80G", memoryBytes: 80e9, tp: 1 };
 * const vllm = hostCostsOf(resolveProfile("vllm").record, context);
 * assert.ok(vllm !== undefined && vllm.stepUs > 0);
 * assert.equal(hostCostsOf(resolveProfile("lmdeploy").record, context), undefined); // none pinned
 * ```
 */
export function hostCostsOf(record: ProfileRecord, c: ProfileContext): HostCosts | undefined {
  return typeof record.host === "function" ? record.host(c) : record.host;
}

/** AMD Instinct devices (ROCm builds of the engines). */
const rocm = (c: ProfileContext) => /^MI\d/i.test(c.deviceName);

/** Parses "0.8.5", "v1.0.RC3", "0.9" into numbers to compare (non-numeric parts count as 0). */
function versionParts(v: string): number[] | undefined {
  const m = /^v?(\d+(?:\.\w+)*)$/i.exec(v.trim());
  if (!m) return undefined;
  return m[1].split(".").map((p) => (/^\d+$/.test(p) ? Number(p) : 0));
}

function compare(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** The profile record of an engine version, and a notice when it is a fallback. */
export interface ResolvedProfile {
  /** The record used. */
  readonly record: ProfileRecord;
  /** The version asked for, if any. */
  readonly version?: string;
  /** Why another record than the one asked for was used, when it was. */
  readonly notice?: string;
}

/**
 * Finds the record of `engine` covering `version`: the latest whose `since`
 * is not after it. No version: the latest record. A version older than
 * every record or one that does not parse falls back to the nearest record,
 * with a notice.
 *
 * @example The record covering a version
 * ```ts
 * import { resolveProfile } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const latest = resolveProfile("vllm");
 * assert.equal(latest.record.engine, "vllm");
 * assert.equal(resolveProfile("vllm", "99.0").record, latest.record);
 * assert.match(resolveProfile("vllm", "0.1.0").notice!, /older than every profile/);
 * ```
 */
export function resolveProfile(engine: EngineName, version?: string, backend?: EngineBackend): ResolvedProfile {
  // The records of the backend asked for; the default backend's (records without one) otherwise.
  const ofBackend = PROFILE_RECORDS.filter((r) => r.engine === engine && r.backend === backend);
  const records = ofBackend.length > 0 ? ofBackend : PROFILE_RECORDS.filter((r) => r.engine === engine && !r.backend);
  if (backend !== undefined && ofBackend.length === 0) {
    const r = resolveProfile(engine, version);
    const why = `note: ${engine} has no '${backend}' backend profile: using its default backend's`;
    return { ...r, notice: r.notice ? `${why}; ${r.notice.replace(/^note: /, "")}` : why };
  }
  const latest = records[records.length - 1];
  if (version === undefined) return { record: latest };
  const v = versionParts(version);
  if (!v) {
    return {
      record: latest,
      version,
      notice: `note: ${engine} version '${version}' is not a version number: using the ${latest.label} profile`,
    };
  }
  const covering = records.filter((r) => compare(versionParts(r.since)!, v) <= 0);
  if (covering.length === 0) {
    return {
      record: records[0],
      version,
      notice: `note: ${engine} ${version} is older than every profile: using the nearest, ${records[0].label}`,
    };
  }
  return { record: covering[covering.length - 1], version };
}

/** A group's serving settings with its engine profile applied. */
export interface ProfiledServing {
  /** The settings the group runs with. */
  readonly serving: ServingConfig;
  /** The profile and what it supplied, when the file names an engine. */
  readonly profile?: {
    readonly resolved: ResolvedProfile;
    /** The values the profile supplied (keys the file leaves out). */
    readonly supplied: ProfileDefaults;
  };
}

/**
 * Fills the keys of `sc` that the file did not write (`written`) from the
 * profile of `sc.engine`, for a device and TP size. Without `engine`, `sc`
 * is returned as it is.
 *
 * @param written the `serving_config` keys the user's file (with overrides) holds
 *
 * @example Fill what the file left out from the vLLM profile
 * ```ts
 * import { applyProfile, loadConfig } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const files: Record<string, string> = { "i.yaml": i, "c.yaml": c };
 * const fs = { readText: (p: string) => files[p], isDirectory: () => false };
 * const serving = loadConfig(["i.yaml"], "c.yaml", fs).common.serving_config;
 * const context = { deviceName: "H100_SXM_80G", memoryBytes: 80e9, tp: 1 };
 * const p = applyProfile({ ...serving, engine: "vllm" }, new Set(["max_num_seqs"]), context);
 * assert.equal(p.serving.max_num_seqs, serving.max_num_seqs); // written by the user: kept
 * assert.equal(p.serving.enable_prefix_caching, true); // vLLM V1's default
 * assert.ok(!("max_num_seqs" in p.profile!.supplied));
 * assert.equal(applyProfile(serving, new Set(), context).profile, undefined); // no engine: as it is
 * ```
 */
export function applyProfile(
  sc: ServingConfig,
  written: ReadonlySet<string>,
  context: ProfileContext,
): ProfiledServing {
  if (!sc.engine) return { serving: sc };
  const resolved = resolveProfile(sc.engine, sc.engine_version, sc.engine_backend);
  const supplied: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(resolved.record.defaults(context))) {
    if (!written.has(k) && v !== undefined) supplied[k] = v;
  }
  return { serving: { ...sc, ...supplied }, profile: { resolved, supplied: supplied as ProfileDefaults } };
}
