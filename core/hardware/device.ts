/**
 * What the hardware model needs to know about one accelerator.
 *
 * Peak numbers are ceilings (vendor specifications); the efficiency
 * factors say what fraction of a ceiling real kernels reach, and each
 * catalog entry says where its factors come from.
 *
 * @module
 */

/** Peak dense matrix throughput by operand type, FLOP/s (0 = not supported). */
export interface MatrixPeaks {
  /** BF16 peak. */
  readonly bf16: number;
  /** FP16 peak. */
  readonly fp16: number;
  /** FP8 peak. */
  readonly fp8: number;
  /** INT8 peak (OPS). */
  readonly int8: number;
  /** FP4 peak. */
  readonly fp4: number;
}

/** Achieved fractions of the peaks, each in (0, 1]. */
export interface Efficiencies {
  /** Large-M BF16/FP16 GEMM, fraction of the BF16 peak. */
  readonly matmul: number;
  /** Large-M FP8/INT8/FP4 GEMM, fraction of that type's peak. */
  readonly matmulLowPrecision: number;
  /** Prefill (compute-bound) attention, fraction of the BF16 peak. */
  readonly attention: number;
  /** Achieved fraction of HBM bandwidth by streaming kernels. */
  readonly memory: number;
  /** Achieved fraction of link bandwidth by large collectives. */
  readonly link: number;
  /**
   * Achieved fraction of HBM bandwidth by the grouped GEMMs of MoE experts
   * streaming the experts a batch touches, where a software stack's MoE
   * kernels are known to fall short of `memory` (absent: `memory`).
   */
  readonly moeMemory?: number;
  /** Likewise for absorbed MLA decode attention reading the latent cache (absent: `memory`). */
  readonly mlaDecodeMemory?: number;
}

/** One accelerator. Units: bytes, bytes/s, FLOP/s, seconds. */
export interface DeviceSpec {
  /** Catalog name or the device file's `name`. */
  readonly name: string;
  /** Device memory, bytes. */
  readonly memoryBytes: number;
  /** HBM bandwidth, bytes/s. */
  readonly hbmBandwidth: number;
  /** Matrix-unit peaks, FLOP/s. */
  readonly peaks: MatrixPeaks;
  /** Achieved fractions of the peaks. */
  readonly efficiency: Efficiencies;
  /** Per-device scale-up link bandwidth, one direction, bytes/s (inside a node). */
  readonly scaleUpBandwidth: number;
  /** Per-device scale-out bandwidth, one direction, bytes/s (between nodes). */
  readonly scaleOutBandwidth: number;
  /** Devices joined by the scale-up fabric. */
  readonly devicesPerNode: number;
  /** Fixed latency of one collective inside a node, seconds. */
  readonly collectiveLatency: number;
  /** Extra latency of a collective that crosses nodes (RDMA), seconds. */
  readonly scaleOutLatency: number;
  /** Fixed cost of one matrix kernel (launch, tail), seconds. */
  readonly matmulOpOverhead: number;
  /** Fixed cost of one other kernel, seconds. */
  readonly otherOpOverhead: number;
  /** Fixed host cost of one engine step (scheduling, input preparation, sync), seconds. */
  readonly stepOverhead: number;
  /**
   * Host cost per sequence in a step (scheduling, sampling, detokenization,
   * output processing), seconds. No catalog device has a measured value:
   * 0 unless a device file (such as `deno task calibrate`'s) sets it.
   */
  readonly seqOverhead?: number;
  /**
   * Achieved host ↔ device bandwidth of one device, B/s (its PCIe or C2C
   * link): what KV offload loads cached blocks over. Absent: unknown (KV
   * offload then takes the instance's communication_config).
   */
  readonly hostLinkBandwidth?: number;
  /**
   * Latency per request between the client's send and the engine seeing it
   * (API server, tokenization, inter-process hand-off), seconds: it delays
   * each request, not the steps. 0 unless an engine profile or a device
   * file sets it.
   */
  readonly requestOverhead?: number;
  /** Where the efficiency and overhead numbers come from. */
  readonly provenance: string;
  /** True when a factor was carried over from another chip for lack of data. */
  readonly extrapolated: boolean;
}
