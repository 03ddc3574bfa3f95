/**
 * Schemas of the two upstream ServingCast files (instance file and common
 * file), per `shared/spec/config.md`. Every key has its upstream default;
 * keys marked ext are ours and optional. Unknown keys are rejected.
 *
 * @module
 */
import { z } from "zod";
import { describeValue } from "./errors.ts";
import type { CommonFile, InstanceFile } from "./types.ts";
import { ENGINE_BACKENDS, ENGINES } from "./engine_profiles.ts";

const got = (i: { input?: unknown }) => `got ${describeValue(i.input)}`;

/** A positive integer (> 0). */
export const positiveInt = () =>
  z.int({ error: (i) => `expected a positive integer, ${got(i)}` })
    .positive({ error: (i) => `expected a positive integer, ${got(i)}` });

/** A non-negative integer (>= 0). */
export const nonNegativeInt = () =>
  z.int({ error: (i) => `expected a non-negative integer, ${got(i)}` })
    .nonnegative({ error: (i) => `expected a non-negative integer, ${got(i)}` });

/** A finite number > 0. */
export const positiveNumber = () =>
  z.number({ error: (i) => `expected a positive number, ${got(i)}` })
    .positive({ error: (i) => `expected a positive number, ${got(i)}` });

/** A finite number >= 0. */
export const nonNegativeNumber = () =>
  z.number({ error: (i) => `expected a non-negative number, ${got(i)}` })
    .nonnegative({ error: (i) => `expected a non-negative number, ${got(i)}` });

/** A seed: a non-negative integer below 2^32 (the generator's seed width; larger seeds would wrap). */
export const seedInt = () =>
  nonNegativeInt().max(2 ** 32 - 1, { error: (i) => `expected an integer below 2^32 (4294967296), ${got(i)}` });

/** An efficiency in (0, 1]. */
export const fraction = () =>
  z.number({ error: (i) => `expected a number in (0, 1], ${got(i)}` })
    .positive({ error: (i) => `expected a number in (0, 1], ${got(i)}` })
    .max(1, { error: (i) => `expected a number in (0, 1], ${got(i)}` });

const bool = () => z.boolean({ error: (i) => `expected true or false, ${got(i)}` });

/** One of a fixed set of names. */
export const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, {
    error: (i) => `expected one of ${values.join(", ")}, ${got(i)}`,
  });

/** A mapping with exactly these keys (unknown keys are errors). */
export const mapping = <S extends z.ZodRawShape>(shape: S) =>
  z.strictObject(shape, {
    error: (i) => (i.code === "invalid_type" ? `expected a mapping, ${got(i)}` : undefined),
  });

/** A parallel size that may be null (= inherit). */
const inheritSize = () => positiveInt().nullable().default(null);

/** `parallel_config` of an instance group. Sizes default to a single-device layout. */
export const ParallelConfigSchema = mapping({
  world_size: positiveInt().optional(),
  tp_size: positiveInt().optional(),
  dp_size: positiveInt().default(1),
  dcp_size: positiveInt().default(1),
  mlp_tp_size: inheritSize(),
  mlp_dp_size: inheritSize(),
  lmhead_tp_size: inheritSize(),
  lmhead_dp_size: inheritSize(),
  ep_size: positiveInt().default(1),
  moe_tp_size: positiveInt().default(1),
  moe_dp_size: inheritSize(),
});

/** `communication_config` of an instance group (bandwidths in B/s, latency in s). */
export const CommunicationConfigSchema = mapping({
  host2device_bandwidth: positiveNumber().default(1e10),
  host2device_rate: fraction().default(0.5),
  device2device_bandwidth: positiveNumber().default(4e9),
  device2device_rate: fraction().default(0.5),
  /** ext: fixed latency per KV transfer, seconds. */
  device2device_latency: nonNegativeNumber().default(0),
});

/** The serving roles of an instance group. */
export const PD_ROLES = ["prefill", "decode", "both"] as const;

/** One instance group: `num_instances` identical instances of one layout. */
export const InstanceGroupSchema = mapping({
  num_instances: positiveInt(),
  num_devices_per_instance: positiveInt(),
  pd_role: oneOf(PD_ROLES),
  device_type: z.string({ error: (i) => `expected a device name or path, ${got(i)}` })
    .min(1).default("TEST_DEVICE"),
  name: z.string().optional(),
  parallel_config: ParallelConfigSchema.prefault({}),
  communication_config: CommunicationConfigSchema.prefault({}),
});

