/**
 * Quantization schemes: how many bytes a weight or a KV value takes, and
 * which matrix-unit throughput a linear layer runs at.
 *
 * @module
 */
import type { DeviceSpec, MatrixPeaks } from "./device.ts";

/** How the linear layers are stored and computed. */
export interface LinearQuant {
  /** Bytes per weight (scales included). */
  readonly weightBytes: number;
  /** Which matrix peak the GEMMs run at. */
  readonly peak: keyof MatrixPeaks;
  /** Set when the device lacks the scheme's matrix type and a slower one is used. */
  readonly fallback?: string;
}

/** Bytes per weight and compute type of each upstream `quantize_linear_action`. */
export function linearQuant(action: string, mxfp4GroupSize: number, device: DeviceSpec): LinearQuant {
  const pick = (wanted: (keyof MatrixPeaks)[], weightBytes: number): LinearQuant => {
    const peak = wanted.find((k) => device.peaks[k] > 0) ?? "bf16";
    return peak === wanted[0]
      ? { weightBytes, peak }
      : { weightBytes, peak, fallback: `${device.name} has no ${wanted[0]} matrix unit: ${action} runs at ${peak}` };
  };
  switch (action) {
    case "DISABLED":
      return { weightBytes: 2, peak: "bf16" };
    case "W8A16_STATIC":
    case "W8A16_DYNAMIC":
      return { weightBytes: 1, peak: "bf16" }; // weight-only: dequantized to BF16 in the kernel
    case "W8A8_STATIC":
    case "W8A8_DYNAMIC":
      return pick(["int8"], 1);
    case "W4A8_STATIC":
    case "W4A8_DYNAMIC":
      return pick(["int8"], 0.5);
    case "FP8":
      return pick(["fp8", "bf16"], 1);
    case "MXFP4":
      // 4-bit values plus one 8-bit shared exponent per group.
      return pick(["fp4", "fp8", "bf16"], 0.5 + 1 / mxfp4GroupSize);
    default:
      throw new RangeError(`unknown quantize_linear_action ${action}`);
  }
}

/** Bytes per KV-cache value for `quantize_attention_action`. */
export function kvValueBytes(action: string): number {
  return action === "DISABLED" ? 2 : 1;
}
