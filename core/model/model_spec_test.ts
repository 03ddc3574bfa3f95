import assert from "node:assert/strict";
import { MODEL_CATALOG } from "./catalog.ts";
import { forwardFlops, kvBytesPerToken, modelSpecFromHf, paramCounts } from "./model_spec.ts";

const spec = (id: string) => modelSpecFromHf(id, MODEL_CATALOG[id], (f, d) => assert.fail(`${f}: ${d}`));
const billions = (n: number) => Math.round(n / 1e7) / 100;

Deno.test("paramCounts() matches published totals for dense models", () => {
  assert.equal(billions(paramCounts(spec("meta-llama/Llama-3.1-8B-Instruct")).total), 8.03);
  assert.equal(billions(paramCounts(spec("meta-llama/Llama-3.1-70B-Instruct")).total), 70.55);
  assert.equal(billions(paramCounts(spec("Qwen/Qwen3-32B")).total), 32.76);
  assert.equal(billions(paramCounts(spec("meta-llama/Llama-2-7b-hf")).total), 6.74);
});

Deno.test("paramCounts() splits total and active parameters of MoE models", () => {
  const mixtral = paramCounts(spec("mistralai/Mixtral-8x7B-Instruct-v0.1"));
  assert.equal(billions(mixtral.total), 46.7);
  assert.equal(billions(mixtral.active), 12.88);
  const ds = paramCounts(spec("deepseek-ai/DeepSeek-V3"));
  assert.equal(Math.round(ds.total / 1e9), 671);
  assert.ok(Math.abs(ds.active / 1e9 - 37) < 1, `DeepSeek-V3 active ${ds.active / 1e9} B`);
});

Deno.test("paramCounts() counts Llama-3.1-8B layer by layer", () => {
  const p = paramCounts(spec("meta-llama/Llama-3.1-8B-Instruct"));
  // Q and O: 4096 × 4096 each; K and V: 4096 × 1024 each.
  assert.equal(p.attentionPerLayer, 2 * 4096 * 4096 + 2 * 4096 * 1024);
  assert.equal(p.denseMlpPerLayer, 3 * 4096 * 14336);
  assert.equal(p.embedding, 128256 * 4096);
  assert.equal(p.lmHead, 128256 * 4096);
});

Deno.test("kvBytesPerToken() is 2 × layers × kv heads × head dim × bytes for GQA", () => {
  assert.equal(kvBytesPerToken(spec("meta-llama/Llama-3.1-8B-Instruct"), 2), 131072);
  assert.equal(kvBytesPerToken(spec("meta-llama/Llama-2-7b-hf"), 2), 2 * 32 * 32 * 128 * 2);
  assert.equal(kvBytesPerToken(spec("Qwen/Qwen3-32B"), 1), 2 * 64 * 8 * 128);
});

Deno.test("kvBytesPerToken() stores 576 values per layer for MLA", () => {
  assert.equal(kvBytesPerToken(spec("deepseek-ai/DeepSeek-V3"), 2), 61 * 576 * 2);
});

Deno.test("modelSpecFromHf() reports the missing field", () => {
  assert.throws(
    () =>
      modelSpecFromHf("x", { hidden_size: 64, num_attention_heads: 4 }, (f, d) => {
        throw new Error(`${f}: ${d}`);
      }),
    /num_hidden_layers: missing required field/,
  );
});

Deno.test("modelSpecFromHf() rejects KV heads that do not divide the heads", () => {
  assert.throws(
    () =>
      modelSpecFromHf("x", { ...MODEL_CATALOG["meta-llama/Llama-3.1-8B-Instruct"], num_key_value_heads: 5 }, (f, d) => {
        throw new Error(`${f}: ${d}`);
      }),
    /num_key_value_heads: must divide num_attention_heads \(32\), got 5/,
  );
});

Deno.test("forwardFlops() of a 1,000-token Llama-3.1-8B prefill is 2 × params × tokens plus attention", () => {
  const m = spec("meta-llama/Llama-3.1-8B-Instruct");
  const linear = 2 * 6_979_321_856 * 1000; // 8.03 B − embedding − LM head − norms
  const attention = 4 * 32 * 32 * 128 * ((1000 * 1001) / 2) * 1; // per layer: 4 × heads × head dim × pairs
  const lmHead = 2 * 128256 * 4096;
  assert.equal(forwardFlops(m, 1000, (1000 * 1001) / 2), linear + attention + lmHead);
  assert.equal(Math.round(forwardFlops(m, 1000, (1000 * 1001) / 2) / 1e9), 14222);
});