/** The instance file. */
export const InstanceFileSchema = mapping({
  instance_groups: z.array(InstanceGroupSchema, {
    error: (i) => `expected a list of instance groups, ${got(i)}`,
  }).min(1, { error: "expected at least one instance group, got an empty list" }),
});

/** Linear-layer quantization modes (upstream names). */
export const LINEAR_QUANT = [
  "DISABLED",
  "W8A16_STATIC",
  "W8A8_STATIC",
  "W4A8_STATIC",
  "W8A16_DYNAMIC",
  "W8A8_DYNAMIC",
  "W4A8_DYNAMIC",
  "FP8",
  "MXFP4",
] as const;

/** KV-cache quantization modes (upstream names). */
export const ATTENTION_QUANT = ["DISABLED", "INT8", "FP8"] as const;

/**
 * Upstream estimator knobs with no meaning in this simulator: accepted and
 * ignored, with one notice line.
 */
export const IGNORED_MODEL_KEYS = [
  "do_compile",
  "allow_graph_break",
  "dump_input_shapes",
  "chrome_trace",
  "enable_multi_process",
  "num_processes",
  "predict_steps",
  "enable_interpolate",
  "interpolation_seed",
  "fusion_plugins",
] as const;

const ignoredKeys = Object.fromEntries(
  IGNORED_MODEL_KEYS.map((k) => [k, z.unknown().optional()]),
) as Record<(typeof IGNORED_MODEL_KEYS)[number], z.ZodOptional<z.ZodUnknown>>;

/** `model_config` of the common file. */
export const ModelConfigSchema = mapping({
  name: z.string({ error: (i) => `expected a model id or a path to a config.json, ${got(i)}` })
    .min(1),
  quantize_linear_action: oneOf(LINEAR_QUANT).default("W8A8_DYNAMIC"),
  quantize_lmhead: bool().default(false),
  mxfp4_group_size: positiveInt().default(32),
  quantize_attention_action: oneOf(ATTENTION_QUANT).default("DISABLED"),
  num_mtp_tokens: nonNegativeInt().default(0),
  /** ext */
  mtp_acceptance_rate: fraction().default(0.85),
  enable_preprocessing_modeling: bool().default(false),
  enable_kv_transfer_modeling: bool().default(false),
  ...ignoredKeys,
});

/** A gamma coefficient of variation: from near-constant (0.001) to very bursty (1000). */
const arrivalCv = () =>
  z.number({ error: (i) => `expected a number in [0.001, 1000], ${got(i)}` })
    .min(0.001, { error: (i) => `expected a number in [0.001, 1000], ${got(i)}` })
    .max(1000, { error: (i) => `expected a number in [0.001, 1000], ${got(i)}` });

/** Client arrival processes for `fixed_length` workloads. */
export const ARRIVAL_PROCESSES = ["constant", "poisson", "gamma"] as const;

/** A request rate: a positive number, or `.inf` (every request ready at t=0). */
const requestRate = () =>
  z.custom<number>(
    (v) => typeof v === "number" && v > 0 && !Number.isNaN(v),
    { error: (i) => `expected a positive number or .inf, ${got(i)}` },
  );

/** `load_gen` of the upstream `fixed_length` type: identical requests. */
export const FixedLengthLoadGenSchema = mapping({
  load_gen_type: z.literal("fixed_length"),
  num_requests: positiveInt().default(500),
  num_input_tokens: positiveInt().default(3500),
  num_output_tokens: positiveInt().default(1500),
  request_rate: requestRate().default(2.0),
  /** ext */
  arrival_process: oneOf(ARRIVAL_PROCESSES).default("constant"),
  /** ext: gamma coefficient of variation. */
  arrival_cv: arrivalCv().default(1.0),
  /** ext */
  seed: seedInt().default(0),
});

/** Length distributions (ext). */
export const LENGTH_DISTS = ["fixed", "uniform", "normal", "lognormal", "bins"] as const;

const meanStd = (dist: "normal" | "lognormal") =>
  mapping({
    dist: z.literal(dist),
    mean: positiveNumber(),
    std: nonNegativeNumber(),
    min: positiveInt().optional(),
    max: positiveInt().optional(),
  });

