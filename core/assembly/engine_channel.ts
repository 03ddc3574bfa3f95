/**
 * One channel from an engine profile to a run: naming `engine: sglang`
 * (and its version) changes a group's run through what this returns, and
 * nothing else. The profile's serving defaults fill the keys the user did
 * not write; its scheduler decides what runs, what is admitted and what is
 * preempted; its host costs (per step, per sequence, per request) and the
 * calibrated constants of a catalog device set the cost model's
 * overheads and efficiencies; its measured kernel tables and CUDA-graph
 * sizes shape step times; its per-request latency delays each request's
 * arrival at the engine. A device file or a caller's device is taken as it
 * is (its constants are the user's own); its engine still launches and
 * overlaps as its profile says.
 *
 * @module
 */
import { KernelTables } from "../hardware/kernel_tables.ts";
import type { DeviceSpec } from "../hardware/device.ts";
import type { LoadedGroup } from "../config/load.ts";
import { applyProfile, hasConstant, hostOf, isRocm, versionBefore } from "../config/engine_profiles.ts";
import type { HostModel, ProfileContext, ProfiledServing } from "../config/engine_profiles.ts";
import type { Calibration, HostFamily } from "../config/calibrated.ts";
import type { ServingConfig } from "../config/types.ts";
import type { AdmissionName, NewTokenRatio, SchedulerName } from "../policy/mod.ts";

/** What a group's engine profile resolves to. */
export interface ResolvedEngine {
  /** The serving settings with the profile's defaults applied, and the profile. */
  readonly profiled: ProfiledServing;
  /** The device with the calibrated constants and host costs applied (a catalog device), or as given. */
  readonly device: DeviceSpec;
  /** The engine build's host model (launch, overlap, host costs), when an engine is named. */
  readonly host?: HostModel;
  /** The engine family's scheduler. */
  readonly scheduler: SchedulerName;
  /** Measured kernel tables of the engine on this GPU, when there are some. */
  readonly kernelTables?: KernelTables;
  /** CUDA-graph batch sizes the engine captures (graph-launched builds only). */
  readonly graphSizes?: readonly number[];
  /** µs from a request's send to its arrival in the engine's queue (0 without an API server). */
  readonly requestDelay: number;
  /** SGLang's constants where its version or DP attention changes them. */
  readonly sglangTuning?: Partial<NewTokenRatio>;
}

/**
 * Resolves group `g`'s engine: the serving config `sc` (of which the user
 * wrote the keys in `written`), the layout facts the profile's defaults
 * depend on, and the calibrated constants `c`.
 */
export function resolveEngine(
  g: LoadedGroup,
  sc: ServingConfig,
  written: ReadonlySet<string>,
  layout: Omit<ProfileContext, "deviceName" | "memoryBytes"> & { readonly dp: number },
  c: Calibration,
): ResolvedEngine {
  const { dp, ...context } = layout;
  const profiled = applyProfile(sc, written, {
    deviceName: g.device.name,
    memoryBytes: g.device.memoryBytes,
    ...context,
  });
  const { device, host } = calibrated(g, profiled, c);
  const record = profiled.profile?.resolved.record;
  const kernelTables = record?.kernels ? KernelTables.of(device.name, record.kernels) : undefined;
  return {
    profiled,
    device,
    ...(host ? { host } : {}),
    scheduler: schedulerOf(record?.family, profiled.serving.admission_policy),
    ...(kernelTables ? { kernelTables } : {}),
    ...(host?.launch === "graphs" && record?.graphSizes ? { graphSizes: record.graphSizes } : {}),
    requestDelay: profiled.serving.api_server ? Math.round((device.requestOverhead ?? 0) * 1e6) : 0,
    ...sglangTuningOf(profiled, dp, context.mla === true),
  };
}

/**
 * SGLang's constants that its build or deployment changes: before 0.5.2 a
 * retraction frees room for retract_decode_steps (20) tokens per request
 * left (schedule_batch.py L1251-L1279 at 0.4.6; from 0.5.2, one decode
 * step: `check_decode_mem`); with DP attention (dp_size > 1) the
 * conservativeness, and so the initial new-token ratio, is × 0.3
 * (server_args.py L291 at 0.4.6).
 */
