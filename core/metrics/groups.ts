/**
 * Per-group and per-instance figures: how busy, how full, how much moved.
 *
 * @module
 */
import type { EngineStats } from "../engine/types.ts";

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
  /** Mean over engines of busy time / simulated time. */
  readonly busyFraction: number;
  /** Mean sequences per step. */
  readonly meanBatch: number;
  /** Largest batch of any engine. */
  readonly peakBatch: number;
  /** Largest KV use of any engine, as a fraction of its blocks. */
  readonly peakKvFraction: number;
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

function pool(group: string, instance: number, es: readonly EngineStats[], endTime: number): PoolStats {
  const sum = (f: (e: EngineStats) => number) => es.reduce((s, e) => s + f(e), 0);
  const steps = sum((e) => e.steps);
  const transfers = sum((e) => e.transfers);
  const waits = sum((e) => e.kvWaits);
  return {
    group,
    instance,
    role: es[0].role,
    engines: es.length,
    busyFraction: endTime > 0 ? sum((e) => e.busy) / (endTime * es.length) : 0,
    meanBatch: steps > 0 ? sum((e) => e.batchedSeqs) / steps : 0,
    peakBatch: Math.max(...es.map((e) => e.peakBatch)),
    peakKvFraction: Math.max(...es.map((e) => (e.kvBlocks > 0 ? e.peakKvBlocks / e.kvBlocks : 0))),
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
 * @param endTime simulated µs
 */
export function poolStats(
  names: readonly string[],
  engines: readonly EngineStats[],
  endTime: number,
): { groups: PoolStats[]; instances: PoolStats[] } {
  const groups: PoolStats[] = [];
  const instances: PoolStats[] = [];
  names.forEach((name, g) => {
    const mine = engines.filter((e) => e.group === g);
    if (mine.length === 0) return;
    groups.push(pool(name, -1, mine, endTime));
    const count = Math.max(...mine.map((e) => e.instance)) + 1;
    for (let i = 0; i < count; i++) instances.push(pool(name, i, mine.filter((e) => e.instance === i), endTime));
  });
  return { groups, instances };
}
