/**
 * What a launch configuration needs to know of a planned deployment: the
 * model, the layout of an instance, and the serving settings it was
 * simulated with (after the engine profile filled in what the file left
 * out). The planner records them for every planned candidate, so that a
 * plan merged from shards writes the same files.
 *
 * @module
 */
import type { AssembledRun } from "../assembly/assemble.ts";
import { maxLength } from "../workload/lengths.ts";

/** The settings of a planned deployment a launch configuration sets. */
export interface LaunchSettings {
  /** The model's Hugging Face name (`model_config.name`). */
  readonly model: string;
  /** The engine profile the plan simulated (`serving_config.engine`), if any. */
  readonly engine?: string;
  /** Tensor-parallel size of attention (`parallel_config.tp_size`). */
  readonly tp: number;
  /** Data-parallel attention ranks per instance (`parallel_config.dp_size`). */
  readonly dp: number;
  /** Expert-parallel size of the MoE layers (1: none). */
  readonly ep: number;
  /** Most sequences in a batch (`serving_config.max_num_seqs`). */
  readonly maxNumSeqs: number;
  /** Most tokens in a step (`serving_config.max_tokens_budget`). */
  readonly maxTokensBudget: number;
  /** Tokens per KV block (`serving_config.block_size`). */
  readonly blockSize: number;
  /** Share of device memory the engine may use (`serving_config.kv_cache_memory_fraction`). */
  readonly memoryFraction: number;
  /** `serving_config.enable_prefix_caching`. */
  readonly prefixCaching: boolean;
  /** `serving_config.enable_chunked_prefill`. */
  readonly chunkedPrefill: boolean;
  /** The longest request the workload sends: its longest prompt plus its longest answer, tokens. */
  readonly maxModelLen: number;
  /** KV-cache dtype (`model_config.quantize_attention_action`: DISABLED = the model's 16-bit, INT8, FP8). */
  readonly kvDtype: string;
  /** Weight quantization (`model_config.quantize_linear_action`). */
  readonly linearQuant: string;
  /** MTP draft tokens per step (`model_config.num_mtp_tokens`; 0: no speculation). */
  readonly mtpTokens: number;
  /** EAGLE or n-gram speculation (`serving_config.speculative_config`). */
  readonly speculative?: {
    readonly method: "eagle" | "ngram";
    readonly tokens: number;
    /** The EAGLE draft model, when given. */
    readonly draftModel?: string;
  };
}

/** The launch settings of an assembled run (its first instance group's). */
export function launchSettings(run: AssembledRun): LaunchSettings {
  const g = run.groups[0];
  const sc = g.serving.serving;
  const mc = run.config.common.model_config;
  const sp = run.config.common.serving_config.speculative_config;
  const w = run.input.workload;
  const classes = w.classes ?? [{ input: w.input, output: w.output }];
  return {
    model: mc.name,
    ...(sc.engine ? { engine: sc.engine } : {}),
    tp: g.layout.tp,
    dp: g.layout.dp,
    ep: g.layout.ep,
    maxNumSeqs: sc.max_num_seqs,
    maxTokensBudget: sc.max_tokens_budget,
    blockSize: sc.block_size,
    memoryFraction: sc.kv_cache_memory_fraction,
    prefixCaching: sc.enable_prefix_caching,
    chunkedPrefill: sc.enable_chunked_prefill,
    maxModelLen: Math.max(...classes.map((c) => maxLength(c.input) + maxLength(c.output))),
    kvDtype: mc.quantize_attention_action,
    linearQuant: mc.quantize_linear_action,
    mtpTokens: mc.num_mtp_tokens,
    ...(sp
      ? {
        speculative: {
          method: sp.method,
          tokens: sp.num_speculative_tokens,
          ...(sp.draft_model ? { draftModel: sp.draft_model } : {}),
        },
      }
      : {}),
  };
}