/** A token-length distribution (ext). */
export const LengthDistSchema = z.discriminatedUnion("dist", [
  mapping({ dist: z.literal("fixed"), value: positiveInt() }),
  mapping({ dist: z.literal("uniform"), min: positiveInt(), max: positiveInt() }),
  meanStd("normal"),
  meanStd("lognormal"),
  mapping({
    dist: z.literal("bins"),
    bins: z.array(mapping({ min_tokens: positiveInt(), max_tokens: positiveInt(), weight: positiveNumber() }))
      .min(1, { error: "expected at least one bin" }),
  }),
], {
  error: (i) =>
    i.code === "invalid_union" ? `expected dist one of ${LENGTH_DISTS.join(", ")}` : `expected a mapping, ${got(i)}`,
});

/** Arrival processes of synthetic workloads (ext). */
export const SYNTHETIC_ARRIVALS = ["constant", "poisson", "gamma", "burst"] as const;

/** `load_gen.arrival` of a synthetic workload (ext). */
export const ArrivalSchema = mapping({
  process: oneOf(SYNTHETIC_ARRIVALS).default("poisson"),
  request_rate: requestRate().optional(),
  cv: arrivalCv().default(1.0),
  rate_schedule: z.array(mapping({ duration: positiveNumber(), request_rate: positiveNumber() }))
    .min(1, { error: "expected at least one segment" }).optional(),
});

/** A request class of a synthetic workload (ext). */
export const RequestClassSchema = mapping({
  name: z.string().min(1).optional(),
  weight: positiveNumber().default(1),
  input_tokens: LengthDistSchema,
  output_tokens: LengthDistSchema,
  shared_prefix_tokens: nonNegativeInt().default(0),
  prefix_groups: positiveInt().default(1),
});

/** Dataset shapes `load_gen.dataset` names (ext). */
export const DATASET_NAMES = ["sharegpt4_chat", "arxiv_summarization", "azure_code"] as const;

/** Think-time distributions of sessions (ext), seconds. */
export const THINK_DISTS = ["fixed", "exponential", "uniform", "lognormal"] as const;

/** Seconds: a think time of at most a day. */
const seconds = () =>
  nonNegativeNumber().max(86_400, { error: (i) => `expected at most 86400 seconds (a day), ${got(i)}` });

/** A think time between a session's turns, seconds (ext). */
export const ThinkTimeSchema = z.discriminatedUnion("dist", [
  mapping({ dist: z.literal("fixed"), value: seconds() }),
  mapping({ dist: z.literal("exponential"), mean: seconds() }),
  mapping({ dist: z.literal("uniform"), min: seconds(), max: seconds() }),
  mapping({
    dist: z.literal("lognormal"),
    mean: positiveNumber().max(86_400, { error: (i) => `expected at most 86400 seconds (a day), ${got(i)}` }),
    std: seconds(),
  }),
], {
  error: (i) =>
    i.code === "invalid_union" ? `expected dist one of ${THINK_DISTS.join(", ")}` : `expected a mapping, ${got(i)}`,
});

/**
 * `load_gen.sessions` of a synthetic workload (ext): multi-turn
 * conversations. The arrival process starts sessions; each later turn is
 * sent `think_time` seconds after the turn before finished, its prompt the
 * system prompt (`shared_prefix_tokens`), the whole conversation so far and
 * a new message of `input_tokens`; `num_requests` counts turns.
 */
export const SessionsSchema = mapping({
  turns: LengthDistSchema,
  think_time: ThinkTimeSchema,
  /** A session ends before the turn whose prompt + reply would pass this many tokens. */
  max_context_tokens: positiveInt().optional(),
});

/** `load_gen` of the `synthetic` type (ext): arrivals and lengths from distributions. */
export const SyntheticLoadGenSchema = mapping({
  load_gen_type: z.literal("synthetic"),
  num_requests: positiveInt().default(500),
  seed: seedInt().default(0),
  arrival: ArrivalSchema.prefault({}),
  input_tokens: LengthDistSchema.optional(),
  output_tokens: LengthDistSchema.optional(),
  shared_prefix_tokens: nonNegativeInt().default(0),
  prefix_groups: positiveInt().default(1),
  classes: z.array(RequestClassSchema).min(1, { error: "expected at least one class" }).optional(),
  /** A public dataset's prompt and output lengths (core/workload/datasets.ts), instead of input_tokens and output_tokens. */
  dataset: oneOf(DATASET_NAMES).optional(),
  sessions: SessionsSchema.optional(),
});

