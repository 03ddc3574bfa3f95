/**
 * The benches' headline case, shared by bench/sim_bench.ts and
 * bench/profiling_bench.ts: 100,000 requests of 1,000 input / 200 output
 * tokens, Poisson arrivals at 160 req/s, on 8 single-H100 instances of
 * Llama-3.1-8B (BF16), about 627 simulated seconds.
 *
 * @module
 */

/** The instance file. */
export const HEADLINE_INSTANCES = `instance_groups:
  - {num_instances: 8, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: both}
`;

/** The common file. */
export const HEADLINE_COMMON = `model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
load_gen:
  num_requests: 100000
  num_input_tokens: 1000
  num_output_tokens: 200
  request_rate: 160
  arrival_process: poisson
serving_config: {max_concurrency: 100000, block_size: 16, max_tokens_budget: 8192}
`;
