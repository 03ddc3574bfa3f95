import assert from "node:assert/strict";
import { DEVICE_CATALOG } from "./devices.ts";
import { sizeMemory } from "./memory.ts";
import { linearQuant } from "./quant.ts";
import type { RooflineCostModel } from "./roofline.ts";
import { catalogCost } from "./_fixtures.ts";
import { decodeBatch, prefillBatch } from "./batch.ts";
import type { StepBreakdown } from "./roofline.ts";
import { KernelTables } from "./kernel_tables.ts";
import type { BatchShape } from "./batch.ts";

function model(id: string, device: string, tp = 1, quant = "DISABLED", graphSizes?: number[]) {
  return catalogCost(id, device, { tp, quant, ...(graphSizes ? { graphSizes } : {}) });
}

const decode = decodeBatch;
const prefill = prefillBatch;

Deno.test("stepTime() breakdown sums to the total", () => {
  const c = model("meta-llama/Llama-3.1-8B-Instruct", "H100_SXM_80G", 2);
  const b = {} as StepBreakdown;
  const t = c.stepTime({
    ...prefill(512),
    decodeSeqs: 8,
    decodeTokens: 8,
    decodeContext: 8000,
    tokens: 520,
    seqs: 9,
    logitsRows: 9,
  }, b);
  const sum = b.linear + b.attention + b.elementwise + b.lmHead + b.communication + b.host;
  assert.ok(Math.abs(sum - t) < 1e-12);
  assert.equal(b.total, t);
  assert.ok(b.communication > 0, "TP2 has all-reduces");
});

Deno.test("stepTime() of batch-1 decode is bound by the weight reads", () => {
  const c = model("meta-llama/Llama-2-7b-hf", "A100_SXM_80G");
  const t = c.stepTime(decode(1, 6));
  const weightRead = c.weightBytesPerDevice / (2.039e12 * 0.834);
  assert.ok(t > weightRead && t < weightRead * 1.3, `step ${t * 1e3} ms vs weight read ${weightRead * 1e3} ms`);
});

Deno.test("stepTime() of a long prefill is bound by compute: ≈ 2 × params × tokens / achieved FLOP/s", () => {
  const c = model("meta-llama/Llama-2-7b-hf", "A100_SXM_80G");
  const t = c.stepTime(prefill(4096));
  const flops = 2 * 6.48e9 * 4096; // linear-layer parameters (no embedding) × tokens
  const ideal = flops / (312e12 * 0.87);
  assert.ok(t > ideal && t < ideal * 1.35, `prefill ${t * 1e3} ms vs GEMM ideal ${ideal * 1e3} ms`);
});

Deno.test("stepTime() grows with context for decode (KV reads)", () => {
  const c = model("meta-llama/Llama-3.1-8B-Instruct", "H100_SXM_80G");
  assert.ok(c.stepTime(decode(64, 8000)) > c.stepTime(decode(64, 500)) * 1.5);
});

Deno.test("stepTime() TP all-reduce bytes: two per layer of tokens × hidden × 2 B", () => {
  const c1 = model("meta-llama/Llama-3.1-70B-Instruct", "H100_SXM_80G", 8);
  const b1 = {} as StepBreakdown;
  const b2 = {} as StepBreakdown;
  c1.stepTime(prefill(4096), b1);
  c1.stepTime(prefill(8192), b2);
  // The bandwidth term doubles with tokens; the latency term stays: Δ = 2 × 80 layers (+1 embedding) × bytes / bw.
  const bytes = 4096 * 8192 * 2;
  const perCollective = ((2 * 7) / 8) * bytes / (450e9 * 0.85);
  const expected = 161 * perCollective;
  assert.ok(Math.abs(b2.communication - b1.communication - expected) / expected < 1e-6);
});

Deno.test("sizeMemory() leaves KV room from weights, activations and runtime", () => {
  const c = model("meta-llama/Llama-3.1-8B-Instruct", "H100_SXM_80G");
  const p = sizeMemory(c, { memoryFraction: 0.9, blockSize: 16, maxTokens: 8192, maxSeqs: 256, pinnedBlocks: null });
  assert.equal(p.kvBlockBytes, 16 * 131072);
  assert.ok(Math.abs(p.weightBytes / 1e9 - 16.06) < 0.01, `weights ${p.weightBytes / 1e9} GB`);
  assert.equal(
    p.kvBlocks,
    Math.floor((p.usableBytes - p.weightBytes - p.activationBytes - p.runtimeBytes) / p.kvBlockBytes),
  );
});

