/**
 * The built-in model catalog: the architecture fields of each model's
 * Hugging Face `config.json`, as listed in `shared/reference/models.md`, so
 * that the simulator runs offline. Only fields the simulator reads are kept.
 *
 * @module
 */

/** The subset of a Hugging Face `config.json` the simulator reads. */
export interface HfConfig {
  /** `model_type` of config.json. */
  model_type?: string;
  /** `architectures` of config.json. */
  architectures?: string[];
  /** `hidden_size` of config.json. */
  hidden_size?: number;
  /** `num_hidden_layers` of config.json. */
  num_hidden_layers?: number;
  /** `num_attention_heads` of config.json. */
  num_attention_heads?: number;
  /** `num_key_value_heads` of config.json. */
  num_key_value_heads?: number;
  /** `head_dim` of config.json. */
  head_dim?: number;
  /** `intermediate_size` of config.json. */
  intermediate_size?: number;
  /** `vocab_size` of config.json. */
  vocab_size?: number;
  /** `tie_word_embeddings` of config.json. */
  tie_word_embeddings?: boolean;
  /** `max_position_embeddings` of config.json. */
  max_position_embeddings?: number;
  /** `attention_bias` of config.json. */
  attention_bias?: boolean;
  // MoE (Mixtral: num_local_experts; Qwen3-MoE: num_experts; DeepSeek: n_routed_experts)
  /** `num_local_experts` of config.json. */
  num_local_experts?: number;
  /** `num_experts` of config.json. */
  num_experts?: number;
  /** `n_routed_experts` of config.json. */
  n_routed_experts?: number;
  /** `num_experts_per_tok` of config.json. */
  num_experts_per_tok?: number;
  /** `moe_intermediate_size` of config.json. */
  moe_intermediate_size?: number;
  /** `n_shared_experts` of config.json. */
  n_shared_experts?: number;
  /** `shared_expert_intermediate_size` of config.json. */
  shared_expert_intermediate_size?: number;
  /** `first_k_dense_replace` of config.json. */
  first_k_dense_replace?: number;
  /** `n_group` of config.json (DeepSeek expert groups). */
  n_group?: number;
  /** `topk_group` of config.json (groups a token may use: node-limited routing). */
  topk_group?: number;
  // MLA (DeepSeek)
  /** `q_lora_rank` of config.json. */
  q_lora_rank?: number | null;
  /** `kv_lora_rank` of config.json. */
  kv_lora_rank?: number;
  /** `qk_nope_head_dim` of config.json. */
  qk_nope_head_dim?: number;
  /** `qk_rope_head_dim` of config.json. */
  qk_rope_head_dim?: number;
  /** `v_head_dim` of config.json. */
  v_head_dim?: number;
  /** `num_nextn_predict_layers` of config.json. */
  num_nextn_predict_layers?: number;
}

const llama = (
  hidden: number,
  layers: number,
  heads: number,
  kv: number,
  inter: number,
  vocab: number,
  maxPos: number,
): HfConfig => ({
  /** `model_type` of config.json. */
  model_type: "llama",
  /** `hidden_size` of config.json. */
  hidden_size: hidden,
  /** `num_hidden_layers` of config.json. */
  num_hidden_layers: layers,
  /** `num_attention_heads` of config.json. */
  num_attention_heads: heads,
  /** `num_key_value_heads` of config.json. */
  num_key_value_heads: kv,
  /** `head_dim` of config.json. */
  head_dim: 128,
  /** `intermediate_size` of config.json. */
  intermediate_size: inter,
  /** `vocab_size` of config.json. */
  vocab_size: vocab,
  /** `tie_word_embeddings` of config.json. */
  tie_word_embeddings: false,
  /** `max_position_embeddings` of config.json. */
  max_position_embeddings: maxPos,
});

const qwen = (
  type: "qwen2" | "qwen3",
  hidden: number,
  layers: number,
  heads: number,
  kv: number,
  inter: number,
  vocab: number,
  maxPos: number,
): HfConfig => ({
  ...llama(hidden, layers, heads, kv, inter, vocab, maxPos),
  /** `model_type` of config.json. */
  model_type: type,
});

const qwen3Moe = (
  hidden: number,
  layers: number,
  heads: number,
  kv: number,
  expertInter: number,
): HfConfig => ({
  ...qwen("qwen3", hidden, layers, heads, kv, 0, 151936, 40960),
  /** `model_type` of config.json. */
  model_type: "qwen3_moe",
  /** `num_experts` of config.json. */
  num_experts: 128,
  /** `num_experts_per_tok` of config.json. */
  num_experts_per_tok: 8,
  /** `moe_intermediate_size` of config.json. */
  moe_intermediate_size: expertInter,
});

