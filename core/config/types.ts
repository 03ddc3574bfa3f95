/**
 * The validated configuration, as typed objects. `schema.ts` holds the zod
 * schemas that produce them; a compile-time check there keeps the two in
 * step.
 *
 * @module
 */
import type { AdmissionName } from "../policy/mod.ts";
import type { RoutingPolicyName } from "../policy/mod.ts";

/** `parallel_config` of an instance group. */
export interface ParallelConfig {
  /** Devices of one instance. @default num_devices_per_instance */
  world_size?: number;
  /** Tensor-parallel size of attention. @default world_size / dp_size */
  tp_size?: number;
  /** Data-parallel ranks; each is an independent engine. @default 1 */
  dp_size: number;
  /** Decode-context parallelism (KV split along the sequence over TP ranks). @default 1 */
  dcp_size: number;
  /** TP size of the MLP; null = tp_size. @default null */
  mlp_tp_size: number | null;
  /** DP size of the MLP; null = inherit. @default null */
  mlp_dp_size: number | null;
  /** TP size of the LM head; null = tp_size. @default null */
  lmhead_tp_size: number | null;
  /** DP size of the LM head; null = inherit. @default null */
  lmhead_dp_size: number | null;
  /** Expert parallelism (MoE models only). @default 1 */
  ep_size: number;
  /** TP size of the experts (MoE only). @default 1 */
  moe_tp_size: number;
  /** DP size of the experts (MoE only). @default null */
  moe_dp_size: number | null;
}

/** `communication_config` of an instance group. */
export interface CommunicationConfig {
  /** Host-to-device bandwidth, B/s. @default 1e10 */
  host2device_bandwidth: number;
  /** Achieved fraction of it, (0, 1]. @default 0.5 */
  host2device_rate: number;
  /** Device-to-device (prefill → decode KV) bandwidth, B/s. @default 4e9 */
  device2device_bandwidth: number;
  /** Achieved fraction of it, (0, 1]. @default 0.5 */
  device2device_rate: number;
  /** ext: fixed latency per KV transfer, seconds. @default 0 */
  device2device_latency: number;
}

/** One instance group: `num_instances` identical instances. */
export interface InstanceGroupConfig {
  /** Instances in the group (required). */
  num_instances: number;
  /** Devices per instance (required; = world_size). */
  num_devices_per_instance: number;
  /** Serving role (required). */
  pd_role: "prefill" | "decode" | "both";
  /** A catalog device name or a path to a device file. @default "TEST_DEVICE" */
  device_type: string;
  /** ext: a label for reports. */
  name?: string;
  /** Parallel layout. */
  parallel_config: ParallelConfig;
  /** Link bandwidths. */
  communication_config: CommunicationConfig;
}

/** An instance file. */
export interface InstanceFile {
  /** One or more groups. */
  instance_groups: InstanceGroupConfig[];
}

/** `model_config` of the common file. */
export interface ModelConfig {
  /** A catalog id (Hugging Face id) or a path to a config.json or its folder (required). */
  name: string;
  /** Linear-layer quantization. @default "W8A8_DYNAMIC" */
  quantize_linear_action:
    | "DISABLED"
    | "W8A16_STATIC"
    | "W8A8_STATIC"
    | "W4A8_STATIC"
    | "W8A16_DYNAMIC"
    | "W8A8_DYNAMIC"
    | "W4A8_DYNAMIC"
    | "FP8"
    | "MXFP4";
  /** Quantize the LM head like the linear layers. @default false */
  quantize_lmhead: boolean;
  /** Values per MXFP4 scale. @default 32 */
  mxfp4_group_size: number;
  /** KV-cache type. @default "DISABLED" (BF16) */
  quantize_attention_action: "DISABLED" | "INT8" | "FP8";
  /** Speculative (MTP) tokens per step. @default 0 */
  num_mtp_tokens: number;
  /**
   * ext: probability that an MTP draft is accepted given the drafts before it
   * were; tokens per decode step = 1 + Σ rate^i. DeepSeek-V3's report gives
   * 85–90% for its second-token prediction. @default 0.85
   */
  mtp_acceptance_rate: number;
  /** Charge the host-to-device input copy per step. @default false */
  enable_preprocessing_modeling: boolean;
  /** Charge the prefill → decode KV transfer. @default false */
  enable_kv_transfer_modeling: boolean;
  /** Upstream estimator knobs: accepted, ignored. */
  do_compile?: unknown;
  /** Ignored upstream knob. */
  allow_graph_break?: unknown;
  /** Ignored upstream knob. */
  dump_input_shapes?: unknown;
  /** Ignored upstream knob. */
  chrome_trace?: unknown;
  /** Ignored upstream knob. */
  enable_multi_process?: unknown;
  /** Ignored upstream knob. */
  num_processes?: unknown;
  /** Ignored upstream knob. */
  predict_steps?: unknown;
  /** Ignored upstream knob. */
  enable_interpolate?: unknown;
  /** Ignored upstream knob. */
  interpolation_seed?: unknown;
  /** Ignored upstream knob. */
  fusion_plugins?: unknown;
}

