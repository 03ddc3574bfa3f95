/**
 * Engine profiles: the serving defaults of the engine a deployment runs
 * (`serving_config.engine`, ext), by version range. A profile fills in only
 * what the user's file leaves out; an explicit key always wins. With no
 * `engine` key nothing changes: the upstream defaults apply, as before.
 *
 * Each record says where its values come from (the engine's own defaults in
 * its source code or sample configuration, for the versions named). The
 * records cover scheduling and batching defaults, whose measured kernel
 * tables time the engine's kernels (`kernels`), how the engine launches
 * kernels and whether it overlaps its CPU work with the GPU's, and the
 * host-cost family whose prior applies where no public run pins the
 * release's host costs ({@link HOST_PINS}, fitted by `deno task validate`).
 *
 * @module
 */
import type { ServingConfig } from "./types.ts";
import type { KernelTableEngine } from "../hardware/mod.ts";
import { platformOf } from "../hardware/devices.ts";
import { CALIBRATED_FILE, Calibration, hostConstant, hostConstants, hostPrior, MODEL_CONSTANTS } from "./calibrated.ts";
import type { CalibratedConstant, ConstantValues, HostFamily, HostPin, HostQuantity } from "./calibrated.ts";

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
  | "block_size"
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
  /** The model uses multi-head latent attention (DeepSeek-V2/V3/R1). */
  readonly mla?: boolean;
  /** The model's context length (its max_position_embeddings), tokens. */
  readonly maxModelLen?: number;
}

/**
 * How an engine sizes its KV cache from the memory share it is given:
 * `vllm`, the share of device memory less the weights, the activations of
 * the largest step and runtime buffers (gpu_memory_utilization); `sglang`,
 * the share less the weights alone (mem_fraction_static covers weights and
 * KV; activations and graphs live in the rest); `trtllm`, the share of the
 * memory still free once weights, activations and runtime are allocated
 * (free_gpu_memory_fraction).
 */
export type KvMemoryRule = "vllm" | "sglang" | "trtllm";

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
  /** The host-cost family: whose prior and ranges apply (see {@link hostOf}). */
  readonly family: HostFamily;
  /** How the engine launches a step's kernels by default. */
  readonly launch: LaunchMode;
  /** The engine runs a step's CPU work beside the next step's GPU work by default (an overlap scheduler). */
  readonly overlap: boolean;
  /** How its KV cache is sized from `kv_cache_memory_fraction`. */
  readonly kvMemory: KvMemoryRule;
  /** The execution backend the record describes, for an engine with several; absent: the default one. */
  readonly backend?: EngineBackend;
  /** Decode batch sizes captured as CUDA graphs (ascending), when the engine captures them by default. */
  readonly graphSizes?: readonly number[];
}

/**
 * How an engine launches a step's kernels on the device: replaying a
 * captured graph for decode steps up to its largest captured batch (the
 * other steps launch kernel by kernel from Python: `graphs`), every step
 * kernel by kernel from Python (`eager`), or from compiled engines whose
 * launch cost stays hidden (`compiled`, TensorRT engines).
 */
export type LaunchMode = "graphs" | "eager" | "compiled";

/**
 * Version ranges whose host costs public runs pin (`host.<id>.<quantity>`,
 * fitted on the fit rows that run them, scenarios/validation/registry/
 * sources.yaml). A pin covers only the releases it was measured on (its
 * minor series); every other version of the engine takes its family's
 * prior until a source pins it.
 */