/** `load_gen` of the `trace` type (ext): replay a recorded trace. */
export const TraceLoadGenSchema = mapping({
  load_gen_type: z.literal("trace"),
  trace_path: z.string({ error: (i) => `expected a path to a JSONL or CSV trace, ${got(i)}` }).min(1),
  format: oneOf(["jsonl", "csv"] as const).optional(),
  time_scale: positiveNumber().default(1.0),
  request_rate: positiveNumber().optional(),
  num_requests: positiveInt().nullable().default(null),
  hash_block_tokens: positiveInt().default(512),
  seed: seedInt().default(0),
});

/** Workload generator types. */
export const LOAD_GEN_TYPES = ["fixed_length", "synthetic", "trace"] as const;

/** `load_gen` of the common file; `load_gen_type` defaults to `fixed_length`. */
export const LoadGenSchema = z.preprocess(
  (
    v,
  ) => (v !== null && typeof v === "object" && !Array.isArray(v) && !("load_gen_type" in v)
    ? { ...v, load_gen_type: "fixed_length" }
    : v),
  z.discriminatedUnion("load_gen_type", [FixedLengthLoadGenSchema, SyntheticLoadGenSchema, TraceLoadGenSchema], {
    error: (i) =>
      i.code === "invalid_union"
        ? `load_gen_type must be one of ${LOAD_GEN_TYPES.join(", ")}`
        : `expected a mapping, ${got(i)}`,
  }),
);

/** Routing policies (ext) and KV admission policies (ext): named once, in core/policy. */
export { ADMISSION_POLICIES, ROUTING_POLICIES } from "../policy/mod.ts";
import { ADMISSION_POLICIES, ROUTING_POLICIES } from "../policy/mod.ts";

/** Speculative decoding methods of `serving_config.speculative_config` (ext); MTP is `model_config.num_mtp_tokens`. */
export const SPECULATIVE_METHODS = ["eagle", "ngram"] as const;

/** `serving_config` of the common file. */
export const ServingConfigSchema = mapping({
  max_concurrency: positiveInt().default(100),
  block_size: positiveInt().default(128),
  max_tokens_budget: positiveInt().default(8192),
  /** ext */
  max_num_seqs: positiveInt().default(256),
  /** ext */
  enable_chunked_prefill: bool().default(true),
  /** ext */
  mix_prefill_decode: bool().default(true),
  /** ext */
  enable_prefix_caching: bool().default(false),
  /** ext: share of device memory the engine may use. */
  kv_cache_memory_fraction: fraction().default(0.9),
  /** ext: pin the KV block count per engine. */
  num_kv_blocks: positiveInt().nullable().default(null),
  /** ext */
  routing_policy: oneOf(ROUTING_POLICIES).default("least_loaded"),
  /**
   * ext: speculative decoding besides the model's MTP layers: `eagle` (a
   * draft head of one decoder layer, run once per draft) or `ngram` (drafts
   * looked up in the prompt and output on the host, no draft model), with
   * the acceptance rate of each draft position given the ones before it.
   */
  speculative_config: mapping({
    method: oneOf(SPECULATIVE_METHODS),
    num_speculative_tokens: positiveInt().max(16, { error: (i) => `expected at most 16 draft tokens, ${got(i)}` }),
    acceptance_rates: z.array(
      z.number({ error: (i) => `expected a number in [0, 1], ${got(i)}` })
        .min(0, { error: (i) => `expected a number in [0, 1], ${got(i)}` })
        .max(1, { error: (i) => `expected a number in [0, 1], ${got(i)}` }),
    ).min(1, { error: "expected at least one rate" }).optional(),
    /** The draft model's name, for the launch commands (`eagle`). */
    draft_model: z.string().min(1).optional(),
  }).nullable().optional(),
  /**
   * ext: KV offload to host memory: the prefix cache's evicted blocks move to
   * a host tier of `host_memory_gb` per engine, and a prompt that finds its
   * next blocks there loads them at `bandwidth` (B/s per device; default the
   * device's host link, else the instance's host2device_bandwidth ×
   * host2device_rate) instead of computing
   * them. Needs enable_prefix_caching.
   */
  kv_offload: mapping({
    host_memory_gb: positiveNumber(),
    bandwidth: positiveNumber().optional(),
  }).optional(),
  /** ext: `prefix_aware` routing's scorer weights (llm-d's defaults). */
  prefix_aware_weights: mapping({
    prefix: nonNegativeNumber().default(3),
    queue: nonNegativeNumber().default(2),
    kv: nonNegativeNumber().default(2),
  }).optional(),
  /** ext */
  admission_policy: oneOf(ADMISSION_POLICIES).default("greedy"),
  /** ext: vLLM 0.6's multi-step scheduling (`--num-scheduler-steps`). */
  num_scheduler_steps: positiveInt().default(1),
  /** ext: the serving engine whose defaults fill in the keys this file leaves out. */
  engine: oneOf(ENGINES).optional(),
  /** ext: its version (a number such as 0.9 is taken as text). */
  engine_version: z.union([z.string(), z.number()], { error: (i) => `expected a version such as "0.9.2", ${got(i)}` })
    .transform((v) => String(v)).optional(),
  /** ext: the engine's execution backend where it has two (TensorRT-LLM: `tensorrt` engines or `pytorch`). */
  engine_backend: oneOf(ENGINE_BACKENDS).optional(),
  /** ext: requests go through the engine's API server (false: an offline harness calls the engine in process). */
  api_server: bool().default(true),
});

