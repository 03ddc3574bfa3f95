import { MODEL_CATALOG, modelSpecFromHf } from "./core/model/mod.ts";
import { DEVICE_CATALOG, linearQuant, planMemory, RooflineCostModel } from "./core/hardware/mod.ts";
import { simulate } from "./core/engine/mod.ts";
const f = (a: string, b: string) => {
  throw new Error(a + b);
};
const id = "meta-llama/Llama-3.1-8B-Instruct";
const model = modelSpecFromHf(id, MODEL_CATALOG[id], f);
const device = DEVICE_CATALOG["H100_SXM_80G"];
const cost = new RooflineCostModel({
  model,
  device,
  layout: { tp: 1, mlpTp: 1, lmheadTp: 1, dcp: 1 },
  linear: linearQuant("DISABLED", 32, device),
  lmheadWeightBytes: 2,
  kvBytes: 2,
  host2deviceBandwidth: 0,
  blockSize: 128,
});
const mem = planMemory(cost, {
  memoryFraction: 0.9,
  blockSize: 128,
  maxTokens: 8192,
  maxSeqs: 256,
  pinnedBlocks: null,
});
const engines = Array.from(
  { length: 8 },
  (_, i) => ({
    label: `g0/${i}/dp0`,
    group: 0,
    cost,
    kvBlocks: mem.kvBlocks,
    blockSize: 128,
    maxTokens: 8192,
    maxSeqs: 256,
    chunkedPrefill: true,
    maxModelLen: 131072,
  }),
);
const rate = Number(Deno.args[0] ?? 100);
const t0 = performance.now();
const res = simulate({
  engines,
  workload: {
    numRequests: 100000,
    inputTokens: 1000,
    outputTokens: 200,
    arrival: { rate, process: "poisson", cv: 1 },
    maxConcurrency: 100000,
    seed: 0,
  },
  routing: "least_loaded",
});
const t1 = performance.now();
const steps = res.engines.reduce((s, e) => s + e.steps, 0);
console.log(
  "wall",
  ((t1 - t0) / 1e3).toFixed(2),
  "s; sim",
  (res.endTime / 1e6).toFixed(1),
  "s; steps",
  steps,
  "mean batch",
  (res.engines.reduce((s, e) => s + e.batchedSeqs, 0) / steps).toFixed(1),
  "preempt",
  res.engines.reduce((s, e) => s + e.preemptions, 0),
);
let ttft = 0;
for (let i = 0; i < res.requests.count; i++) ttft += res.requests.firstToken[i] - res.requests.send[i];
console.log(
  "mean ttft ms",
  ttft / res.requests.count / 1e3,
  "mean e2e",
  res.requests.finish.reduce((s, x, i) => s + x - res.requests.send[i], 0) / res.requests.count / 1e6,
);