export const HOST_PINS: readonly (HostPin & {
  readonly engine: EngineName;
  readonly backend?: EngineBackend;
  /** First version covered. */
  readonly since: string;
  /** First version no longer covered. */
  readonly before: string;
})[] = [
  // dstack's benchmark_throughput of Llama-3.1-405B FP8 on 8 × H100 with 0.6.3 (D405-01..05).
  { id: "vllm-0.6", engine: "vllm", since: "0.6.0", before: "0.7.0", family: "vllm-v0", fits: ["step_us", "seq_us"] },
  // dstack's DeepSeek-R1 runs on 8 × MI300X with the 0.7.3 ROCm staging image (DSR1-004..012).
  { id: "vllm-0.7", engine: "vllm", since: "0.7.0", before: "0.8.0", family: "vllm-v0", fits: ["step_us"] },
  // AMD's benchmark_latency sweep of Llama-3.1-70B FP8 on 8 × MI300X with 0.10.0 (ROCM-L01..L08).
  {
    id: "vllm-0.10",
    engine: "vllm",
    since: "0.10.0",
    before: "0.11.0",
    family: "vllm-v1",
    fits: ["step_us", "seq_us"],
  },
  // DataCrunch's Llama-3.3-70B runs on 4 × H200 with the Dec 2024 image (0.4.0 or 0.4.1; DC-05..29).
  {
    id: "sglang-0.4.0",
    engine: "sglang",
    since: "0.4.0",
    before: "0.4.2",
    family: "sglang",
    fits: ["step_us", "seq_us", "request_us"],
  },
  // dstack's DeepSeek-R1 runs on 8 × MI300X with the 0.4.2 ROCm staging image (DSR1-022..030).
  { id: "sglang-0.4.2", engine: "sglang", since: "0.4.2", before: "0.4.3", family: "sglang", fits: ["step_us"] },
];

/** The host-cost pin covering an engine version, if any. */
export function hostPinOf(engine: EngineName, version?: string, backend?: EngineBackend): HostPin | undefined {
  const v = version === undefined ? undefined : versionParts(version);
  if (!v) return undefined;
  return HOST_PINS.find((p) =>
    p.engine === engine && p.backend === backend && compare(versionParts(p.since)!, v) <= 0 &&
    compare(v, versionParts(p.before)!) < 0
  );
}

/** Every calibrated constant: the model's own and each pin's host costs. */
export const CALIBRATED_CONSTANTS: readonly CalibratedConstant[] = [
  ...MODEL_CONSTANTS,
  ...HOST_PINS.flatMap(hostConstants),
];

const CONSTANTS_BY_NAME: ReadonlyMap<string, CalibratedConstant> = new Map(
  CALIBRATED_CONSTANTS.map((c) => [c.name, c]),
);

/** Whether a calibrated constant of that name exists. */
export const hasConstant = (name: string): boolean => CONSTANTS_BY_NAME.has(name);

/**
 * A calibration of `values` over every constant there is (others at their
 * prior). Without values: the committed fit (core/config/data/
 * calibrated.json).
 */
export function calibration(values: ConstantValues = CALIBRATED_FILE.values): Calibration {
  return new Calibration(values, CONSTANTS_BY_NAME);
}

/** The host costs a group runs with: CPU time per step and per sequence, per request, and how it launches and overlaps. */
export interface HostModel {
  /** CPU time per step the GPU waits for, µs. */
  readonly stepUs: number;
  /** CPU time per sequence in a step, µs. */
  readonly seqUs: number;
  /** Latency of a request before the engine sees it, µs. */
  readonly requestUs: number;
  /** How kernels are launched. */
  readonly launch: LaunchMode;
  /** CPU time per kernel launched from Python (eager steps), µs. */
  readonly launchUs: number;
  /** The shortest a kernel runs on the device, µs: a step lasts at least its kernels × this. */
  readonly floorUs: number;
  /** The CPU work of a step runs beside the GPU work of the next (an overlap scheduler): only its excess shows. */
  readonly overlap: boolean;
  /** The pin whose fitted values these are, or undefined for the family's prior. */
  readonly pin?: string;
  /** Where the values come from, for reports. */
  readonly source: string;
}

/** AMD Instinct devices (ROCm builds of the engines). */
export const isRocm = (deviceName: string): boolean => platformOf(deviceName) === "rocm";

/** Huawei Ascend devices (vLLM-Ascend, MindIE). */
export const isAscend = (deviceName: string): boolean => platformOf(deviceName) === "ascend";

