/**
 * Published acceptance rates of speculative decoding, per draft position:
 * the probability that draft i is accepted given drafts 1 … i − 1 were
 * (EAGLE's "n-α"). `serving_config.speculative_config` takes them when it
 * gives no `acceptance_rates` of its own; a run says which it used.
 *
 * @module
 */

/** One published measurement of per-position acceptance. */
export interface PublishedAcceptance {
  /** `serving_config.speculative_config.method`. */
  readonly method: "eagle" | "ngram";
  /** The catalog models it stands for (exact ids; empty: the method's default for any model). */
  readonly models: readonly string[];
  /** Conditional acceptance of draft positions 1, 2, … */
  readonly rates: readonly number[];
  /** What was measured, and where it was published. */
  readonly source: string;
}

const EAGLE_TABLE = "Li et al., EAGLE: Speculative Sampling Requires Rethinking Feature Uncertainty (ICML 2024; " +
  "arXiv 2401.15077v3), Table 2: MT-bench, temperature 0, chain drafts";

/**
 * The rates: EAGLE's paper for its models (its Table 3 for Mixtral), the
 * median of its Table 2's six dense models position by position for any
 * other model; n-gram lookup from vLLM's benchmark of code editing.
 */
export const PUBLISHED_ACCEPTANCE: readonly PublishedAcceptance[] = [
  {
    method: "eagle",
    models: ["meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-7b-chat-hf"],
    rates: [0.76, 0.69, 0.67, 0.68, 0.68],
    source: `${EAGLE_TABLE}, LLaMA2-Chat 7B`,
  },
  {
    method: "eagle",
    models: ["meta-llama/Llama-2-70b-hf", "meta-llama/Llama-2-70b-chat-hf"],
    rates: [0.75, 0.69, 0.65, 0.64, 0.64],
    source: `${EAGLE_TABLE}, LLaMA2-Chat 70B`,
  },
  {
    method: "eagle",
    models: ["mistralai/Mixtral-8x7B-Instruct-v0.1", "mistralai/Mixtral-8x7B-v0.1"],
    rates: [0.67, 0.62, 0.61, 0.64, 0.63],
    source: "Li et al., EAGLE (ICML 2024; arXiv 2401.15077v3), Table 3: Mixtral 8x7B Instruct, MT-bench, temperature 0",
  },
  {
    // Vicuna 7B/13B/33B and LLaMA2-Chat 7B/13B/70B: 0.79 0.79 0.74 0.76 0.77 0.75 → 0.765, and so on.
    method: "eagle",
    models: [],
    rates: [0.765, 0.69, 0.68, 0.69, 0.675],
    source: `${EAGLE_TABLE}, the median of its six models (Vicuna 7B/13B/33B, LLaMA2-Chat 7B/13B/70B) per position`,
  },
  {
    // Printed as shares of all drafts accepted at each position (0.69, 0.57, 0.50, 0.45, 0.42); each divided by the one
    // before it here: the conditional rate.
    method: "ngram",
    models: [],
    rates: [0.69, 0.826, 0.877, 0.9, 0.933],
    source: "vLLM PR #24344 (benchmarks of ngram speculation): InstructCoder code edits, 1,000 prompts, 5 draft " +
      "tokens, prompt_lookup_min 2 and max 5, temperature 0 (mean acceptance length 3.63); chat finds far fewer " +
      "n-gram matches (prompt lookup on MT-bench: 1.63 tokens per step, EAGLE-3's paper, Table 1)",
  },
];

/** The published rates for `method` on model `id`: its own entry, else the method's default. */
export function publishedAcceptance(method: "eagle" | "ngram", id: string): PublishedAcceptance {
  const own = PUBLISHED_ACCEPTANCE.find((p) => p.method === method && p.models.includes(id));
  return own ?? PUBLISHED_ACCEPTANCE.find((p) => p.method === method && p.models.length === 0)!;
}
