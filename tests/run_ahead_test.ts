/**
 * Engines running ahead of the clock and the quiet decode step
 * (core/engine/simulator.ts, engine.ts) on the real cost model: the vLLM profile's
 * kernel tables, CUDA-graph padding, prefix caching and phased KV blocks,
 * which the property test's linear cost model does not reach. A run that
 * runs ahead must give the per-request reference's results, bit for bit.
 */
import assert from "node:assert/strict";
import { assemble } from "../core/assembly/assemble.ts";
import { loadConfig } from "../core/config/load.ts";
import { runsAhead, simulate } from "../core/engine/simulator.ts";
import { memoryFs } from "./_helpers.ts";

/**
 * `instances` × H100 (8 unless given) serving Llama-3.1-8B with the vLLM profile, `requests` lognormal chat requests
 * at `rate`, routed by `routing` (round robin unless given).
 */
function fleet(requests: number, rate: number, blocks?: number, instances = 8, routing = "round_robin") {
  const files: Record<string, string> = {
    "i.yaml": `instance_groups: [{num_instances: ${instances}, num_devices_per_instance: 1, ` +
      "device_type: H100_SXM_80G, pd_role: both}]",
    "c.yaml": "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
      `load_gen: {load_gen_type: synthetic, num_requests: ${requests}, seed: 7, arrival: {process: poisson, ` +
      `request_rate: ${rate}}, input_tokens: {dist: lognormal, mean: 1024, std: 512, min: 16, max: 4096}, ` +
      "output_tokens: {dist: lognormal, mean: 256, std: 128, min: 8, max: 1024}}\n" +
      `serving_config: {engine: vllm, max_concurrency: 100000000, routing_policy: ${routing}${
        blocks ? `, num_kv_blocks: ${blocks}` : ""
      }}\n`,
  };
  return assemble(loadConfig(["i.yaml"], "c.yaml", memoryFs(files))).input;
}

Deno.test("running ahead, with the quiet decode step, gives the per-request lockstep results on the vLLM profile", () => {
  // Light load (long quiet runs between requests), and a small KV pool (preemptions, blocks running short).
  for (const [requests, rate, blocks] of [[3000, 40, undefined], [2000, 120, 400]] as const) {
    const input = fleet(requests, rate, blocks);
    assert.ok(runsAhead(input), "round robin, no client limit, no PD: the engines run ahead");
    const ahead = simulate(input);
    // The reference: in lockstep, every request accounted at every step (no lazy cohort, so no quiet step).
    const lockstep = simulate(input, { lockstep: true, lazyDecodeAfter: Infinity });
    assert.deepEqual(ahead.requests, lockstep.requests, "request table");
    assert.deepEqual(ahead.engines, lockstep.engines, "engine counters");
    assert.deepEqual(ahead.itl, lockstep.itl, "inter-token gaps");
    assert.equal(ahead.endTime, lockstep.endTime, "end time");
    assert.equal(ahead.requests.finish.filter((t) => t > 0).length, requests);
    if (blocks) assert.ok(ahead.engines.some((e) => e.preemptions > 0), "the small pool preempts");
  }
  // A client limit that binds couples the engines: lockstep.
  const limited = fleet(100, 40);
  assert.equal(runsAhead({ ...limited, workload: { ...limited.workload, maxConcurrency: 10 } }), false);
  assert.equal(runsAhead({ ...limited, routing: "least_loaded" }), false);
});

Deno.test("in lockstep, an engine steps on before other engines' events of its instant: the results of the queue's order", () => {
  // 80 engines at 1,000 req/s: many step ends share their microsecond with another engine's event. Without hooks they
  // step on at once (Simulation's #alone); with a step hook every engine steps in the queue's order.
  const cases = [
    ["least_loaded", fleet(4000, 1000, undefined, 80, "least_loaded")],
    ["least_kv, small pools", fleet(3000, 800, 300, 80, "least_kv")],
  ] as const;
  for (const [label, input] of cases) {
    // And with a client limit that binds: a finish elsewhere sends a waiting request at the instant.
    for (const maxConcurrency of [input.workload.maxConcurrency, 400]) {
      const inp = { ...input, workload: { ...input.workload, maxConcurrency } };
      const free = simulate(inp);
      const ordered = simulate(inp, { onStep: () => {} });
      const what = `${label}, max_concurrency ${maxConcurrency}`;
      assert.deepEqual(free.requests, ordered.requests, `${what}: request table`);
      assert.deepEqual(free.engines, ordered.engines, `${what}: engine counters`);
      assert.deepEqual(free.itl, ordered.itl, `${what}: inter-token gaps`);
      assert.equal(free.endTime, ordered.endTime, `${what}: end time`);
    }
  }
});

Deno.test("a pool of more than 64 engines is routed by its load tree: the choices of a scan of the pool", () => {
  // Smaller pools are scanned (SCAN_UP_TO in core/engine/simulator.ts), so the property test's small deployments do
  // not reach the tree; 80 engines do, under both routers that read the engines' loads (a small pool for least_kv).
  for (const [routing, blocks] of [["least_loaded", undefined], ["least_kv", 300]] as const) {
    const input = fleet(4000, 1000, blocks, 80, routing);
    const tree = simulate(input);
    const scan = simulate(input, { routeByScan: true });
    assert.deepEqual(tree.requests, scan.requests, `${routing}: request table`);
    assert.deepEqual(tree.engines, scan.engines, `${routing}: engine counters`);
    assert.deepEqual(tree.itl, scan.itl, `${routing}: inter-token gaps`);
    // The choices spread over the pool and follow its loads: every engine serves.
    assert.ok(tree.engines.every((e) => e.served > 0), `${routing}: every engine serves`);
  }
});
