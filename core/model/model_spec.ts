/**
 * A model's architecture, read from a Hugging Face `config.json`, and what
 * follows from it: parameter counts (total and active), weight bytes and KV
 * bytes per token. Nothing here is typed in per model: it is all computed
 * from the architecture fields.
 *
 * @module
 */
import type { HfConfig } from "./catalog.ts";

/** Mixture-of-experts layout. */
export interface MoeSpec {
  /** Routed experts per MoE layer. */
  readonly experts: number;
  /** Experts each token is routed to. */
  readonly topK: number;
  /** Intermediate size of one routed expert. */
  readonly expertIntermediate: number;
  /** Shared (always active) experts per MoE layer. */
  readonly sharedExperts: number;
  /** Intermediate size of one shared expert. */
  readonly sharedIntermediate: number;
  /** Leading layers that use a dense MLP instead of experts. */
  readonly denseLayers: number;
  /** Expert groups (DeepSeek `n_group`; 1 = none). */
  readonly groups: number;
  /** Groups one token may use (`topk_group`): with a group per node, the nodes it reaches. */
  readonly topkGroups: number;
}

/** Multi-head latent attention (DeepSeek) layout. */
export interface MlaSpec {
  /** Rank of the query compression (0 = none). */
  readonly qLoraRank: number;
  /** Rank of the compressed KV latent. */
  readonly kvLoraRank: number;
  /** Per-head query/key dimension without rotary embedding. */
  readonly qkNopeHeadDim: number;
  /** Per-head rotary key dimension (shared across heads). */
  readonly qkRopeHeadDim: number;
  /** Per-head value dimension. */
  readonly vHeadDim: number;
}

/** The architecture of a decoder-only transformer. */
export interface ModelSpec {
  /** The id the user named (catalog id or path). */
  readonly id: string;
  /** `dense` (MHA/GQA), `moe`, or `mla_moe` (DeepSeek). */
  readonly family: "dense" | "moe" | "mla_moe";
  /** Hidden size. */
  readonly hidden: number;
  /** Decoder layers. */
  readonly layers: number;
  /** Attention (query) heads. */
  readonly heads: number;
  /** Key/value heads (GQA groups). */
  readonly kvHeads: number;
  /** Dimension of one head. */
  readonly headDim: number;
  /** Dense MLP intermediate size (0 when every layer is MoE). */
  readonly intermediate: number;
  /** Vocabulary size. */
  readonly vocab: number;
  /** Q, K and V projections carry a bias (Qwen2). */
  readonly qkvBias: boolean;
  /** Per-head RMSNorm on Q and K (Qwen3). */
  readonly qkNorm: boolean;
  /** The LM head shares the input embedding. */
  readonly tiedEmbeddings: boolean;
  /** Longest sequence (prompt + output) the model accepts, when known. */
  readonly maxPositions?: number;
  /** Expert layout, for MoE models. */
  readonly moe?: MoeSpec;
  /** Latent-attention layout, for DeepSeek models. */
  readonly mla?: MlaSpec;
  /** Multi-token-prediction layers (`num_nextn_predict_layers`): the drafts MTP speculation uses; 0 without. */
  readonly mtpLayers: number;
}

/** Thrown through this callback when a required field is missing or wrong. */
export type FieldError = (field: string, detail: string) => never;

function num(cfg: HfConfig, key: keyof HfConfig, fail: FieldError, fallback?: number): number {
  const v = cfg[key] ?? fallback;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0) {
    return fail(key, v === undefined ? "missing required field" : `expected a non-negative integer, got ${v}`);
  }
  return v;
}

/**
 * Reads the architecture from a Hugging Face config.
 *
 * @param id the name to show for the model
 * @param cfg the parsed config.json
 * @param fail called with the field name on a missing or invalid field
 *
 * @example Read a config.json; a missing field goes to the callback
 * ```ts
 * import { modelSpecFromHf } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const fail = (field: string, detail: string): never => {
 *   throw new Error(`${field}: ${detail}`);
 * };
 * const cfg = {
 *   hidden_size: 4096,
 *   num_hidden_layers: 32,
 *   num_attention_heads: 32,
 *   num_key_value_heads: 8,
 *   intermediate_size: 14336,
 *   vocab_size: 128256,
 * };
 * const m = modelSpecFromHf("my-llama", cfg, fail);
 * assert.equal(m.family, "dense");
 * assert.equal(m.headDim, 128); // hidden / heads when head_dim is absent
 * const noHidden = { ...cfg, hidden_size: undefined };
 * assert.throws(() => modelSpecFromHf("x", noHidden, fail), /^Error: hidden_size: missing required field$/);
 * ```
 */
