/**
 * The device file: a YAML description of an accelerator that is not in the
 * catalog, named by path in `device_type`. Units are in the key names.
 *
 * ```yaml
 * name: MY_ACCELERATOR          # optional; default: the file name
 * memory_gib: 80                # required
 * hbm_bandwidth_tb_s: 3.35      # required, TB/s (1e12 B/s)
 * tflops: {bf16: 989, fp8: 1979, int8: 1979}   # bf16 required; fp16 defaults to bf16; others 0 = absent
 * efficiency: {matmul: 0.8, matmul_low_precision: 0.71, attention: 0.75, memory: 0.9, link: 0.85}
 * scale_up_bandwidth_gb_s: 450  # per device, one direction, inside a node
 * scale_out_bandwidth_gb_s: 50  # per device, one direction, between nodes
 * devices_per_node: 8
 * collective_latency_us: 10
 * scale_out_latency_us: 20
 * matmul_op_overhead_us: 5
 * other_op_overhead_us: 2
 * step_overhead_us: 500         # host cost per engine step
 * seq_overhead_us: 0            # host cost per sequence in a step (sampling, detokenization); 0 = not modelled
 * request_overhead_us: 0        # latency per request before the engine sees it (API server, tokenization); 0 = none
 * host_link_bandwidth_gb_s: 55  # optional: achieved host ↔ device bandwidth (PCIe, C2C), what KV offload loads over
 * ```
 *
 * @module
 */
import { z } from "zod";
import type { DeviceSpec } from "../hardware/device.ts";
import { describeValue } from "./errors.ts";
import { fraction, mapping, positiveInt } from "./schema.ts";

/**
 * A number in [min, max] (min > 0 excludes 0 and below): a device file's
 * values are bounded so that a typo cannot make a step infinite or zero.
 */
const within = (min: number, max: number, what = "a number") => {
  const error = (i: { input?: unknown }) =>
    `expected ${what} in [${min}, ${max.toExponential().replace("e+", "e")}], got ${describeValue(i.input)}`;
  return z.number({ error }).min(min, { error }).max(max, { error });
};
/** Throughputs and capacities: from 0.001 to 1e6 of the key's unit. */
const capacity = () => within(0.001, 1e6);
/** An optional peak (0 = absent). */
const peak = () =>
  z.union([z.literal(0), capacity()], {
    error: (i) => `expected 0 or a number in [0.001, 1e6], got ${describeValue(i.input)}`,
  });
/** The largest latency or overhead a device file takes: 10 s, in µs. */
export const MICROS_MAX = 1e7;
/** A latency or overhead: 0 to {@link MICROS_MAX} µs. */
const micros = () => within(0, MICROS_MAX, "microseconds");

/** Schema of a device file; defaults are the catalog's H100 factors. */
export const DeviceFileSchema = mapping({
  name: z.string().min(1).optional(),
  memory_gib: capacity(),
  hbm_bandwidth_tb_s: capacity(),
  tflops: mapping({
    bf16: capacity(),
    fp16: capacity().optional(),
    fp8: peak().default(0),
    int8: peak().default(0),
    fp4: peak().default(0),
  }),
  efficiency: mapping({
    matmul: fraction().default(0.8),
    matmul_low_precision: fraction().default(0.71),
    attention: fraction().default(0.75),
    memory: fraction().default(0.9),
    link: fraction().default(0.85),
  }).prefault({}),
  scale_up_bandwidth_gb_s: capacity().default(450),
  scale_out_bandwidth_gb_s: capacity().default(50),
  devices_per_node: positiveInt().max(1e6, {
    error: (i) => `expected a positive integer ≤ 1e6, got ${describeValue(i.input)}`,
  }).default(8),
  collective_latency_us: micros().default(10),
  scale_out_latency_us: micros().default(20),
  matmul_op_overhead_us: micros().default(5),
  other_op_overhead_us: micros().default(2),
  step_overhead_us: micros().default(500),
  seq_overhead_us: micros().default(0),
  request_overhead_us: micros().default(0),
  host_link_bandwidth_gb_s: capacity().optional(),
});

/** A validated device file. */
export type DeviceFile = z.output<typeof DeviceFileSchema>;

/** Converts a device file to the hardware model's units. */
export function deviceFromFile(f: DeviceFile, fallbackName: string): DeviceSpec {
  const T = 1e12;
  return {
    name: f.name ?? fallbackName,
    memoryBytes: f.memory_gib * 2 ** 30,
    hbmBandwidth: f.hbm_bandwidth_tb_s * T,
    peaks: {
      bf16: f.tflops.bf16 * T,
      fp16: (f.tflops.fp16 ?? f.tflops.bf16) * T,
      fp8: f.tflops.fp8 * T,
      int8: f.tflops.int8 * T,
      fp4: f.tflops.fp4 * T,
    },
    efficiency: {
      matmul: f.efficiency.matmul,
      matmulLowPrecision: f.efficiency.matmul_low_precision,
      attention: f.efficiency.attention,
      memory: f.efficiency.memory,
      link: f.efficiency.link,
    },
    scaleUpBandwidth: f.scale_up_bandwidth_gb_s * 1e9,
    scaleOutBandwidth: f.scale_out_bandwidth_gb_s * 1e9,
    devicesPerNode: f.devices_per_node,
    collectiveLatency: f.collective_latency_us * 1e-6,
    scaleOutLatency: f.scale_out_latency_us * 1e-6,
    matmulOpOverhead: f.matmul_op_overhead_us * 1e-6,
    otherOpOverhead: f.other_op_overhead_us * 1e-6,
    stepOverhead: f.step_overhead_us * 1e-6,
    seqOverhead: f.seq_overhead_us * 1e-6,
    requestOverhead: f.request_overhead_us * 1e-6,
    ...(f.host_link_bandwidth_gb_s !== undefined ? { hostLinkBandwidth: f.host_link_bandwidth_gb_s * 1e9 } : {}),
    provenance: `device file ${fallbackName}`,
    extrapolated: false,
  };
}