Deno.test("sizeMemory() halves weights per device under TP2", () => {
  const one = model("meta-llama/Llama-3.1-70B-Instruct", "H100_SXM_80G", 1).weightBytesPerDevice;
  const two = model("meta-llama/Llama-3.1-70B-Instruct", "H100_SXM_80G", 2).weightBytesPerDevice;
  assert.ok(Math.abs(two / one - 0.5) < 0.001);
});

Deno.test("linearQuant() falls back where the device lacks the matrix type", () => {
  const q = linearQuant("FP8", 32, DEVICE_CATALOG.A100_SXM_80G);
  assert.equal(q.peak, "bf16");
  assert.equal(q.weightBytes, 1);
  assert.match(q.fallback ?? "", /A100_SXM_80G has no fp8 matrix unit/);
  assert.equal(linearQuant("W4A8_DYNAMIC", 32, DEVICE_CATALOG.TEST_DEVICE).weightBytes, 0.5);
  assert.equal(linearQuant("MXFP4", 32, DEVICE_CATALOG.B200_SXM_180G).peak, "fp4");
});

Deno.test("a decode step inside the CUDA-graph sizes runs the GEMMs of the next captured size; attention stays on the real rows", () => {
  const withGraphs = (graphSizes?: number[]) =>
    model("meta-llama/Llama-3.1-8B-Instruct", "H100_SXM_80G", 1, "DISABLED", graphSizes);
  const c = withGraphs([1, 2, 4, 8, 16, 24, 32]);
  const parts = (cm: RooflineCostModel, seqs: number, context: number) => {
    const o = {} as StepBreakdown;
    cm.stepTime(decode(seqs, context), o);
    return o;
  };
  const a = parts(c, 17, 1024);
  const b = parts(c, 24, 1024);
  const plain = parts(withGraphs(), 17, 1024);
  assert.equal(a.linear, b.linear); // 17 rows run the 24-row graph
  assert.ok(a.attention < b.attention); // the KV of 17 sequences, not 24
  assert.equal(a.elementwise, b.elementwise);
  assert.ok(plain.linear < a.linear && plain.elementwise < a.elementwise); // unpadded: 17 rows
  // Beyond the largest captured size, or with a prefill in the step, nothing is padded.
  assert.equal(parts(c, 40, 1024).linear, parts(withGraphs(), 40, 1024).linear);
});

Deno.test("the padded CUDA-graph shape carries the step's own host share, never a previous call's", () => {
  const c = model("meta-llama/Llama-3.1-8B-Instruct", "H100_SXM_80G", 1, "DISABLED", [1, 2, 4, 8, 16, 24, 32]);
  const first = c.stepTime(decode(17, 1024));
  c.stepTime({ ...decode(17, 1024), hostShare: 0 });
  assert.equal(c.stepTime(decode(17, 1024)), first);
});

Deno.test("the cost model's memos (token-count parts, LM head, decode attention by batch size and context sum) never change a step's time: any order, any history, bit for bit", () => {
  const tables = KernelTables.of("H100_SXM_80G", "vllm");
  assert.ok(tables, "the vLLM tables of H100");
  const fresh = (id: string) => catalogCost(id, "H100_SXM_80G", { kernelTables: tables });
  let seed = 29;
  const draw = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  // Decode steps at few batch sizes, so pairs recur; a shape with the same context sum and batch size but two query
  // tokens per sequence (not remembered); mixed prefill and decode steps.
  const shapes: BatchShape[] = [];
  for (let i = 0; i < 400; i++) {
    const seqs = 1 + draw(6);
    const context = seqs * (1 + draw(300)) + draw(seqs);
    const b = { ...decodeBatch(seqs, 0), decodeContext: context };
    shapes.push(b);
    if (i % 7 === 0) shapes.push({ ...b, decodeTokens: 2 * seqs, tokens: 2 * seqs });
    if (i % 11 === 0) {
      const p = prefillBatch(16 + draw(2000));
      shapes.push({
        ...p,
        decodeSeqs: seqs,
        decodeTokens: seqs,
        decodeContext: context,
        tokens: p.tokens + seqs,
        seqs: p.seqs + seqs,
        logitsRows: p.logitsRows + seqs,
      });
    }
  }
  for (const id of ["meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-32B"]) {
    const forward = fresh(id);
    const times = shapes.map((b) => forward.stepTime(b));
    const backward = fresh(id);
    for (let i = shapes.length - 1; i >= 0; i--) {
      assert.equal(backward.stepTime(shapes[i]), times[i], `${id}: shape ${i} asked after the later ones`);
      assert.equal(fresh(id).stepTime(shapes[i]), times[i], `${id}: shape ${i} asked first`);
    }
  }
});
