/**
 * Fleet scale (issue 29's table): `deno task bench` runs it with the others.
 *
 * - 8 × H100, Llama-3.1-8B (vLLM profile), 1,000,000 requests of 1,024 + 256
 *   tokens at 100 req/s;
 * - 512 × H100, the same model and lengths, 1,000,000 requests at 6,000 req/s,
 *   routed least-loaded (the default) and round robin (engines run ahead);
 * - the compressed diurnal day of `examples/fleet/` (64 × H100, 800,000
 *   requests), whole and as one of its four shards.
 *
 * Each reports its engine steps and events per wall second and its resident
 * memory per request (the process's, after the run), the figures the README
 * quotes.
 *
 * @module
 */
import { runFiles, runSources, YamlSource } from "../mod.ts";
import type { RunOutput } from "../mod.ts";

/** The case's files: `instances` single-H100 instances, `requests` Poisson requests at `rate`, routed by `routing`. */
function fleet(instances: number, requests: number, rate: number, routing = "least_loaded"): [YamlSource, YamlSource] {
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
        `serving_config: {max_concurrency: 100000000, engine: vllm, routing_policy: ${routing}}\n`,
    ),
  ];
}

/** Runs `run` once, timed, and prints its figures under `label`. */
function bench(label: string, run: () => RunOutput): void {
  let reported = false;
  Deno.bench({
    name: `fleet: ${label}`,
    n: 1,
    warmup: 0,
    fn: () => {
      const start = performance.now();
      const out = run();
      const wall = (performance.now() - start) / 1000;
      if (reported) return;
      reported = true;
      const steps = out.result.engines.reduce((s, e) => s + e.steps, 0);
      const requests = out.summary.overall.total_requests;
      // Each request's arrival, the event that sends it and its finish; each step's start and end.
      const events = 3 * requests + 2 * steps;
      const rss = Deno.memoryUsage().rss;
      console.log(
        `  ${label}: ${wall.toFixed(1)} s wall, ${(steps / 1e6).toFixed(2)} M engine steps (${
          (steps / wall / 1e6).toFixed(2)
        } M/s), ~${(events / wall / 1e6).toFixed(1)} M events/s, ${(rss / 1e6).toFixed(0)} MB resident (${
          (rss / requests).toFixed(0)
        } bytes per request)`,
      );
    },
  });
}

for (const [instances, rate] of [[8, 100], [512, 6000]] as const) {
  const [i, c] = fleet(instances, 1_000_000, rate);
  bench(`${instances} × H100, 1M requests at ${rate} req/s`, () => runSources([i], c));
}
{
  // Routed round robin, the engines run ahead of the clock (core/engine/simulator.ts).
  const [i, c] = fleet(512, 1_000_000, 6000, "round_robin");
  bench("512 × H100, 1M requests at 6000 req/s, round robin", () => runSources([i], c));
}

const day = new URL("../examples/fleet/", import.meta.url);
const dayFiles = [new URL("instances.yaml", day).pathname, new URL("common.yaml", day).pathname] as const;
bench("compressed day, 64 × H100, 800k requests", () => runFiles([dayFiles[0]], dayFiles[1]));
bench("compressed day, shard 0/4", () => runFiles([dayFiles[0]], dayFiles[1], { shard: { index: 0, count: 4 } }));
