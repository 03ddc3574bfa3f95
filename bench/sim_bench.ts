/**
 * Simulator speed: `deno task bench`.
 *
 * The headline case (the foundation issue's target: under 10 s on a
 * 2-core machine): 100,000 requests of 1,000 input / 200 output tokens,
 * Poisson arrivals at 160 req/s, over 8 single-H100 instances of
 * Llama-3.1-8B, least-loaded routing — from YAML to summary.
 *
 * @module
 */
import { runFiles } from "../core/assembly/run.ts";
import type { FileSystem } from "../core/config/load.ts";
import { RooflineCostModel } from "../core/hardware/roofline.ts";
import { tensorParallel } from "../core/hardware/layout.ts";
import { DEVICE_CATALOG } from "../core/hardware/devices.ts";
import { linearQuant } from "../core/hardware/quant.ts";
import { MODEL_CATALOG } from "../core/model/catalog.ts";
import { modelSpecFromHf } from "../core/model/model_spec.ts";
import { HEADLINE_COMMON, HEADLINE_INSTANCES } from "./_headline.ts";

const files: Record<string, string> = { "instances.yaml": HEADLINE_INSTANCES, "common.yaml": HEADLINE_COMMON };
// The same workload as vLLM serves it: the engine profile (vLLM V1: prefix caching on, kernel tables, host costs,
// CUDA-graph padding, 8,192-token budget and 1,024 sequences).
files["common_vllm.yaml"] = files["common.yaml"].replace(
  "serving_config: {max_concurrency: 100000, block_size: 16, max_tokens_budget: 8192}",
  "serving_config: {max_concurrency: 100000, block_size: 16, engine: vllm}",
);
const fs: FileSystem = { readText: (p) => files[p], isDirectory: () => false };

Deno.bench({
  name: "the same with the vLLM engine profile (prefix caching, kernel tables, CUDA graphs)",
  n: 3,
  warmup: 1,
  fn: () => {
    runFiles(["instances.yaml"], "common_vllm.yaml", { fs });
  },
});

let reported = false;
Deno.bench({
  name: "100k requests (1000 in / 200 out, poisson 160 req/s), 8 × H100 Llama-3.1-8B",
  n: 3,
  warmup: 1,
  fn: () => {
    const start = performance.now();
    const out = runFiles(["instances.yaml"], "common.yaml", { fs });
    const wall = (performance.now() - start) / 1000;
    if (!reported) {
      reported = true;
      const steps = out.result.engines.reduce((s, e) => s + e.steps, 0);
      console.log(
        `  ${out.summary.simulatedSeconds.toFixed(0)} simulated s in ${wall.toFixed(2)} wall s = ${
          (out.summary.simulatedSeconds / wall).toFixed(0)
        } simulated s per wall s; ${steps} engine steps (${(steps / wall / 1e6).toFixed(2)} M steps/s)`,
      );
    }
  },
});

const id = "meta-llama/Llama-3.1-70B-Instruct";
const cost = new RooflineCostModel({
  model: modelSpecFromHf(id, MODEL_CATALOG[id], () => {
    throw new Error("catalog");
  }),
  device: DEVICE_CATALOG.H100_SXM_80G,
  layout: tensorParallel(8),
  linear: linearQuant("FP8", 32, DEVICE_CATALOG.H100_SXM_80G),
  lmheadWeightBytes: 2,
  kvBytes: 2,
  host2deviceBandwidth: 0,
  blockSize: 16,
});
const batch = {
  tokens: 2048 + 200,
  seqs: 201,
  logitsRows: 200,
  prefillTokens: 2048,
  prefillPairs: 2048 * 3000,
  prefillContext: 4096,
  decodeSeqs: 200,
  decodeTokens: 200,
  decodeContext: 200 * 3000,
};
Deno.bench("one step-time evaluation (Llama-3.1-70B TP8, mixed batch of 201)", () => {
  cost.stepTime(batch);
});