/** Whether an engine version ("0.7.3", "v0.9.1") comes before `bound` ("0.8"); false when it does not parse. */
export function versionBefore(version: string, bound: string): boolean {
  const v = versionParts(version);
  return v !== undefined && compare(v, versionParts(bound)!) < 0;
}

/**
 * vLLM-Ascend before 0.11 runs operator by operator: its graph mode is
 * documented on for the V1 engine from 0.9.1rc1, but GPUStack's 910B runs of
 * 0.9.1 show a fixed ~100 µs per kernel at every batch, for a dense and an
 * MoE model alike (47 ms a decode step of Qwen3-8B's ~480 kernels, 123 ms of
 * Qwen3-30B-A3B's ~1,060), the signature of op-by-op launches. From 0.11 its
 * guide says graph mode runs by default and the A3 tutorial's 0.13 runs show
 * no such floor.
 */
const ASCEND_GRAPHS_SINCE = "0.11.0";

/**
 * The host costs of a profile record for an engine version on a device:
 * the pin's fitted values where a source pins that release, else the
 * family's prior; the eager launch cost of the device's platform.
 */
export function hostOf(resolved: ResolvedProfile, deviceName: string, c: Calibration = calibration()): HostModel {
  const r = resolved.record;
  const pin = hostPinOf(r.engine, resolved.version, r.backend);
  const q = (x: HostQuantity) => pin && pin.fits.includes(x) ? c.get(hostConstant(pin, x)) : hostPrior(r.family, x);
  const platform = platformOf(deviceName);
  const eagerAscend = platform === "ascend" && r.engine === "vllm" && resolved.version !== undefined &&
    versionBefore(resolved.version, ASCEND_GRAPHS_SINCE);
  const launch: LaunchMode = eagerAscend ? "eager" : r.launch;
  const launchUs = launch === "compiled" ? 0 : c.get(`launch_us.${platform}`);
  const pinned = pin && pin.fits.every((x) => c.pinned(hostConstant(pin, x)));
  return {
    stepUs: q("step_us"),
    seqUs: q("seq_us"),
    requestUs: q("request_us"),
    launch,
    launchUs,
    floorUs: c.get(`kernel_floor_us.${platform === "ascend" ? "cuda" : platform}`),
    overlap: r.overlap,
    ...(pin ? { pin: pin.id } : {}),
    source: pin
      ? `host costs of ${pin.id} (${pinned ? "fitted on its calibration runs" : "no fit: the family prior"})`
      : `the ${r.family} family prior (no public run pins this release)`,
  };
}

const GiB = 2 ** 30;

