/**
 * Engine defaults and KV memory against the engines' own source: each
 * number is computed by hand from the cited lines (the audit of issue 24)
 * and compared with what the plan gives.
 */
import assert from "node:assert/strict";
import { planOne } from "./_helpers.ts";

const GiB = 2 ** 30;

function plan(chip: string, devices: number, model: string, quant: string, serving: string) {
  const p = planOne(chip, devices, model, quant, serving);
  const g = p.groups[0];
  return { engine: p.input.engines[0], memory: g.memory, supplied: g.serving.profile?.supplied ?? {} };
}

const LLAMA8 = "meta-llama/Llama-3.1-8B-Instruct";
/** Llama-3.1-8B's KV per token: 32 layers × 8 KV heads × 128 × (K and V) × 2 bytes. */
const LLAMA8_KV = 32 * 8 * 128 * 2 * 2;

Deno.test("vLLM V1 (0.8): the API server's budget is 8,192 tokens and 1,024 sequences on a device of 70 GiB or more, else 2,048 and 256", () => {
  // vllm-project/vllm@20e489e vllm/engine/arg_utils.py L1602-L1634 (usage context OPENAI_API_SERVER).
  const h100 = plan("H100_SXM_80G", 1, LLAMA8, "DISABLED", "engine: vllm, engine_version: 0.8.5");
  assert.equal(h100.engine.maxTokens, 8192);
  assert.equal(h100.engine.maxSeqs, 1024);
  const l40s = plan("L40S_48G", 1, LLAMA8, "DISABLED", "engine: vllm, engine_version: 0.8.5");
  assert.equal(l40s.engine.maxTokens, 2048);
  assert.equal(l40s.engine.maxSeqs, 256);
  // V1 always chunks prefills, mixes them with decodes and caches prefixes (arg_utils.py _set_default_args_v1).
  assert.ok(h100.engine.chunkedPrefill && h100.engine.mixPrefillDecode && h100.engine.prefixCaching);
  // KV: utilization 0.9 of the device, less weights, peak activations and runtime; 16-token pages of
  // 16 × LLAMA8_KV bytes, floor(bytes / page) blocks (v1/core/kv_cache_utils.py L617-L622).
  const m = h100.memory;
  const kv = 0.9 * m.deviceBytes - m.weightBytes - m.activationBytes - m.runtimeBytes;
  assert.equal(m.kvBlockBytes, 16 * LLAMA8_KV);
  assert.equal(m.kvBlocks, Math.floor(kv / (16 * LLAMA8_KV)));
});

Deno.test("vLLM 0.7.3 with an MLA model forces chunked prefill and prefix caching off: whole prompts in prefill-only steps", () => {
  // vllm-project/vllm@ed6e907 vllm/config.py L3327-L3335: "MLA is enabled; forcing chunked prefill and prefix caching
  // to be disabled"; the budget is then max(max_model_len, 2,048): DeepSeek-R1's 163,840.
  const r = plan("H200_SXM_141G", 8, "deepseek-ai/DeepSeek-R1", "FP8", "engine: vllm, engine_version: 0.7.3");
  assert.equal(r.engine.chunkedPrefill, false);
  assert.equal(r.engine.prefixCaching, false);
  assert.equal(r.engine.mixPrefillDecode, false);
  assert.equal(r.engine.maxTokens, 163_840);
  // A dense model on the same build keeps chunked prefill at 2,048 tokens.
  const dense = plan("H100_SXM_80G", 1, LLAMA8, "DISABLED", "engine: vllm, engine_version: 0.7.3");
  assert.equal(dense.engine.chunkedPrefill, true);
  assert.equal(dense.engine.maxTokens, 2048);
});

Deno.test("MLA's latent cache: 64-token pages on CUDA from vLLM 0.8, the full latent on every TP rank", () => {
  // vllm/platforms/cuda.py L141-L158: FlashMLA takes block size 64. DeepSeek-V3/R1: 61 layers × (512 latent + 64 rope)
  // values × 2 bytes = 70,272 bytes a token, replicated across TP (models/deepseek_v2.py L440-L448): a page of 64 tokens
  // is 4,497,408 bytes on each of the 8 ranks, and the engine's capacity in tokens does not grow with TP.
  const r = plan("H200_SXM_141G", 8, "deepseek-ai/DeepSeek-R1", "FP8", "engine: vllm, engine_version: 0.10.0");
  assert.equal(r.engine.blockSize, 64);
  assert.equal(r.memory.kvBlockBytes, 64 * 61 * 576 * 2);
  assert.equal(r.memory.kvBlockBytes, 4_497_408);
  // ROCm has no FlashMLA: 16-token blocks.
  const rocm = plan("MI300X_192G", 8, "deepseek-ai/DeepSeek-R1", "FP8", "engine: vllm, engine_version: 0.10.0");
  assert.equal(rocm.engine.blockSize, 16);
});

Deno.test("SGLang: KV is mem_fraction_static of the device less the weights (activations sit in the rest), 4,096 running requests", () => {
  // sgl-project/sglang@84022c0 server_args.py L224-L238 (mem_fraction_static 0.88 at TP1) and
  // model_runner.py L689-L711: KV = free after weights − total × (1 − fraction) = fraction × total − weights.
  const r = plan("H100_SXM_80G", 1, LLAMA8, "DISABLED", "engine: sglang, engine_version: 0.4.2");
  const m = r.memory;
  assert.equal(r.supplied.kv_cache_memory_fraction, 0.88);
  assert.ok(Math.abs(m.kvBytes - (0.88 * m.deviceBytes - m.weightBytes)) < 1);
  // H100 (85,520,809,984 B) and 16,060,260,352 B of BF16 weights: 59,198,052,433.9 B, 451,645 token slots of
  // 131,072 B, taken in 16-token blocks: 28,227 blocks.
  assert.equal(Math.floor(m.kvBytes / LLAMA8_KV), 451_645);
  assert.equal(m.kvBlocks, 28_227);
  // The running-request cap: min(max_total_tokens / 2, the request pool of up to 4,096) (scheduler.py).
  assert.equal(r.engine.maxSeqs, 4096);
  // Prefill-only steps (scheduler.py L1156-L1166: a batch with a prefill runs no decodes).
  assert.equal(r.engine.mixPrefillDecode, false);
});

Deno.test("TensorRT-LLM: KV is 0.9 of the memory free after the model loads, in 32-token blocks", () => {
  // NVIDIA/TensorRT-LLM kvCacheManager.cpp: finalFreeMem × freeMemFraction (0.9); tokens_per_block 32.
  const r = plan("H100_SXM_80G", 1, LLAMA8, "DISABLED", "engine: trtllm, engine_version: 1.0.0");
  const m = r.memory;
  const free = m.deviceBytes - m.weightBytes - m.activationBytes - m.runtimeBytes;
  assert.ok(Math.abs(m.kvBytes - 0.9 * free) < 1);
  assert.equal(r.engine.blockSize, 32);
  assert.equal(m.kvBlocks, Math.floor((0.9 * free) / (32 * LLAMA8_KV)));
  // 80 GiB less 20 GiB loaded: 54 GiB of KV, where 0.9 of the device less the same 20 GiB would leave 52.
  assert.equal(0.9 * (80 - 20), 54);
  assert.ok(m.kvBytes > 0.9 * m.deviceBytes - (m.weightBytes + m.activationBytes + m.runtimeBytes));
  assert.ok(m.kvBytes / GiB > 55 && m.kvBytes / GiB < 56, `${m.kvBytes / GiB} GiB`);
});
