/**
 * What one engine counts for the report as it runs: steps, busy time,
 * occupancy integrals, preemptions, KV transfers and inter-token gaps
 * (read by step_accounting.ts's `engineStats`). The engine (engine.ts)
 * extends it; nothing here decides anything.
 *
 * @module
 */
import { GapCounts } from "./gap_counts.ts";

/** One engine's counters. */
export class EngineCounters {
  /** KV transfers this engine sent or received (disaggregated roles), their bytes and their µs. */
  transfers = 0;
  transferBytes = 0;
  transferTime = 0;
  /** Decode role: requests that waited for KV room before their transfer, and the µs they waited. */
  kvWaits = 0;
  kvWaitTime = 0;
  /** Steps run, and the µs a step was running (busy fraction = this / time). */
  steps = 0;
  busyTime = 0;
  /** Requests preempted (or retracted), and requests served here. */
  preemptions = 0;
  served = 0;
  /** Σ sequences over the steps, and the most in one step. */
  batchedSeqs = 0;
  peakBatch = 0;
  /** Σ sequences in the batch × step µs (mean batch occupancy = this / time). */
  seqTime = 0;
  /** Σ KV blocks held by requests or set aside for them × step µs (mean KV occupancy = this / time). */
  kvTime = 0;
  /** Σ cached KV blocks no request references (reclaimable) × step µs. */
  kvCachedTime = 0;
  /** Most KV blocks held by requests or set aside for them at once (at a step's start). */
  peakKvHeld = 0;
  /** Σ model FLOPs of the steps (when the cost model counts them). */
  flops = 0;
  /** Σ HBM bytes of the steps (when the cost model counts them). */
  hbmBytes = 0;
  /**
   * Inter-token latencies: gap µs → how many output tokens came after such
   * a gap (one sample per token emission after the first; with MTP, the
   * tokens accepted in one step arrive together, as a streaming client sees
   * them). The run's engines share one (the simulator's): the report reads
   * the whole run's gaps, and one set of pages stays in the cache and in
   * bounds where one per engine did not (see {@link GapCounts}).
   */
  readonly itl: GapCounts;

  /** @param itl where the engine counts its inter-token gaps (a fresh count when not given) */
  constructor(itl: GapCounts = new GapCounts()) {
    this.itl = itl;
  }
}