/** `load_gen` of the upstream `fixed_length` type: identical requests. */
export interface FixedLengthLoadGen {
  /** Workload generator (the default). */
  load_gen_type: "fixed_length";
  /** Requests in the run. @default 500 */
  num_requests: number;
  /** Prompt tokens per request. @default 3500 */
  num_input_tokens: number;
  /** Output tokens per request. @default 1500 */
  num_output_tokens: number;
  /** Requests per second; Infinity (`.inf`) = all ready at t=0. @default 2.0 */
  request_rate: number;
  /** ext: arrival process. @default "constant" */
  arrival_process: "constant" | "poisson" | "gamma";
  /** ext: coefficient of variation of gamma gaps. @default 1.0 */
  arrival_cv: number;
  /** ext: random seed. @default 0 */
  seed: number;
}

/** A token-length distribution (ext). */
export type LengthDistConfig =
  | { dist: "fixed"; value: number }
  | { dist: "uniform"; min: number; max: number }
  | { dist: "normal" | "lognormal"; mean: number; std: number; min?: number; max?: number }
  | { dist: "bins"; bins: { min_tokens: number; max_tokens: number; weight: number }[] };

/** Arrivals of a synthetic workload (ext). */
export interface ArrivalConfig {
  /** Inter-arrival distribution; `burst` = every request at t=0. @default "poisson" */
  process: "constant" | "poisson" | "gamma" | "burst";
  /** Requests per second (or `.inf`); required unless `rate_schedule` or `burst`. */
  request_rate?: number;
  /** Coefficient of variation of gamma gaps. @default 1.0 */
  cv: number;
  /** Piecewise-constant rate; the last segment's rate goes on after it ends. */
  rate_schedule?: { duration: number; request_rate: number }[];
}

/** `load_gen` of the `synthetic` type (ext). */
export interface SyntheticLoadGen {
  /** Workload generator. */
  load_gen_type: "synthetic";
  /** Requests in the run. @default 500 */
  num_requests: number;
  /** Random seed. @default 0 */
  seed: number;
  /** Arrival process. */
  arrival: ArrivalConfig;
  /** Prompt length distribution (required without `classes`). */
  input_tokens?: LengthDistConfig;
  /** Output length distribution (required without `classes`). */
  output_tokens?: LengthDistConfig;
  /** Leading prompt tokens shared by requests of a prefix group (without `classes`). @default 0 */
  shared_prefix_tokens: number;
  /** Distinct shared prefixes (without `classes`). @default 1 */
  prefix_groups: number;
  /** Request classes mixed by weight, each with its own lengths and shared prefix. */
  classes?: RequestClassConfig[];
  /** A public dataset's prompt and output lengths, instead of `input_tokens` and `output_tokens`. */
  dataset?: "sharegpt4_chat" | "arxiv_summarization" | "azure_code";
  /** Multi-turn sessions: `num_requests` then counts turns, and `input_tokens` each turn's new message. */
  sessions?: SessionsConfig;
}

/** `serving_config.speculative_config` (ext). */
export interface SpeculativeConfig {
  /** `eagle`: a draft head of one decoder layer, run once per draft; `ngram`: drafts from the prompt and output. */
  method: "eagle" | "ngram";
  /** Draft tokens verified per decode step (at most 16). */
  num_speculative_tokens: number;
  /**
   * Per draft position, the probability it is accepted given the ones before it were; one per draft token.
   * @default published rates for the method and model (core/config/speculation.ts), for up to 5 drafts
   */
  acceptance_rates?: number[];
  /** The draft model, for the launch commands (EAGLE). */
  draft_model?: string;
}

/** A think time between a session's turns, seconds (ext). */
export type ThinkTimeConfig =
  | { dist: "fixed"; value: number }
  | { dist: "exponential"; mean: number }
  | { dist: "uniform"; min: number; max: number }
  | { dist: "lognormal"; mean: number; std: number };

/** `load_gen.sessions` (ext): multi-turn conversations. */
export interface SessionsConfig {
  /** Turns per session. */
  turns: LengthDistConfig;
  /** Seconds from a turn's last token to the next turn's send. */
  think_time: ThinkTimeConfig;
  /** A session ends before the turn whose prompt + reply would pass this many tokens. */
  max_context_tokens?: number;
}

/** A request class of a synthetic workload (ext). */
export interface RequestClassConfig {
  /** Name, for reports. @default "class<i>" */
  name?: string;
  /** Relative weight. @default 1 */
  weight: number;
  /** Prompt lengths. */
  input_tokens: LengthDistConfig;
  /** Output lengths. */
  output_tokens: LengthDistConfig;
  /** Leading prompt tokens shared by requests of the same prefix group (a system prompt). @default 0 */
  shared_prefix_tokens: number;
  /** Distinct shared prefixes in the class; each request picks one uniformly. @default 1 */
  prefix_groups: number;
}

