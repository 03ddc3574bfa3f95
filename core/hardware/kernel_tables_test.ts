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
