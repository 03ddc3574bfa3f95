/**
 * The device catalog: every name of the configuration contract, with the
 * facts of `shared/reference/hardware.md`. Peaks are vendor specifications
 * (dense); efficiencies are measured fractions from
 * `shared/reference/calibration.md`, or carried over (marked extrapolated).
 *
 * @module
 */
import type { DeviceSpec } from "./device.ts";

const T = 1e12; // TFLOPS, TB/s
const G = 1e9; // GB/s
const GiB = 2 ** 30;
const MiB = 2 ** 20;
const TiB = 2 ** 40;
const us = 1e-6;

/**
 * Per-kernel fixed costs, seconds. Upstream ServingCast charges 5 µs per
 * matrix op and 2 µs per other op; on A100 the same values explain the
 * batch-1 decode residual of gpt-fast Llama-2-7B (9.53 ms measured − 7.93 ms
 * of weight reads at 1,700 GB/s ≈ 1.6 ms ≈ 32 layers × 31 µs of kernel
 * costs + one step overhead).
 */
const KERNEL = { matmulOpOverhead: 5 * us, otherOpOverhead: 2 * us };

/**
 * Host cost of one engine step (scheduler, input preparation, sampling
 * sync): 0.5 ms, the rest of that gpt-fast batch-1 residual once the kernel
 * costs are taken out (calibration.md §2).
 */
const STEP = 0.5e-3;

/**
 * NVLink collective latency: 10 µs. The per-GPU bandwidth drop of gpt-fast
 * at TP 2/4/8 (calibration.md §2) leaves 7–20 µs per all-reduce once the
 * weight reads and kernel costs are taken out; upstream uses 10 µs on A2/A3.
 */
const NVLINK_LATENCY = 10 * us;

/**
 * Achieved fraction of link bandwidth by large collectives: NCCL all-reduce
 * on 8×H200 reaches 436 GB/s bus bandwidth at 256 MiB and 347 at 64 MiB of
 * 450 (hardware.md); 0.85 sits between them, for the tens-of-MiB messages
 * of prefill steps.
 */
const LINK_EFF = 0.85;

/**
 * Extra latency of a collective that crosses nodes (RDMA): 20 µs. DeepEP's
 * low-latency dispatch of 128 tokens takes 77 µs inside a node (EP8) and
 * 194 µs at EP256 (hardware.md); at 50 GB/s per GPU the extra bytes explain
 * most of the difference, leaving a few tens of µs of RDMA latency.
 */
const RDMA_LATENCY = 20 * us;

const nvidia = (
  d: Omit<
    DeviceSpec,
    "matmulOpOverhead" | "otherOpOverhead" | "stepOverhead" | "collectiveLatency" | "scaleOutLatency" | "devicesPerNode"
  >,
): DeviceSpec => ({
  ...KERNEL,
  stepOverhead: STEP,
  collectiveLatency: NVLINK_LATENCY,
  scaleOutLatency: RDMA_LATENCY,
  devicesPerNode: 8,
  ...d,
});

/**
 * Where no low-precision GEMM was measured, FP8/INT8 reaches 0.9 of the
 * BF16 fraction: the ratio measured on H100 (71% vs 80%, calibration §1).
 */
const LOW_PRECISION_RATIO = 0.71 / 0.8;

/**
 * Ascend profiles keep upstream's meaning: upstream efficiency 0.7 of the
 * matrix peak and 0.6 of HBM (A2/A3), 0.9 / 0.8 (Atlas 350), and a 10 µs
 * (A2/A3) or 5 µs (A5) per-collective cost.
 */
const ascend = (
  name: string,
  tflops: [bf16: number, fp16: number, int8: number, fp8?: number, fp4?: number],
  mem: number,
  hbm: number,
  up: number,
  out: number,
  o: { compute?: number; memory?: number; latency?: number; perNode?: number } = {},
): DeviceSpec => ({
  name,
  memoryBytes: mem,
  hbmBandwidth: hbm,
  peaks: {
    bf16: tflops[0] * T,
    fp16: tflops[1] * T,
    int8: tflops[2] * T,
    fp8: (tflops[3] ?? 0) * T,
    fp4: (tflops[4] ?? 0) * T,
  },
  efficiency: {
    matmul: o.compute ?? 0.7,
    matmulLowPrecision: o.compute ?? 0.7,
    attention: o.compute ?? 0.7,
    memory: o.memory ?? 0.6,
    link: LINK_EFF,
  },
  scaleUpBandwidth: up,
  scaleOutBandwidth: out,
  devicesPerNode: o.perNode ?? 8,
  collectiveLatency: o.latency ?? 10 * us,
  scaleOutLatency: RDMA_LATENCY,
  ...KERNEL,
  stepOverhead: STEP,
  provenance: "upstream ServingCast profile (compute/memory efficiency); kernel and step costs carried over from A100",
  extrapolated: true,
});

