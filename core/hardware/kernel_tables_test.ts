import assert from "node:assert/strict";
import { DEVICE_CATALOG } from "./devices.ts";
import { KernelTables } from "./kernel_tables.ts";
import { Kernels } from "./kernels.ts";

const H100 = DEVICE_CATALOG.H100_SXM_80G;
const near = (a: number, b: number, tol: number, what: string) =>
  assert.ok(Math.abs(a / b - 1) <= tol, `${what}: ${a} vs ${b} (±${tol * 100}%)`);

Deno.test("KernelTables exist only for GPUs and engines AIConfigurator measured", () => {
  assert.ok(KernelTables.of("H100_SXM_80G", "vllm"));
  assert.ok(KernelTables.of("A100_SXM_80G", "trtllm"));
  assert.equal(KernelTables.of("MI300X_192G", "vllm"), undefined);
  assert.equal(KernelTables.of("ATLAS_800_A2_376T_64G", "trtllm"), undefined);
  assert.equal(KernelTables.of("constructor", "vllm"), undefined);
});

Deno.test("a small-M FP8 GEMM streams its weights at the fraction vLLM's kernel reaches, not at 0.9", () => {
  const t = KernelTables.of("H100_SXM_80G", "vllm")!;
  const k = new Kernels(H100, t);
  // Llama-3.1-8B gate_up (28672 × 4096) in FP8 at M = 1: 0.79 of HBM bandwidth in the table's summary.
  const time = k.gemm(1, 28672, 4096, 1, "fp8");
  near((28672 * 4096) / time / H100.hbmBandwidth, 0.79, 0.03, "HBM fraction");
  // Llama-3.1-70B's QKV at TP8 (1280 × 8192): 0.26 of HBM bandwidth measured, where the
  // roofline at the catalog's 0.9 plus a 5 µs launch gives 0.37.
  const qkv = k.gemm(1, 1280, 8192, 1, "fp8");
  near((1280 * 8192) / qkv / H100.hbmBandwidth, 0.26, 0.03, "TP8 QKV");
  assert.ok(new Kernels(H100).gemm(1, 1280, 8192, 1, "fp8") < qkv);
  // BF16 at M = 8192 on the same shape: 0.73 of peak.
  near((2 * 8192 * 28672 * 4096) / k.gemm(8192, 28672, 4096, 2, "bf16") / H100.peaks.bf16, 0.73, 0.03, "peak");
  // INT8 is not in the tables: the roofline.
  assert.equal(k.gemm(64, 28672, 4096, 1, "int8"), new Kernels(H100).gemm(64, 28672, 4096, 1, "int8"));
});

Deno.test("decode attention at one KV head per GPU reads the KV cache far below HBM bandwidth at small batch", () => {
  const t = KernelTables.of("H100_SXM_80G", "trtllm")!;
  const k = new Kernels(H100, t);
  // Llama-70B at TP8: 8 query heads, 1 KV head, BF16 KV; batch 8 at 4k context: 0.334 in the grid.
  const bytes = 8 * 4096 * 2 * 1 * 128 * 2;
  near(bytes / k.decodeAttention(0, bytes, 8, 4096, 1, 2) / H100.hbmBandwidth, 0.334, 0.01, "1 KV head");
  // 8 KV heads per GPU (TP1), same batch and context: 0.585.
  const bytes8 = bytes * 8;
  near(bytes8 / k.decodeAttention(0, bytes8, 8, 4096, 8, 2) / H100.hbmBandwidth, 0.585, 0.01, "8 KV heads");
  // Between the layouts (2 KV heads at TP4), between the two.
  const b2 = bytes * 2;
  const f2 = b2 / k.decodeAttention(0, b2, 8, 4096, 2, 2) / H100.hbmBandwidth;
  assert.ok(f2 > 0.334 && f2 < 0.585, String(f2));
});

Deno.test("an engine's custom all-reduce replaces the NCCL-like latency inside a node", () => {
  const v = new Kernels(H100, KernelTables.of("H100_SXM_80G", "vllm")!);
  // vLLM custom all-reduce, 8 GPUs, 8 KiB: 5.11 µs measured (10 µs + bytes/bandwidth without tables);
  // the tables hold 4 and 16 KiB, interpolated in log size.
  near(v.collective("all_reduce", 8, 8192), 5.11e-6, 0.1, "8 KiB");
  assert.ok(new Kernels(H100).collective("all_reduce", 8, 8192) > 1e-5);
  // Across nodes the tables do not apply.
  assert.equal(v.collective("all_reduce", 16, 8192), new Kernels(H100).collective("all_reduce", 16, 8192));
});

const H200 = DEVICE_CATALOG.H200_SXM_141G;
/** DeepSeek-V3/R1 routed experts: hidden 7168, expert intermediate 2048, 256 experts, top-8. */
const dsv3 = (moeTp: number, ep: number) => ({ hidden: 7168, inter: 2048, experts: 256, topK: 8, moeTp, ep });

