/**
 * Per-group and per-instance figures: how busy, how full, how much moved.
 *
 * @module
 */
import type { EngineStats } from "../engine/types.ts";
import { poolHeadroom } from "./summary.ts";
import type { Headroom } from "./summary.ts";

/** Figures of a set of engines (a group or an instance). */
export interface PoolStats {
  /** Group name. */
  readonly group: string;
  /** Instance index, or -1 for a whole group. */
  readonly instance: number;
  /** Role. */
  readonly role: string;
  /** Engines pooled. */
  readonly engines: number;
  /** Batch, KV, compute and bandwidth use over the run. */
  readonly headroom: Headroom;
  /** Mean sequences per step. */
  readonly meanBatch: number;
  /** Largest batch of any engine. */
  readonly peakBatch: number;
  /** Preemptions. */
  readonly preemptions: number;
  /** KV transfers sent (prefill) or received (decode). */
  readonly transfers: number;
  /** Bytes of those transfers. */
  readonly transferBytes: number;
  /** Mean seconds a transfer took on the wire. */
  readonly meanTransferSeconds: number;
  /** Requests that waited for KV room before their transfer (backpressure). */
  readonly kvWaits: number;
  /** Mean seconds they waited. */
  readonly meanKvWaitSeconds: number;
  /** Requests whose phase finished here (prefill: prompts handed on; otherwise completions). */
  readonly served: number;
}

function pool(group: string, instance: number, es: readonly EngineStats[], window: number): PoolStats {
  const sum = (f: (e: EngineStats) => number) => es.reduce((s, e) => s + f(e), 0);
  const steps = sum((e) => e.steps);
  const transfers = sum((e) => e.transfers);
  const waits = sum((e) => e.kvWaits);
  return {
    group,
    instance,
    role: es[0].role,
    engines: es.length,
    headroom: poolHeadroom(es, window),
    meanBatch: steps > 0 ? sum((e) => e.batchedSeqs) / steps : 0,
    peakBatch: es.reduce((m, e) => Math.max(m, e.peakBatch), 0),
    preemptions: sum((e) => e.preemptions),
    transfers,
    transferBytes: sum((e) => e.transferBytes),
    meanTransferSeconds: transfers > 0 ? sum((e) => e.transferTime) / transfers / 1e6 : 0,
    kvWaits: waits,
    meanKvWaitSeconds: waits > 0 ? sum((e) => e.kvWaitTime) / waits / 1e6 : 0,
    served: sum((e) => e.served),
  };
}

/**
 * Pools engine counters by instance group and by instance.
 *
 * @param names group names, by group index
 * @param engines every engine's counters
 * @param window µs the time averages are taken over (the run, from the first arrival)
 *
 * @example Pool the engines of a run
 * ```ts
 * import { poolStats, runSources, YamlSource } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", c));
 * const { groups } = poolStats(["h100"], out.result.engines, out.result.endTime);
 * assert.equal(groups[0].group, "h100");
 * assert.equal(groups[0].served, 4);
 * assert.equal(groups[0].preemptions, 0);
 * ```
 */
export function poolStats(
  names: readonly string[],
  engines: readonly EngineStats[],
  window: number,
): { groups: PoolStats[]; instances: PoolStats[] } {
  const groups: PoolStats[] = [];
  const instances: PoolStats[] = [];
  // One pass buckets the engines by group: linear in engines and groups.
  const byGroup: EngineStats[][] = names.map(() => []);
  for (const e of engines) byGroup[e.group]?.push(e);
  names.forEach((name, g) => {
    const mine = byGroup[g];
    if (mine.length === 0) return;
    groups.push(pool(name, -1, mine, window));
    // Engines come in instance order: one pass splits them.
    const byInstance: EngineStats[][] = [];
    for (const e of mine) (byInstance[e.instance] ??= []).push(e);
    byInstance.forEach((es, i) => instances.push(pool(name, i, es, window)));
  });
  return { groups, instances };
}