const A2_UP = 196 * G;

/**
 * A100's measured factors: matmul 271 of 312 TFLOPS BF16 (calibration §1);
 * attention: FlashAttention-2 forward 50–73% on A100 (§1), mid-range 0.6;
 * memory: gpt-fast's empirical peak of 1,700 of 2,039 GB/s (§2). L40S, with
 * no measurement of its own, carries them over.
 */
const A100_EFFICIENCY = {
  matmul: 0.87,
  matmulLowPrecision: 0.87 * LOW_PRECISION_RATIO,
  attention: 0.6,
  memory: 0.834,
  link: LINK_EFF,
};

/**
 * H100's measured factors: matmul 795 of 989 BF16 (80%) and 1,403 of 1,979
 * FP8 (71%, §1); attention: FlashAttention-3 75% (§1); memory: FlashMLA
 * 3,000 of 3,350 GB/s on H800, the same HBM (§1). H800 (same die) shares them.
 */
const H100_EFFICIENCY = { matmul: 0.8, matmulLowPrecision: 0.71, attention: 0.75, memory: 0.9, link: LINK_EFF };

/**
 * MI300X's achieved fractions, carried over to MI325X (the same CDNA3 die) and MI355X (CDNA4, no measurement yet).
 * matmul: 668–782 of 1,307 BF16 (51–60%, §1), mid-range 0.55. memory: 0.80 of 5.3 TB/s, confirmed on MI300X
 * itself: fitting HBM efficiency beside the host costs to AMD's vLLM decode sweep of Llama-3.1-70B FP8 at TP8,
 * batch 1–128 (scenarios/validation/fit/mi300x-vllm-0.10), returns 0.80 (core/config/calibrated.ts refits it).
 */
const CDNA3_EFFICIENCY = {
  matmul: 0.55,
  matmulLowPrecision: 0.55 * LOW_PRECISION_RATIO,
  attention: 0.5,
  memory: 0.8,
  link: LINK_EFF,
};

/** The software platform of a device, by its catalog name: ROCm (AMD Instinct), Ascend (Huawei, and the test device's Atlas profile), else CUDA. */
export type Platform = "cuda" | "rocm" | "ascend";

/** The platform of a device name (a device file's name too, when it follows the catalog's). */
export function platformOf(deviceName: string): Platform {
  return /^MI\d/i.test(deviceName) ? "rocm" : /^(ATLAS|TEST_DEVICE)/.test(deviceName) ? "ascend" : "cuda";
}