Deno.test("DeepSeek MoE experts run at the fraction of the weight-streaming roofline TensorRT-LLM's kernel reached", () => {
  const k = new Kernels(H200, KernelTables.of("H200_SXM_141G", "trtllm")!);
  // TP2 × EP4 (trtllm-serve --tp_size 8 --ep_size 4). The benchmark counts tokens per EP rank: its 4-token
  // point is a group of 16 tokens across the 4 ranks, 8 pairs on 8 experts per rank under balanced routing,
  // 8 × 3 × 7168 × 1024 FP8 bytes, measured at 0.474 of HBM bandwidth.
  const bytes = 8 * 3 * 7168 * 1024;
  near(bytes / k.moeExperts(dsv3(2, 4), 16, 8, 32, 1, "fp8")! / H200.hbmBandwidth, 0.474, 0.01, "TP2×EP4, 16 tokens");
  // 4 tokens in the group are 1 per rank: the benchmark's 1-token point, never slower than 16 tokens.
  assert.ok(k.moeExperts(dsv3(2, 4), 4, 8, 8, 1, "fp8")! <= k.moeExperts(dsv3(2, 4), 16, 8, 32, 1, "fp8")!);
  // TP8 × EP1 at 1 token: 8 experts of 3 × 7168 × 256, measured at 0.08 (a 7 MB-per-expert stream is launch-bound).
  const b1 = 8 * 3 * 7168 * 256;
  near(b1 / k.moeExperts(dsv3(8, 1), 1, 8, 8, 1, "fp8")! / H200.hbmBandwidth, 0.08, 0.02, "TP8, 1 token");
  // The roofline without tables is several times faster at small batch.
  const roof = new Kernels(H200);
  assert.equal(roof.moeExperts(dsv3(2, 4), 4, 8, 8, 1, "fp8"), undefined);
  // INT8 weights are not in the tables.
  assert.equal(k.moeExperts(dsv3(2, 4), 4, 8, 8, 1, "int8"), undefined);
});

Deno.test("a split AIConfigurator did not measure takes the nearest one; other MoE shapes the nearest shape", () => {
  const t = KernelTables.of("H200_SXM_141G", "trtllm")!;
  // TP2 × EP8 is not kept: nearest are TP1 × EP8 and TP2 × EP4 (equal log distance; the first listed wins), so
  // TP2 × EP8 runs at TP1 × EP8's fraction of a roofline with half the intermediate per rank.
  const a = t.moe(dsv3(2, 8), 64, "fp8")!;
  const b = t.moe(dsv3(1, 8), 64, "fp8")!;
  near(2 * a, b, 1e-9, "nearest split");
  // Mixtral-8x7B in BF16 (hidden 4096, intermediate 14336, 8 experts, top-2) at TP1, 1 token: its own row (0.659 … ).
  const mixtral = { hidden: 4096, inter: 14336, experts: 8, topK: 2, moeTp: 1, ep: 1 };
  const w = 2 * 3 * 4096 * 14336 * 2;
  const f = w / t.moe(mixtral, 1, "bf16")! / H200.hbmBandwidth;
  assert.ok(f > 0.3 && f < 1, String(f));
});

Deno.test("MLA decode reads the latent cache at the measured fraction of HBM bandwidth, per heads on the GPU", () => {
  const k = new Kernels(H200, KernelTables.of("H200_SXM_141G", "trtllm")!);
  // TP8 (16 heads per GPU), batch 64 at 4k context, BF16 latent cache of 576 values: 0.692 measured.
  const bytes = 64 * 4096 * 576 * 2;
  near(bytes / k.mlaDecodeAttention(0, bytes, 64, 4096, 16, 2, bytes) / H200.hbmBandwidth, 0.692, 0.01, "16 heads");
  // 128 heads per GPU (attention DP or TP1): 0.468.
  near(bytes / k.mlaDecodeAttention(0, bytes, 64, 4096, 128, 2, bytes) / H200.hbmBandwidth, 0.468, 0.01, "128 heads");
  // vLLM 0.14.0's FlashAttention MLA kernel at the same point: 0.358.
  const v = new Kernels(H200, KernelTables.of("H200_SXM_141G", "vllm")!);
  near(bytes / v.mlaDecodeAttention(0, bytes, 64, 4096, 16, 2, bytes) / H200.hbmBandwidth, 0.358, 0.01, "vLLM");
  // Without tables: the roofline, unchanged.
  assert.equal(
    new Kernels(H200).mlaDecodeAttention(1e9, bytes, 64, 4096, 16, 2, bytes),
    new Kernels(H200).attention(1e9, bytes),
  );
  // B200 has no attention-only vLLM MLA table: SGLang's stands in.
  assert.ok(KernelTables.of("B200_SXM_180G", "vllm")!.mlaDecode(64, 4096, 16, 2, bytes));
});