export function modelSpecFromHf(id: string, cfg: HfConfig, fail: FieldError): ModelSpec {
  const hidden = num(cfg, "hidden_size", fail);
  const heads = num(cfg, "num_attention_heads", fail);
  if (hidden === 0 || heads === 0) fail(hidden === 0 ? "hidden_size" : "num_attention_heads", "must be positive");
  const kvHeads = num(cfg, "num_key_value_heads", fail, heads);
  if (kvHeads === 0 || heads % kvHeads !== 0) {
    fail("num_key_value_heads", `must divide num_attention_heads (${heads}), got ${kvHeads}`);
  }
  const experts = cfg.n_routed_experts ?? cfg.num_local_experts ?? cfg.num_experts ?? 0;
  const moe: MoeSpec | undefined = experts > 0
    ? {
      experts,
      topK: num(cfg, "num_experts_per_tok", fail),
      expertIntermediate: cfg.moe_intermediate_size ?? num(cfg, "intermediate_size", fail),
      sharedExperts: cfg.n_shared_experts ?? (cfg.shared_expert_intermediate_size ? 1 : 0),
      sharedIntermediate: cfg.shared_expert_intermediate_size ?? cfg.moe_intermediate_size ?? 0,
      denseLayers: cfg.first_k_dense_replace ?? 0,
      groups: cfg.n_group ?? 1,
      topkGroups: cfg.topk_group ?? cfg.n_group ?? 1,
    }
    : undefined;
  if (moe && moe.topK > experts) {
    fail("num_experts_per_tok", `must be at most the number of experts (${experts}), got ${moe.topK}`);
  }
  if (moe && (moe.groups < 1 || experts % moe.groups !== 0 || moe.topkGroups > moe.groups)) {
    fail(
      cfg.n_group !== undefined && cfg.n_group !== null && experts % cfg.n_group !== 0 ? "n_group" : "topk_group",
      `expert groups must divide the ${experts} experts and topk_group must be at most n_group (${moe.groups}), got topk_group ${moe.topkGroups}`,
    );
  }
  const mla: MlaSpec | undefined = cfg.kv_lora_rank
    ? {
      qLoraRank: cfg.q_lora_rank ?? 0,
      kvLoraRank: cfg.kv_lora_rank,
      qkNopeHeadDim: num(cfg, "qk_nope_head_dim", fail),
      qkRopeHeadDim: num(cfg, "qk_rope_head_dim", fail),
      vHeadDim: num(cfg, "v_head_dim", fail),
    }
    : undefined;
  const type = cfg.model_type ?? "";
  const spec: ModelSpec = {
    id,
    family: mla ? "mla_moe" : moe ? "moe" : "dense",
    hidden,
    layers: num(cfg, "num_hidden_layers", fail),
    heads,
    kvHeads,
    headDim: num(cfg, "head_dim", fail, Math.floor(hidden / heads)),
    intermediate: moe && !moe.denseLayers ? (cfg.intermediate_size ?? 0) : num(cfg, "intermediate_size", fail),
    vocab: num(cfg, "vocab_size", fail),
    qkvBias: cfg.attention_bias ?? type === "qwen2",
    qkNorm: type.startsWith("qwen3"),
    tiedEmbeddings: cfg.tie_word_embeddings ?? false,
    maxPositions: cfg.max_position_embeddings ?? undefined,
    moe,
    mla,
    mtpLayers: cfg.num_nextn_predict_layers ?? 0,
  };
  if (spec.layers === 0) fail("num_hidden_layers", "must be positive");
  if (spec.vocab === 0) fail("vocab_size", "must be positive");
  return Object.freeze(spec);
}

/** Parameter counts of one model, split by where they live. */
export interface ParamCounts {
  /** Every parameter (embedding, layers, norms, LM head; not MTP modules). */
  readonly total: number;
  /** Parameters touched per token (routed experts counted top-k only). */
  readonly active: number;
  /** Input embedding table. */
  readonly embedding: number;
  /** Output projection (0 when tied to the embedding). */
  readonly lmHead: number;
  /** Attention projections of one layer (Q, K, V, O with biases and QK-norm). */
  readonly attentionPerLayer: number;
  /** Dense MLP of one layer (gate, up, down). */
  readonly denseMlpPerLayer: number;
  /** Layer norms of one layer. */
  readonly normsPerLayer: number;
}

/** Parameters of one layer's attention block. */
function attentionParams(m: ModelSpec): number {
  const h = m.hidden;
  if (m.mla) {
    const a = m.mla;
    const qHead = a.qkNopeHeadDim + a.qkRopeHeadDim;
    const q = a.qLoraRank > 0 ? h * a.qLoraRank + a.qLoraRank + a.qLoraRank * m.heads * qHead : h * m.heads * qHead;
    const kvA = h * (a.kvLoraRank + a.qkRopeHeadDim) + a.kvLoraRank;
    const kvB = a.kvLoraRank * m.heads * (a.qkNopeHeadDim + a.vHeadDim);
    return q + kvA + kvB + m.heads * a.vHeadDim * h;
  }
  const qDim = m.heads * m.headDim;
  const kvDim = m.kvHeads * m.headDim;
  const bias = m.qkvBias ? qDim + 2 * kvDim : 0;
  const qkNorm = m.qkNorm ? 2 * m.headDim : 0;
  return h * (qDim + 2 * kvDim) + qDim * h + bias + qkNorm;
}

