/**
 * Fleet scale (issue 29's table): `deno task bench` runs it with the others.
 *
 * - 8 × H100, Llama-3.1-8B (vLLM profile), 1,000,000 requests of 1,024 + 256
 *   tokens at 100 req/s;
 * - 512 × H100, the same model and lengths, 1,000,000 requests at 6,000 req/s.
 *
 * Each reports its engine steps per wall second and its resident memory per
 * request (the process's, after the run), the figures the README quotes.
 *
 * @module
 */
import { runSources, YamlSource } from "../mod.ts";

/** The case's files: `instances` single-H100 instances, `requests` Poisson requests at `rate`. */
function fleet(instances: number, requests: number, rate: number): [YamlSource, YamlSource] {
  return [
    new YamlSource(
      "instances.yaml",
      `instance_groups: [{num_instances: ${instances}, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: both}]`,
    ),
    new YamlSource(
      "common.yaml",
      "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
        `load_gen: {load_gen_type: fixed_length, num_requests: ${requests}, num_input_tokens: 1024, ` +
        `num_output_tokens: 256, request_rate: ${rate}, arrival_process: poisson}\n` +
        "serving_config: {max_concurrency: 100000000, engine: vllm}\n",
    ),
  ];
}

for (const [instances, rate] of [[8, 100], [512, 6000]] as const) {
  const [i, c] = fleet(instances, 1_000_000, rate);
  let reported = false;
  Deno.bench({
    name: `fleet: ${instances} × H100, 1M requests at ${rate} req/s`,
    n: 1,
    warmup: 0,
    fn: () => {
      const start = performance.now();
      const out = runSources([i], c);
      const wall = (performance.now() - start) / 1000;
      if (reported) return;
      reported = true;
      const steps = out.result.engines.reduce((s, e) => s + e.steps, 0);
      const rss = Deno.memoryUsage().rss;
      console.log(
        `  ${instances} × H100: ${wall.toFixed(1)} s wall, ${(steps / 1e6).toFixed(2)} M engine steps (${
          (steps / wall / 1e6).toFixed(2)
        } M/s), ${(rss / 1e6).toFixed(0)} MB resident (${
          (rss / out.result.requests.count).toFixed(0)
        } bytes per request)`,
      );
    },
  });
}