/** Every catalog device by name. */
export const DEVICE_CATALOG: Readonly<Record<string, DeviceSpec>> = Object.freeze({
  TEST_DEVICE: ascend("TEST_DEVICE", [353.9, 353.9, 707.8, 707.8, 1415.6], 64 * GiB, 1.6 * TiB, A2_UP, 50 * G),
  ATLAS_800_A2_376T_64G: ascend("ATLAS_800_A2_376T_64G", [353.9, 376, 752], 64 * GiB, 1.6 * TiB, A2_UP, 25 * G),
  ATLAS_800_A2_313T_64G: ascend("ATLAS_800_A2_313T_64G", [294.9, 313, 626], 64 * GiB, 1.6 * TiB, A2_UP, 25 * G),
  ATLAS_800_A2_280T_64G: ascend("ATLAS_800_A2_280T_64G", [245.8, 280, 560], 64 * GiB, 1.6 * TiB, A2_UP, 25 * G),
  ATLAS_800_A2_280T_64G_PCIE: ascend(
    "ATLAS_800_A2_280T_64G_PCIE",
    [245.8, 280, 560],
    64 * GiB,
    1.6 * TiB,
    64 * G,
    25 * G,
  ),
  ATLAS_800_A2_280T_32G_PCIE: ascend(
    "ATLAS_800_A2_280T_32G_PCIE",
    [245.8, 280, 560],
    32 * GiB,
    0.8 * TiB,
    64 * G,
    25 * G,
  ),
  // A3 dies: 8 chips × 2 dies per node share the 196 GB/s fabric.
  ATLAS_800_A3_752T_128G_DIE: ascend(
    "ATLAS_800_A3_752T_128G_DIE",
    [353.9, 376, 752],
    64 * GiB,
    1.6 * TiB,
    196 * G,
    50 * G,
    { perNode: 16 },
  ),
  ATLAS_800_A3_560T_128G_DIE: ascend(
    "ATLAS_800_A3_560T_128G_DIE",
    [245.8, 280, 560],
    64 * GiB,
    1.6 * TiB,
    196 * G,
    50 * G,
    { perNode: 16 },
  ),
  ATLAS_800_A3_560T_128G_DIE_ROCE: ascend(
    "ATLAS_800_A3_560T_128G_DIE_ROCE",
    [245.8, 280, 560],
    64 * GiB,
    1.6 * TiB,
    196 * G,
    25 * G,
    { perNode: 16 },
  ),
  // Atlas 350 (A5): 3 × 53 GB/s mesh; upstream efficiency 0.9 / 0.8, 5 µs per collective.
  ATLAS_350_425T_112G: ascend(
    "ATLAS_350_425T_112G",
    [378, 378, 756, 756, 1512],
    112 * GiB,
    1.4 * TiB,
    159 * G,
    25 * G,
    {
      compute: 0.9,
      memory: 0.8,
      latency: 5 * us,
    },
  ),
  ATLAS_350_425T_84G: ascend("ATLAS_350_425T_84G", [378, 378, 756, 756, 1512], 84 * GiB, 1.4 * TiB, 159 * G, 25 * G, {
    compute: 0.9,
    memory: 0.8,
    latency: 5 * us,
  }),

  A100_SXM_80G: nvidia({
    name: "A100_SXM_80G",
    memoryBytes: 80 * GiB, // 81,920 MiB as nvidia-smi reports it
    hbmBandwidth: 2.039 * T,
    peaks: { bf16: 312 * T, fp16: 312 * T, fp8: 0, int8: 624 * T, fp4: 0 },
    efficiency: A100_EFFICIENCY,
    scaleUpBandwidth: 300 * G,
    scaleOutBandwidth: 6.25 * G, // AWS p4d
    provenance: "measured on A100: matmul (§1), attention (§1), HBM (§2), kernel and step costs (§2)",
    extrapolated: false,
  }),
  H100_SXM_80G: nvidia({
    name: "H100_SXM_80G",
    memoryBytes: 81559 * MiB,
    hbmBandwidth: 3.35 * T,
    peaks: { bf16: 989 * T, fp16: 989 * T, fp8: 1979 * T, int8: 1979 * T, fp4: 0 },
    efficiency: H100_EFFICIENCY,
    scaleUpBandwidth: 450 * G,
    scaleOutBandwidth: 50 * G,
    hostLinkBandwidth: 55 * G, // PCIe 5 ×16, ~55 GB/s measured host ↔ device on H200 (same link; reference/hardware.md)
    provenance: "measured on H100/H800: matmul, attention, HBM (§1); kernel and step costs carried over from A100",
    extrapolated: true,
  }),
  H800_SXM_80G: nvidia({
    name: "H800_SXM_80G",
    memoryBytes: 81559 * MiB,
    hbmBandwidth: 3.35 * T,
    peaks: { bf16: 989 * T, fp16: 989 * T, fp8: 1979 * T, int8: 1979 * T, fp4: 0 },
    efficiency: H100_EFFICIENCY,
    scaleUpBandwidth: 200 * G, // DeepEP measures ~160 GB/s achieved
    scaleOutBandwidth: 50 * G,
    hostLinkBandwidth: 55 * G, // PCIe 5 ×16, as H100 (~55 GB/s measured on H200; reference/hardware.md)
    provenance: "as H100 (same die); HBM from FlashMLA on H800 (§1)",
    extrapolated: true,
  }),
  H200_SXM_141G: nvidia({
    name: "H200_SXM_141G",
    memoryBytes: 143771 * MiB,
    hbmBandwidth: 4.8 * T,
    peaks: { bf16: 989 * T, fp16: 989 * T, fp8: 1979 * T, int8: 1979 * T, fp4: 0 },
    // FP8 matmul 1,453 of 1,979 (73%, §1) against H100's 71%: BF16 taken as H100's 0.8.
    efficiency: { matmul: 0.8, matmulLowPrecision: 0.73, attention: 0.75, memory: 0.9, link: LINK_EFF },
    scaleUpBandwidth: 450 * G,
    scaleOutBandwidth: 50 * G,
    hostLinkBandwidth: 55 * G, // PCIe 5 ×16: ~55 GB/s measured host ↔ device (reference/hardware.md)
    provenance: "H100 factors (same compute die); FP8 matmul checked on H200 (§1)",
    extrapolated: true,
  }),
  B200_SXM_180G: nvidia({
    name: "B200_SXM_180G",
    memoryBytes: 183359 * MiB,
    hbmBandwidth: 8.0 * T,
    peaks: { bf16: 2250 * T, fp16: 2250 * T, fp8: 4500 * T, int8: 4500 * T, fp4: 9000 * T },
    // matmul: 1,745 of 2,250 BF16 (78%), 3,433 of 4,500 FP8 (76%, §1). HBM: 0.9, confirmed on B200 by
    // AIConfigurator's decode-attention tables (KV read at 0.89 of 8 TB/s once the ~9 µs fixed cost is out).
    // attention: H100's 0.75 carried over; the engines' own prefill kernels measured by AIConfigurator reach
    // 0.51-0.55 of the BF16 peak at 16k tokens, and are used instead when a deployment names its engine.
    efficiency: { matmul: 0.78, matmulLowPrecision: 0.76, attention: 0.75, memory: 0.9, link: LINK_EFF },
    scaleUpBandwidth: 900 * G,
    scaleOutBandwidth: 50 * G,
    provenance:
      "measured matmul on B200 (§1); HBM efficiency confirmed by AIConfigurator's B200 decode-attention tables; attention and kernel costs carried over",
    extrapolated: true,
  }),
  L40S_48G: nvidia({
    name: "L40S_48G",
    memoryBytes: 46068 * MiB,
    hbmBandwidth: 0.864 * T,
    peaks: { bf16: 362 * T, fp16: 362 * T, fp8: 733 * T, int8: 733 * T, fp4: 0 },
    // No matmul measurement: A100's factors are the nearest Ampere/Ada data; GDDR6 taken at A100's 0.834.
    efficiency: A100_EFFICIENCY,
    scaleUpBandwidth: 31 * G, // no NVLink: PCIe Gen4 x16
    scaleOutBandwidth: 12.5 * G,
    hostLinkBandwidth: 31 * G, // PCIe 4 ×16, ~31 GB/s (reference/hardware.md)
    provenance: "no L40S calibration: A100 factors carried over",
    extrapolated: true,
  }),
  MI300X_192G: nvidia({
    name: "MI300X_192G",
    memoryBytes: 192 * GiB,
    hbmBandwidth: 5.3 * T,
    peaks: { bf16: 1307 * T, fp16: 1307 * T, fp8: 2615 * T, int8: 2600 * T, fp4: 0 },
    efficiency: CDNA3_EFFICIENCY,
    scaleUpBandwidth: 7 * 64 * G, // Infinity Fabric: 64 GB/s to each of 7 peers
    scaleOutBandwidth: 50 * G,
    provenance:
      "measured matmul on MI300X (§1); HBM efficiency fitted to a public vLLM decode sweep on MI300X (calibration set mi300x-vllm-0.10); attention assumed below H100's",
    extrapolated: true,
  }),
  // MI325X: the MI300X compute die (CDNA3, 304 CUs) with 256 GB of HBM3E at 6 TB/s; the same dense peaks (BF16
  // 1,307.4, FP8 2,614.9 TFLOPS) and Infinity Fabric (7 links of 128 GB/s both ways: 64 GB/s to each peer).
  // Sources: AMD's MI325X product page as quoted by ROCm's GPU spec table (256 GiB, 304 CUs) and third-party spec
  // sheets (6 TB/s, peaks); efficiencies: MI300X's, no MI325X measurement.
  MI325X_256G: nvidia({
    name: "MI325X_256G",
    memoryBytes: 256 * GiB,
    hbmBandwidth: 6.0 * T,
    peaks: { bf16: 1307.4 * T, fp16: 1307.4 * T, fp8: 2614.9 * T, int8: 2614.9 * T, fp4: 0 },
    efficiency: CDNA3_EFFICIENCY,
    scaleUpBandwidth: 7 * 64 * G,
    scaleOutBandwidth: 50 * G,
    provenance: "MI300X's efficiencies (same CDNA3 die); HBM3E capacity and bandwidth from AMD's specifications",
    extrapolated: true,
  }),
  // MI355X: CDNA4 (256 CUs at 2.4 GHz), 288 GB of HBM3E at 8 TB/s; dense BF16 2,516.6, FP8 5,033.2, MXFP4 10,066.4
  // TFLOPS; 7 Infinity Fabric links of 153 GB/s both ways (76.5 GB/s to each peer). Sources: ROCm's GPU spec table
  // (288 GiB, 256 CUs), AMD's figures as quoted at Hot Chips 2025 and ISSCC 2026; efficiencies carried over from
  // MI300X, no MI355X measurement.
  MI355X_288G: nvidia({
    name: "MI355X_288G",
    memoryBytes: 288 * GiB,
    hbmBandwidth: 8.0 * T,
    peaks: { bf16: 2516.6 * T, fp16: 2516.6 * T, fp8: 5033.2 * T, int8: 5033.2 * T, fp4: 10066.4 * T },
    efficiency: CDNA3_EFFICIENCY,
    scaleUpBandwidth: 7 * 76.5 * G,
    scaleOutBandwidth: 50 * G,
    provenance: "MI300X's efficiencies carried over to CDNA4; capacity, bandwidth and peaks from AMD's specifications",
    extrapolated: true,
  }),
});
