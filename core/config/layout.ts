/**
 * An instance's parallel layout from its `parallel_config`, checked against
 * the model: a pure function that returns the layout, or every rule the
 * configuration breaks with the key that breaks it. `assemble` reports the
 * first violation at its position in the file; the capacity planner discards
 * a candidate with the violations as its reason, without a file.
 *
 * @module
 */
import type { EngineLayout } from "../hardware/layout.ts";
import type { ModelSpec } from "../model/model_spec.ts";
import type { ParallelConfig } from "./types.ts";

/** A rule a layout breaks: the `parallel_config` key (or `num_devices_per_instance`) and why. */
export interface LayoutViolation {
  /** The key, relative to `parallel_config`. */
  readonly key: string;
  /** What is wrong, e.g. "must divide the 64 attention heads of …, got 3". */
  readonly message: string;
}

/** The layout of an instance, or why it has none. */
export type LayoutOutcome =
  | {
    readonly kind: "layout";
    readonly layout: EngineLayout;
    /** Data-parallel ranks (engines per instance). */
    readonly dp: number;
    /** Things worth saying that are not errors (an EP size not dividing the experts, EP on a dense model). */
    readonly notes: readonly string[];
  }
  | { readonly kind: "violations"; readonly violations: readonly LayoutViolation[] };

/**
 * Resolves `p` for an instance of `devices` devices serving `model`.
 *
 * @param model the model's architecture
 * @param p the instance group's `parallel_config`
 * @param devices `num_devices_per_instance`
 *
 * @example Tensor parallelism must divide the attention heads
 * ```ts
 * import { MODEL_CATALOG, modelSpecFromHf, resolveLayout } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const fail = (field: string, detail: string): never => {
 *   throw new Error(`${field}: ${detail}`);
 * };
 * const model = modelSpecFromHf("llama", MODEL_CATALOG["meta-llama/Llama-3.1-8B-Instruct"], fail);
 * const p = { dp_size: 1, dcp_size: 1, mlp_tp_size: null, mlp_dp_size: null, lmhead_tp_size: null,
 *   lmhead_dp_size: null, ep_size: 1, moe_tp_size: 1, moe_dp_size: null };
 * assert.equal(resolveLayout(model, p, 2).kind, "layout");
 * const bad = resolveLayout(model, p, 3);
 * assert.equal(bad.kind, "violations");
 * if (bad.kind === "violations") assert.match(bad.violations[0].message, /must divide the 32 attention heads/);
 * ```
 */
export function resolveLayout(model: ModelSpec, p: ParallelConfig, devices: number): LayoutOutcome {
  const violations: LayoutViolation[] = [];
  const notes: string[] = [];
  const fail = (key: string, message: string) => violations.push({ key, message });
  const world = p.world_size ?? devices;
  if (world !== devices) fail("world_size", `must equal num_devices_per_instance (${devices}), got ${world}`);
  const dp = p.dp_size;
  if (world % dp !== 0) fail("dp_size", `must divide world_size (${world}), got ${dp}`);
  const tp = p.tp_size ?? world / dp;
  if (tp * dp !== world) {
    fail(p.tp_size ? "tp_size" : "dp_size", `tp_size × dp_size must equal world_size: ${tp} × ${dp} ≠ ${world}`);
  }
  if (model.heads % tp !== 0) {
    fail("tp_size", `must divide the ${model.heads} attention heads of ${model.id}, got ${tp}`);
  }
  const dcp = p.dcp_size;
  if (tp % dcp !== 0) fail("dcp_size", `must divide tp_size (${tp}), got ${dcp}`);
  if (!model.mla && dcp > 1 && model.kvHeads < tp / dcp) {
    fail("dcp_size", `needs num_key_value_heads (${model.kvHeads}) ≥ tp_size / dcp_size (${tp / dcp})`);
  }
  // An FFN-like part laid out as size × groups over the instance's devices.
  const split = (tpKey: string, dpKey: string, size: number, groups: number | null) => {
    if (world % size !== 0) fail(tpKey, `must divide world_size (${world}), got ${size}`);
    const n = groups ?? world / size;
    if (size * n !== world) fail(dpKey, `${tpKey} × ${dpKey} must equal world_size: ${size} × ${n} ≠ ${world}`);
    return n;
  };
  const hasDense = !model.moe || model.moe.denseLayers > 0;
  const mlpTp = p.mlp_tp_size ?? tp;
  const mlpDp = split("mlp_tp_size", "mlp_dp_size", mlpTp, p.mlp_dp_size ?? (p.mlp_tp_size === null ? dp : null));
  if (hasDense && model.intermediate % mlpTp !== 0) {
    fail("mlp_tp_size", `must divide the intermediate size (${model.intermediate}) of ${model.id}, got ${mlpTp}`);
  }
  const lmheadTp = p.lmhead_tp_size ?? tp;
  const lmheadDp = split(
    "lmhead_tp_size",
    "lmhead_dp_size",
    lmheadTp,
    p.lmhead_dp_size ?? (p.lmhead_tp_size === null ? dp : null),
  );
  let ep = 1, moeTp = tp, moeDp = dp;
  if (model.moe) {
    const e = model.moe;
    ep = p.ep_size;
    moeTp = p.moe_tp_size;
    const rest = world / (ep * moeTp);
    moeDp = p.moe_dp_size ?? (Number.isInteger(rest) ? rest : 0);
    if (moeTp * moeDp * ep !== world) {
      fail(
        p.moe_dp_size === null ? "ep_size" : "moe_dp_size",
        `moe_tp_size × moe_dp_size × ep_size must equal world_size: ${moeTp} × ${
          p.moe_dp_size ?? "?"
        } × ${ep} ≠ ${world}`,
      );
    }
    if (ep > e.experts) fail("ep_size", `must not exceed the ${e.experts} experts of ${model.id}, got ${ep}`);
    if (e.experts % ep !== 0) {
      notes.push(
        `ep_size ${ep} does not divide the ${e.experts} experts: each device holds ${
          Math.ceil(e.experts / ep)
        } (the spare slots hold redundant experts, as EPLB places them)`,
      );
    }
    if (e.expertIntermediate % moeTp !== 0) {
      fail(
        "moe_tp_size",
        `must divide the expert intermediate size (${e.expertIntermediate}) of ${model.id}, got ${moeTp}`,
      );
    }
  } else if (p.ep_size > 1) {
    notes.push(`ep_size is ignored for the dense model ${model.id}`);
  }
  return violations.length
    ? { kind: "violations", violations }
    : { kind: "layout", layout: { tp, dp, dcp, mlpTp, mlpDp, lmheadTp, lmheadDp, ep, moeTp, moeDp }, dp, notes };
}