function sglangTuningOf(p: ProfiledServing, dp: number, mla: boolean): { sglangTuning?: Partial<NewTokenRatio> } {
  const r = p.profile?.resolved;
  if (r?.record.engine !== "sglang") return {};
  const early = r.version !== undefined && versionBefore(r.version, "0.5.2");
  // DP attention: attention data-parallel ranks of an MLA model (DeepSeek), each its own scheduler.
  const dpAttention = dp > 1 && mla;
  const tuning = { ...(early ? { retractRoomSteps: 20 } : {}), ...(dpAttention ? { init: 0.7 * 0.3 } : {}) };
  return Object.keys(tuning).length ? { sglangTuning: tuning } : {};
}

/** Early-2025 ROCm builds, before AMD's AITER kernels: vLLM before 0.8, SGLang before 0.4.5. */
function earlyRocm(p: ProfiledServing, deviceName: string): boolean {
  const r = p.profile?.resolved;
  if (!r || !isRocm(deviceName) || r.version === undefined) return false;
  const since = r.record.engine === "vllm" ? "0.8" : r.record.engine === "sglang" ? "0.4.5" : undefined;
  return since !== undefined && versionBefore(r.version, since);
}

/**
 * The device a group runs on with the calibrated constants applied, and
 * its engine's host model. A catalog device takes the fitted HBM
 * efficiency, the host costs of its engine build
 * (without an engine, the generic path keeps the catalog's), and on the ROCm
 * builds of early 2025 their MoE and MLA kernel efficiencies. A device file
 * is taken as it is (its host costs are the user's own, such as
 * `deno task calibrate` writes); its engine still launches and overlaps as
 * its profile says.
 */
function calibrated(
  g: LoadedGroup,
  p: ProfiledServing,
  c: Calibration,
): { device: DeviceSpec; host?: HostModel } {
  const d = g.device;
  const resolved = p.profile?.resolved;
  const host = resolved && hostOf(resolved, d.name, c);
  if (g.deviceOrigin !== "catalog") return { device: d, ...(host ? { host } : {}) };
  const hbm = `${d.name}.hbm_efficiency`;
  const rocm = earlyRocm(p, d.name);
  // Ascend 910B/910C dies (Atlas 800 A2, A3) under an engine; the generic path keeps upstream's profile.
  const ascend = host !== undefined && /^ATLAS_800_A[23]_/.test(d.name);
  const efficiency = {
    ...d.efficiency,
    ...(hasConstant(hbm) ? { memory: c.get(hbm) } : {}),
    ...(ascend
      ? {
        memory: c.get("ascend_910.hbm_efficiency"),
        matmul: c.get("ascend_910.matmul_efficiency"),
        matmulLowPrecision: c.get("ascend_910.matmul_efficiency"),
        attention: c.get("ascend_910.matmul_efficiency"),
      }
      : {}),
    ...(rocm
      ? {
        moeMemory: c.get("rocm-2025q1.moe_hbm_efficiency"),
        mlaDecodeMemory: c.get("rocm-2025q1.mla_decode_hbm_efficiency"),
      }
      : {}),
  };
  const device: DeviceSpec = {
    ...d,
    efficiency,
    ...(host
      ? {
        stepOverhead: host.stepUs * 1e-6,
        seqOverhead: host.seqUs * 1e-6,
        requestOverhead: host.requestUs * 1e-6,
        provenance: `${d.provenance}; ${host.source}`,
      }
      : {}),
  };
  return { device, ...(host ? { host } : {}) };
}

/**
 * The scheduler of an engine family (core/policy/schedulers/); the generic
 * one without an engine. TensorRT-LLM's capacity policy follows the
 * admission the configuration asks for: greedy admission is its
 * MAX_UTILIZATION, anything else its default GUARANTEED_NO_EVICT.
 */
function schedulerOf(family: HostFamily | undefined, admission: AdmissionName): SchedulerName {
  switch (family) {
    case undefined:
      return "generic";
    case "vllm-v0":
      return "vllm_v0";
    case "vllm-v1":
      return "vllm_v1";
    case "trtllm":
      return admission === "greedy" ? "trtllm_max_utilization" : "trtllm_guaranteed_no_evict";
    default:
      return family;
  }
}