/** Default size limits of a run (`limits`, ext): see {@link LimitsSchema}. */
export const DEFAULT_LIMITS = {
  max_requests: 100_000_000,
  max_instances: 100_000,
  max_engines: 100_000,
  max_arrival_seconds: 1e9,
} as const;

/**
 * `limits` of the common file (ext): how big a run may be. Requests cost
 * about 20 bytes each; engines simulate in about 0.1 ms each and print one
 * row each in the JSON. Arrival times are integer µs in a double, exact up
 * to 2^53 µs (285 years): a run's arrivals must span at most 1e9 s.
 */
export const LimitsSchema = mapping({
  max_requests: positiveInt().default(DEFAULT_LIMITS.max_requests),
  max_instances: positiveInt().default(DEFAULT_LIMITS.max_instances),
  max_engines: positiveInt().default(DEFAULT_LIMITS.max_engines),
  max_arrival_seconds: positiveNumber()
    .max(1e9, { error: (i) => `expected a positive number of seconds ≤ 1e9, ${got(i)}` })
    .default(DEFAULT_LIMITS.max_arrival_seconds),
});

/** The common file. */
export const CommonFileSchema = mapping({
  model_config: ModelConfigSchema,
  load_gen: LoadGenSchema.prefault({}),
  serving_config: ServingConfigSchema.prefault({}),
  /** ext */
  limits: LimitsSchema.prefault({}),
});

// The schemas must produce exactly the documented types of types.ts.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameTypes: [
  Same<z.output<typeof InstanceFileSchema>, InstanceFile>,
  Same<z.output<typeof CommonFileSchema>, CommonFile>,
] = [true, true];
void sameTypes;

/**
 * The numeric fields of a Hugging Face `config.json` that the simulator
 * reads: each, when present (null counts as absent), an integer of the right
 * sign. Other keys are left alone (a config.json holds many); which fields
 * a model needs is checked once its family is known.
 */
export const HfConfigSchema = z.looseObject({
  model_type: z.string({ error: (i) => `expected a string, ${got(i)}` }).nullish(),
  hidden_size: positiveInt().nullish(),
  num_hidden_layers: positiveInt().nullish(),
  num_attention_heads: positiveInt().nullish(),
  num_key_value_heads: positiveInt().nullish(),
  head_dim: positiveInt().nullish(),
  intermediate_size: nonNegativeInt().nullish(),
  vocab_size: positiveInt().nullish(),
  tie_word_embeddings: bool().nullish(),
  max_position_embeddings: positiveInt().nullish(),
  attention_bias: bool().nullish(),
  num_local_experts: nonNegativeInt().nullish(),
  num_experts: nonNegativeInt().nullish(),
  n_routed_experts: nonNegativeInt().nullish(),
  num_experts_per_tok: positiveInt().nullish(),
  moe_intermediate_size: nonNegativeInt().nullish(),
  n_shared_experts: nonNegativeInt().nullish(),
  shared_expert_intermediate_size: nonNegativeInt().nullish(),
  first_k_dense_replace: nonNegativeInt().nullish(),
  n_group: positiveInt().nullish(),
  topk_group: positiveInt().nullish(),
  q_lora_rank: nonNegativeInt().nullish(),
  kv_lora_rank: nonNegativeInt().nullish(),
  qk_nope_head_dim: nonNegativeInt().nullish(),
  qk_rope_head_dim: nonNegativeInt().nullish(),
  v_head_dim: nonNegativeInt().nullish(),
  num_nextn_predict_layers: nonNegativeInt().nullish(),
}, {
  error: (
    i,
  ) => (i.code === "invalid_type" ? `expected a JSON object (a Hugging Face config.json), ${got(i)}` : undefined),
});