/** `load_gen` of the `trace` type (ext): replay a recorded trace (Mooncake format). */
export interface TraceLoadGen {
  /** Workload generator. */
  load_gen_type: "trace";
  /** JSONL or CSV file, relative to the common file. */
  trace_path: string;
  /** File format; default: from the extension (.csv, else JSONL). */
  format?: "jsonl" | "csv";
  /** Multiplies every inter-arrival gap. @default 1.0 */
  time_scale: number;
  /** Rescales gaps to this mean rate, req/s (instead of time_scale). */
  request_rate?: number;
  /** Replay only the first N lines. @default null (all) */
  num_requests: number | null;
  /** Tokens each hash id stands for. @default 512 (the Mooncake traces) */
  hash_block_tokens: number;
  /** Random seed (routing). @default 0 */
  seed: number;
}

/** `load_gen` of the common file. */
export type LoadGenConfig = FixedLengthLoadGen | SyntheticLoadGen | TraceLoadGen;

/** `serving_config` of the common file. */
export interface ServingConfig {
  /** Requests the client keeps in flight. @default 100 */
  max_concurrency: number;
  /** Tokens per KV block. @default 128 */
  block_size: number;
  /** Tokens per engine step. @default 8192 */
  max_tokens_budget: number;
  /** ext: sequences per step. @default 256 */
  max_num_seqs: number;
  /** ext: split long prompts over steps. @default true */
  enable_chunked_prefill: boolean;
  /**
   * ext: mix prefill chunks and decodes in one step (vLLM v1). When false a
   * step is prefill-only whenever a prefill can run, else decode-only
   * (SGLang's default, vLLM v0). @default true
   */
  mix_prefill_decode: boolean;
  /** ext: reuse cached prompt blocks. @default false */
  enable_prefix_caching: boolean;
  /** ext: share of device memory the engine may use, (0, 1]. @default 0.9 */
  kv_cache_memory_fraction: number;
  /** ext: pinned KV blocks per engine; null = from memory. @default null */
  num_kv_blocks: number | null;
  /** ext: routing policy. @default "least_loaded" */
  routing_policy: RoutingPolicyName;
  /** ext: KV offload: a host tier of `host_memory_gb` per engine, loaded at `bandwidth` B/s per device. */
  kv_offload?: { host_memory_gb: number; bandwidth?: number };
  /** ext: speculative decoding besides MTP (EAGLE, n-gram), with per-position acceptance rates; null: none. */
  speculative_config?: SpeculativeConfig | null;
  /** ext: `prefix_aware` routing's scorer weights. @default llm-d's: prefix 3, queue 2, kv 2 */
  prefix_aware_weights?: { prefix: number; queue: number; kv: number };
  /**
   * ext: KV admission. `greedy` (vLLM): admit when the next chunk's blocks are
   * free, preempt the newest request when blocks run out. `guaranteed_no_evict`
   * (TensorRT-LLM): admit only when the whole request's blocks can be reserved.
   * `conservative` (SGLang): admit when the prompt and 0.7 of the output still
   * to come fit; retract (preempt) when the estimate proves short.
   * @default "greedy"
   */
  admission_policy: AdmissionName;
  /**
   * ext: multi-step scheduling (vLLM 0.6–0.7 `--num-scheduler-steps`): a
   * decode-only batch runs this many steps for one scheduling pass; the
   * step's fixed host cost is paid once per window and new requests wait
   * for the window to end. @default 1
   */
  num_scheduler_steps: number;
  /**
   * ext: the serving engine. Its profile (core/config/engine_profiles.ts)
   * supplies the keys above that the file leaves out; none when absent.
   */
  engine?: "vllm" | "sglang" | "trtllm" | "mindie" | "lmdeploy";
  /** ext: the engine's version, to pick the profile record; default: the latest. */
  engine_version?: string;
  /**
   * ext: the execution backend, for an engine with two (TensorRT-LLM:
   * `tensorrt` engine flow, the default, or the `pytorch` backend).
   */
  engine_backend?: "tensorrt" | "pytorch";
  /**
   * ext: requests reach the engine through its API server (HTTP, chat
   * template, tokenization, streaming), which delays each by the engine
   * build's per-request latency; false for offline harnesses that call the
   * engine in process (vLLM's benchmark_latency and benchmark_throughput,
   * trtllm-bench, TensorRT-LLM's gptSessionBenchmark). @default true
   */
  api_server: boolean;
}

/** A common file. */
export interface CommonFile {
  /** The model and its quantization. */
  model_config: ModelConfig;
  /** The workload. */
  load_gen: LoadGenConfig;
  /** Serving limits. */
  serving_config: ServingConfig;
  /** ext: size limits of the run. */
  limits: RunLimits;
}

/** ext: how big a run may be; each limit is an exit-2 error naming it, raised in the common file. */
export interface RunLimits {
  /** Requests of the workload (a trace's lines replayed). @default 100000000 */
  max_requests: number;
  /** Instances over all instance groups. @default 100000 */
  max_instances: number;
  /** Engines (DP ranks of instances) over all groups. @default 100000 */
  max_engines: number;
  /** Span of the arrivals, seconds (at most 1e9: times are exact µs). @default 1e9 */
  max_arrival_seconds: number;
}
