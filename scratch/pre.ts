import { runFiles } from "../core/run.ts";
const files: Record<string, string> = {
  i: `instance_groups:\n  - {num_instances: 1, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: both}\n`,
  c: `model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: FP8, quantize_attention_action: FP8}\nload_gen: {num_requests: 1000, num_input_tokens: 20000, num_output_tokens: 2000, request_rate: .inf}\nserving_config: {block_size: 16, max_tokens_budget: 8192, max_concurrency: 1000, max_num_seqs: 2048, kv_cache_memory_fraction: 0.95}\n`,
};
const out = runFiles(["i"], "c", { fs: { readText: (p) => files[p], isDirectory: () => false } });
console.log(
  out.summary.preemptions,
  out.plan.groups[0].memory.kvTokens,
  out.result.engines[0].batchedSeqs / out.result.engines[0].steps,
);