/**
 * Counts parameters from the architecture (MTP modules excluded, as in the
 * published totals).
 *
 * @example Llama-3.1-8B has 8.03 B parameters
 * ```ts
 * import { MODEL_CATALOG, modelSpecFromHf, paramCounts } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const fail = (field: string, detail: string): never => {
 *   throw new Error(`${field}: ${detail}`);
 * };
 * const m = modelSpecFromHf("llama", MODEL_CATALOG["meta-llama/Llama-3.1-8B-Instruct"], fail);
 * const p = paramCounts(m);
 * assert.equal(p.total, 8_030_261_248);
 * assert.equal(p.active, p.total); // dense
 * ```
 */
export function paramCounts(m: ModelSpec): ParamCounts {
  const h = m.hidden;
  const embedding = m.vocab * h;
  const lmHead = m.tiedEmbeddings ? 0 : m.vocab * h;
  const attn = attentionParams(m);
  const dense = 3 * h * m.intermediate;
  const norms = 2 * h;
  let layersTotal = 0;
  let layersActive = 0;
  if (m.moe) {
    const e = m.moe;
    const router = h * e.experts;
    const expert = 3 * h * e.expertIntermediate;
    const shared = 3 * h * e.sharedIntermediate * e.sharedExperts;
    const moeLayers = m.layers - e.denseLayers;
    layersTotal = e.denseLayers * (attn + dense + norms) +
      moeLayers * (attn + norms + router + shared + e.experts * expert);
    layersActive = e.denseLayers * (attn + dense + norms) +
      moeLayers * (attn + norms + router + shared + e.topK * expert);
  } else {
    layersTotal = layersActive = m.layers * (attn + dense + norms);
  }
  const rest = embedding + lmHead + h; // + final norm
  return {
    total: layersTotal + rest,
    active: layersActive + rest,
    embedding,
    lmHead,
    attentionPerLayer: attn,
    denseMlpPerLayer: dense,
    normsPerLayer: norms,
  };
}

/** FLOPs of a forward pass per new token, per query–key pair and per logits row (see {@link forwardFlops}). */
export interface FlopCoefficients {
  /** 2 × active linear parameters (embedding and LM head excluded). */
  readonly perToken: number;
  /** QKᵀ and PV over all layers: 4 × heads × head dim (MLA: 2 × heads × (192 + 128)) × layers. */
  readonly perPair: number;
  /** The LM head: 2 × vocab × hidden. */
  readonly perLogitsRow: number;
}

/** The coefficients of {@link forwardFlops}, which is linear in its counts. */
export function flopCoefficients(m: ModelSpec): FlopCoefficients {
  const p = paramCounts(m);
  const linear = p.active - p.embedding - p.lmHead - m.hidden - m.layers * p.normsPerLayer;
  const perPair = m.mla
    ? 2 * m.heads * (m.mla.qkNopeHeadDim + m.mla.qkRopeHeadDim + m.mla.vHeadDim)
    : 4 * m.heads * m.headDim;
  return { perToken: 2 * linear, perPair: m.layers * perPair, perLogitsRow: 2 * m.vocab * m.hidden };
}

/**
 * FLOPs of one forward pass over `tokens` new tokens that attend to
 * `pairs` query–key pairs in all, producing logits for `logitsRows` rows:
 * 2 × active linear parameters (embedding and LM head excluded) × tokens,
 * plus attention (QKᵀ and PV: 4 × heads × head dim per pair and layer;
 * MLA: 2 × heads × (192 + 128)), plus 2 × vocab × hidden per logits row.
 */
export function forwardFlops(m: ModelSpec, tokens: number, pairs: number, logitsRows = 1): number {
  const c = flopCoefficients(m);
  return c.perToken * tokens + c.perPair * pairs + c.perLogitsRow * logitsRows;
}

/**
 * Values stored in the KV cache per token per layer: 2 × kv heads × head dim
 * for MHA/GQA; the compressed latent plus the rotary key (512 + 64 = 576 for
 * DeepSeek) for MLA.
 */
export function kvValuesPerTokenPerLayer(m: ModelSpec): number {
  if (m.mla) return m.mla.kvLoraRank + m.mla.qkRopeHeadDim;
  return 2 * m.kvHeads * m.headDim;
}

/**
 * KV-cache bytes per token for the whole model on one device (no parallelism).
 *
 * @example KV cache per token of Llama-3.1-8B in BF16
 * ```ts
 * import { kvBytesPerToken, MODEL_CATALOG, modelSpecFromHf } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const fail = (field: string, detail: string): never => {
 *   throw new Error(`${field}: ${detail}`);
 * };
 * const m = modelSpecFromHf("llama", MODEL_CATALOG["meta-llama/Llama-3.1-8B-Instruct"], fail);
 * assert.equal(kvBytesPerToken(m, 2), 32 * 2 * 8 * 128 * 2); // layers × K and V × kv heads × head dim × bytes
 * ```
 */
export function kvBytesPerToken(m: ModelSpec, bytesPerValue: number): number {
  return m.layers * kvValuesPerTokenPerLayer(m) * bytesPerValue;
}