/** TensorRT-LLM's executor defaults, the same under the TensorRT engine flow and the PyTorch backend. */
const TRTLLM_EXECUTOR_DEFAULTS: ProfileDefaults = {
  // KvCacheConfig tokens_per_block 32.
  block_size: 32,
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
/** SGLang 0.3-0.4.2 (cuda_graph_bs with cuda_graph_max_bs 160; sglang@4ab43cf server_args.py): 1, 2, 4, 8, 16, …, 160. */
const SGLANG_GRAPHS = byEights(160);

/** TensorRT-LLM 1.x PyTorch backend (CudaGraphConfig without padding): 1-31, 32, 64, 128. */
const TRTLLM_1_GRAPHS = [...Array.from({ length: 31 }, (_, i) => i + 1), 32, 64, 128];

/** vLLM V1's defaults: the larger API-server budget on large devices; FlashMLA's 64-token pages for MLA on CUDA. */
function vllmV1Defaults(c: ProfileContext, large: boolean): ProfileDefaults {
  return {
    block_size: c.mla && !isRocm(c.deviceName) ? 64 : 16,
    max_tokens_budget: large ? 8192 : 2048,
    max_num_seqs: large ? 1024 : 256,
    enable_chunked_prefill: true,
    mix_prefill_decode: true,
    enable_prefix_caching: true,
    admission_policy: "greedy",
  };
}

/**
 * SGLang's defaults (0.3-0.5): token-granular KV pages (page_size 1; taken
 * here as 16-token blocks, rounding at most 15 tokens a request), running
 * requests capped by min(max_total_tokens / 2, the request pool of
 * 2,048-4,096): 4,096 on the GPUs served here (sglang@84022c0 (0.4.6)
 * python/sglang/srt/managers/scheduler.py), prefill-only steps, radix
 * cache on, conservative admission, mem_fraction_static by TP.
 */
function sglangDefaults(c: ProfileContext, budget: number): ProfileDefaults {
  return {
    block_size: 16,
    max_tokens_budget: budget,
    max_num_seqs: 4096,
    enable_chunked_prefill: true,
    mix_prefill_decode: false,
    enable_prefix_caching: true,
    admission_policy: "conservative",
    kv_cache_memory_fraction: c.tp >= 8 ? 0.81 : c.tp >= 4 ? 0.85 : c.tp >= 2 ? 0.87 : 0.88,
  };
}

/** The records, oldest first per engine. */
export const PROFILE_RECORDS: readonly ProfileRecord[] = [
  {
    engine: "vllm",
    since: "0.6.0",
    label: "vLLM V0 engine (0.6–0.7)",
    family: "vllm-v0",
    launch: "graphs",
    overlap: false,
    graphSizes: VLLM_V0_GRAPHS,
    source:
      "vLLM 0.6–0.7 EngineArgs: block size 16, prefix caching off by default; chunked prefill on for long-context models (as Llama-3.1) with an API-server budget of 2,048 tokens and max_num_seqs 256; decodes and prefill chunks share a step. MLA models (DeepSeek) turn chunked prefill and prefix caching off (vllm@ed6e907 (0.7.3) vllm/config.py: 'MLA is enabled; forcing chunked prefill and prefix caching to be disabled'): prefill-only steps of up to max(max_model_len, 2,048) tokens",
    kernels: "vllm",
    kvMemory: "vllm",
    defaults: (c) => ({
      block_size: 16,
      max_tokens_budget: c.mla ? Math.max(c.maxModelLen ?? 2048, 2048) : 2048,
      max_num_seqs: 256,
      enable_chunked_prefill: !c.mla,
      mix_prefill_decode: !c.mla,
      enable_prefix_caching: false,
      admission_policy: "greedy",
    }),
  },
  {
    engine: "vllm",
    since: "0.8.0",
    label: "vLLM V1 engine (0.8)",
    family: "vllm-v1",
    launch: "graphs",
    overlap: false,
    graphSizes: VLLM_V1_GRAPHS,
    source:
      "vLLM 0.8 EngineArgs._set_default_args_v1: V1 always uses chunked prefill and enables prefix caching by default; the V1 scheduler mixes prefill chunks and decodes and preempts by recomputation. API server: max_num_batched_tokens 8,192 and max_num_seqs 1,024 on devices with at least 70 GiB, else 2,048 and 256 (vllm@20e489e, the eve of 0.8.5, vllm/engine/arg_utils.py L1602-L1634); block size 16, 64 for MLA models on CUDA (FlashMLA's page, vllm/platforms/cuda.py)",
    kernels: "vllm",
    kvMemory: "vllm",
    defaults: (c) => ({ ...vllmV1Defaults(c, c.memoryBytes >= 70 * GiB) }),
  },
  {
    engine: "vllm",
    since: "0.9.0",
    label: "vLLM V1 engine (0.9 and later)",
    family: "vllm-v1",
    launch: "graphs",
    overlap: false,
    graphSizes: VLLM_V1_GRAPHS,
    source:
      "vLLM EngineArgs.get_batch_defaults (0.9 and later): on devices with at least 70 GiB other than A100 (H100, H200, MI300X) the API server takes max_num_batched_tokens 8,192 and max_num_seqs 1,024, elsewhere 2,048 and 256 (A100 excluded after vLLM PR #17885 measured lower throughput with the larger budget); prefix caching on, chunked prefill always. The first release with this split is taken as 0.9.0 (not pinned down)",
    kernels: "vllm",
    kvMemory: "vllm",
    defaults: (c) => vllmV1Defaults(c, c.memoryBytes >= 70 * GiB && !/a100/i.test(c.deviceName)),
  },
  {
    engine: "sglang",
    since: "0.3.0",
    label: "SGLang (0.3)",
    family: "sglang",
    launch: "graphs",
    overlap: false,
    graphSizes: SGLANG_GRAPHS,
    source:
      "SGLang 0.3 ServerArgs: as 0.4 (chunked_prefill_size 8,192, mem_fraction_static by TP, radix cache on, prefill-only steps while a prefill can run), but the scheduler runs each step's CPU work between GPU steps: the overlap ('zero-overhead') scheduler came with 0.4 (SGLang v0.4 release post)",
    kernels: "vllm",
    kvMemory: "sglang",
    defaults: (c) => sglangDefaults(c, c.memoryBytes < 25e9 ? 2048 : 8192),
  },
  {
    engine: "sglang",
    since: "0.4.0",
    label: "SGLang (0.4)",
    family: "sglang",
    launch: "graphs",
    overlap: true,
    graphSizes: SGLANG_GRAPHS,
    source:
      "SGLang 0.4 ServerArgs: chunked_prefill_size 8,192 (2,048 below 25 GB), mem_fraction_static 0.88 / 0.87 / 0.85 / 0.81 at TP 1 / 2 / 4 / 8, radix cache on, enable_mixed_chunk off (a step is prefill-only when a prefill can run), decode requests retracted (recomputed) when memory runs out",
    // SGLang runs the same library kernels as vLLM on NVIDIA (FlashInfer / FlashAttention-3 attention,
    // cuBLAS and CUTLASS FP8 GEMMs, a custom all-reduce): vLLM's measured tables stand for them.
    kernels: "vllm",
    kvMemory: "sglang",
    defaults: (c) => sglangDefaults(c, c.memoryBytes < 25e9 ? 2048 : 8192),
  },
  {
    engine: "sglang",
    since: "0.4.7",
    label: "SGLang (0.4.7 and later)",
    family: "sglang",
    launch: "graphs",
    overlap: true,
    graphSizes: SGLANG_GRAPHS,
    source:
      "SGLang ServerArgs, later 0.4 and 0.5 releases: chunked_prefill_size by device memory: 2,048 below 35 GB, 8,192 below 160 GB (H100, H200, A100), 16,384 above (B200, MI300X); otherwise as 0.4. The first release with these tiers is taken as 0.4.7 (not pinned down)",
    // SGLang runs the same library kernels as vLLM on NVIDIA (FlashInfer / FlashAttention-3 attention,
    // cuBLAS and CUTLASS FP8 GEMMs, a custom all-reduce): vLLM's measured tables stand for them.
    kernels: "vllm",
    kvMemory: "sglang",
    defaults: (c) =>
      sglangDefaults(c, c.memoryBytes < 35 * 2 ** 30 ? 2048 : c.memoryBytes < 160 * 2 ** 30 ? 8192 : 16384),
  },
  {
    engine: "trtllm",
    since: "0.12.0",
    label: "TensorRT-LLM (0.12 and later)",
    family: "trtllm",
    launch: "compiled",
    overlap: false,
    source:
      "TensorRT-LLM BuildConfig and executor defaults (0.12 and later): max_num_tokens 8,192, max_batch_size 2,048, capacity scheduler GUARANTEED_NO_EVICT, chunked context off, in-flight batching mixes context and generation requests in one step; KV block reuse off in the TensorRT engine flow",
    kernels: "trtllm",
    kvMemory: "trtllm",
    defaults: () => TRTLLM_EXECUTOR_DEFAULTS,
  },
  {
    engine: "trtllm",
    backend: "pytorch",
    since: "0.17.0",
    label: "TensorRT-LLM PyTorch backend (0.17–0.19)",
    family: "trtllm",
    launch: "eager",
    overlap: false,
    source:
      "TensorRT-LLM PyTorch backend (trtllm-serve --backend pytorch, 0.17-0.19; the only backend for DeepSeek-V3/R1 then): the executor's defaults as in the TensorRT flow (max_num_tokens 8,192, GUARANTEED_NO_EVICT, chunked context off, mixed steps); PyTorchConfig defaults use_cuda_graph False and enable_overlap_scheduler False: every step launches its kernels one by one from Python",
    kernels: "trtllm",
    kvMemory: "trtllm",
    defaults: () => TRTLLM_EXECUTOR_DEFAULTS,
  },
  {
    engine: "trtllm",
    backend: "pytorch",
    since: "0.20.0",
    label: "TensorRT-LLM PyTorch backend (0.20–0.21)",
    family: "trtllm",
    launch: "eager",
    overlap: true,
    source:
      "TensorRT-LLM PyTorch backend 0.20-0.21 (TorchLlmArgs in tensorrt_llm/llmapi/llm_args.py): use_cuda_graph still False, disable_overlap_scheduler False (the overlap scheduler on by default); the executor's defaults otherwise. The first release with the overlap default is taken as 0.20.0 (not pinned down)",
    kernels: "trtllm",
    kvMemory: "trtllm",
    defaults: () => TRTLLM_EXECUTOR_DEFAULTS,
  },
  {
    engine: "trtllm",
    backend: "pytorch",
    since: "1.0.0",
    label: "TensorRT-LLM PyTorch backend (1.0 and later)",
    family: "trtllm",
    launch: "graphs",
    overlap: true,
    graphSizes: TRTLLM_1_GRAPHS,
    source:
      "TensorRT-LLM 1.x (tensorrt_llm/llmapi/llm_args.py): cuda_graph_config defaults to CudaGraphConfig() (graphs on, max_batch_size 128, batch sizes 1-31, 32, 64, 128 without padding) and the overlap scheduler is on by default (docs, features/overlap-scheduler); the executor's defaults otherwise",
    kernels: "trtllm",
    kvMemory: "trtllm",
    defaults: () => TRTLLM_EXECUTOR_DEFAULTS,
  },
  {
    engine: "mindie",
    since: "1.0.0",
    label: "MindIE Service (1.0 and later)",
    family: "mindie",
    launch: "graphs",
    overlap: false,
    source:
      "MindIE Service config.json defaults (1.0.RC3 and later samples; Ascend/MindIE-LLM@8b4871a src/server/conf/config.json): maxPrefillTokens 8,192, maxBatchSize 200, cacheBlockSize 128, supportSelectBatch false (prefill batches go first), no chunked prefill or prefix caching unless their plugins are enabled; admission takes the prompt's blocks only and maxPreemptCount 0 makes every preemption a recomputation (src/scheduler/policy/fcfs_policy.cpp)",
    kvMemory: "vllm",
    defaults: () => ({
      block_size: 128,
      max_tokens_budget: 8192,
      max_num_seqs: 200,
      enable_chunked_prefill: false,
      mix_prefill_decode: false,
      enable_prefix_caching: false,
      admission_policy: "greedy",
    }),
  },
  {
    engine: "lmdeploy",
    since: "0.6.0",
    label: "LMDeploy TurboMind (0.6 and later)",
    family: "lmdeploy",
    launch: "compiled",
    overlap: false,
    source:
      "LMDeploy TurbomindEngineConfig (0.6 and later): max_prefill_token_num 8,192 per iteration, enable_prefix_caching False, max_batch_size 256 on data-centre GPUs; prefill chunks run beside decodes; a sequence that runs out of cache is recomputed",
    kvMemory: "trtllm",
    defaults: () => ({
      block_size: 64,
      max_tokens_budget: 8192,
      max_num_seqs: 256,
      enable_chunked_prefill: true,
      mix_prefill_decode: true,
      enable_prefix_caching: false,
      admission_policy: "greedy",
    }),
  },
];

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