const deepseekV3: HfConfig = {
  /** `model_type` of config.json. */
  model_type: "deepseek_v3",
  /** `hidden_size` of config.json. */
  hidden_size: 7168,
  /** `num_hidden_layers` of config.json. */
  num_hidden_layers: 61,
  /** `num_attention_heads` of config.json. */
  num_attention_heads: 128,
  /** `num_key_value_heads` of config.json. */
  num_key_value_heads: 128,
  /** `intermediate_size` of config.json. */
  intermediate_size: 18432,
  /** `vocab_size` of config.json. */
  vocab_size: 129280,
  /** `tie_word_embeddings` of config.json. */
  tie_word_embeddings: false,
  /** `max_position_embeddings` of config.json. */
  max_position_embeddings: 163840,
  /** `n_routed_experts` of config.json. */
  n_routed_experts: 256,
  /** `num_experts_per_tok` of config.json. */
  num_experts_per_tok: 8,
  /** `n_shared_experts` of config.json. */
  n_shared_experts: 1,
  /** `moe_intermediate_size` of config.json. */
  moe_intermediate_size: 2048,
  /** `first_k_dense_replace` of config.json. */
  first_k_dense_replace: 3,
  n_group: 8,
  topk_group: 4,
  /** `q_lora_rank` of config.json. */
  q_lora_rank: 1536,
  /** `kv_lora_rank` of config.json. */
  kv_lora_rank: 512,
  /** `qk_nope_head_dim` of config.json. */
  qk_nope_head_dim: 128,
  /** `qk_rope_head_dim` of config.json. */
  qk_rope_head_dim: 64,
  /** `v_head_dim` of config.json. */
  v_head_dim: 128,
  /** `num_nextn_predict_layers` of config.json. */
  num_nextn_predict_layers: 1,
};

/** Catalog ids (Hugging Face ids) to their architecture. */
export const MODEL_CATALOG: Readonly<Record<string, HfConfig>> = Object.freeze({
  "meta-llama/Llama-2-7b-hf": llama(4096, 32, 32, 32, 11008, 32000, 4096),
  "meta-llama/Llama-2-70b-hf": llama(8192, 80, 64, 8, 28672, 32000, 4096),
  "meta-llama/Llama-3.1-8B-Instruct": llama(4096, 32, 32, 8, 14336, 128256, 131072),
  "meta-llama/Llama-3.1-70B-Instruct": llama(8192, 80, 64, 8, 28672, 128256, 131072),
  "meta-llama/Llama-3.3-70B-Instruct": llama(8192, 80, 64, 8, 28672, 128256, 131072),
  "meta-llama/Llama-3.1-405B-Instruct": llama(16384, 126, 128, 8, 53248, 128256, 131072),
  "Qwen/Qwen2.5-7B-Instruct": qwen("qwen2", 3584, 28, 28, 4, 18944, 152064, 32768),
  "Qwen/Qwen2.5-72B-Instruct": qwen("qwen2", 8192, 80, 64, 8, 29568, 152064, 32768),
  "Qwen/Qwen3-8B": qwen("qwen3", 4096, 36, 32, 8, 12288, 151936, 40960),
  "Qwen/Qwen3-32B": qwen("qwen3", 5120, 64, 64, 8, 25600, 151936, 40960),
  "Qwen/Qwen3-30B-A3B": qwen3Moe(2048, 48, 32, 4, 768),
  "Qwen/Qwen3-235B-A22B": qwen3Moe(4096, 94, 64, 4, 1536),
  "mistralai/Mixtral-8x7B-Instruct-v0.1": {
    ...llama(4096, 32, 32, 8, 14336, 32000, 32768),
    model_type: "mixtral",
    num_local_experts: 8,
    num_experts_per_tok: 2,
  },
  "deepseek-ai/DeepSeek-V3": deepseekV3,
  "deepseek-ai/DeepSeek-R1": deepseekV3,
});

/** Alternative spellings users type for catalog ids (base and instruct share a shape). */
export const MODEL_ALIASES: Readonly<Record<string, string>> = Object.freeze({
  "meta-llama/Llama-3.1-8B": "meta-llama/Llama-3.1-8B-Instruct",
  "meta-llama/Meta-Llama-3.1-8B-Instruct": "meta-llama/Llama-3.1-8B-Instruct",
  "meta-llama/Llama-3.1-70B": "meta-llama/Llama-3.1-70B-Instruct",
  "meta-llama/Meta-Llama-3.1-70B-Instruct": "meta-llama/Llama-3.1-70B-Instruct",
  "meta-llama/Llama-2-7b-chat-hf": "meta-llama/Llama-2-7b-hf",
  "meta-llama/Llama-2-70b-chat-hf": "meta-llama/Llama-2-70b-hf",
  "mistralai/Mixtral-8x7B-v0.1": "mistralai/Mixtral-8x7B-Instruct-v0.1",
  // Same architecture, other weights: DeepSeek's May 2025 refresh of R1, and the FP8 checkpoints of Qwen3 (their
  // quantization is the common file's quantize_linear_action, as for any model).
  "deepseek-ai/DeepSeek-R1-0528": "deepseek-ai/DeepSeek-R1",
  "Qwen/Qwen3-8B-FP8": "Qwen/Qwen3-8B",
  "Qwen/Qwen3-32B-FP8": "Qwen/Qwen3-32B",
  "Qwen/Qwen3-30B-A3B-FP8": "Qwen/Qwen3-30B-A3B",
  "Qwen/Qwen3-235B-A22B-FP8": "Qwen/Qwen3-235B-A22B",
  "meta-llama/Llama-3.1-405B-FP8": "meta-llama/Llama-3.1-405B-Instruct",
  "meta-llama/Llama-3.1-405B-Instruct-FP8": "meta-llama/Llama-3.1-405B-Instruct",
});
