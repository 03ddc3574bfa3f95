/**
 * Offered against achieved load: whether the deployment keeps up with the
 * requests it is sent, or falls behind while the client (or the engine
 * queue) absorbs the difference.
 *
 * A serving benchmark measures latency from the moment the client sends a
 * request. When `max_concurrency` holds requests back, the deployment can
 * fall behind by minutes while the send-based latencies stay low: the
 * overload is hidden in the client's queue. These figures expose it.
 *
 * @module
 */
import type { RequestTable } from "../engine/types.ts";

/**
 * Shortfall of the achieved rate, relative to the offered rate, that still
 * counts as keeping up (5%): Poisson arrivals over a few hundred requests
 * vary by a few percent around their mean, and a run's first and last
 * tenth (ramp-up and drain) are left out of both rates.
 */
export const KEEP_UP_TOLERANCE = 0.05;

/** How the deployment kept up with its load. */
export interface LoadStats {
  /** Arrivals per second over the middle 80% of arrivals; Infinity when all arrive at once (closed loop). */
  readonly offeredRate: number;
  /**
   * Completions per second the deployment sustained: the completion rate over
   * the middle 80% of completions, or, when lower, the rate the queue growth
   * implies (offered / (1 + queue growth)); 0 when nothing completed.
   */
  readonly achievedRate: number;
  /**
   * Growth of the wait before the first token (the client's queue, the
   * engine's queue and prefill: TTFT from arrival) over the later half of
   * the arrivals: seconds of extra wait per second of arrivals, the
   * least-squares slope. 0 in a steady state; offered / achieved − 1 when a
   * queue grows without bound.
   */
  readonly queueGrowth: number;
  /** Achieved within {@link KEEP_UP_TOLERANCE} of offered. */
  readonly keepsUp: boolean;
}

/**
 * The rate of a sorted series of event times (µs) over its middle 80%: the
 * first and last tenth are left out, so a ramp-up or a drain does not bias
 * it, and a constant latency between two series cancels out.
 *
 * @returns events per second; Infinity when they all happen at once
 */
export function middleRate(sorted: ArrayLike<number>): number {
  const n = sorted.length;
  if (n < 2) return Infinity;
  const lo = Math.floor(0.1 * (n - 1));
  const hi = Math.ceil(0.9 * (n - 1));
  const span = sorted[hi] - sorted[lo];
  if (span > 0) return ((hi - lo) / span) * 1e6;
  const all = sorted[n - 1] - sorted[0];
  return all > 0 ? ((n - 1) / all) * 1e6 : Infinity;
}

/**
 * Least-squares slope of the wait before the first token against arrival
 * time, over requests `from`… that produced a token (centred sums: no
 * cancellation).
 */
function waitSlope(t: RequestTable, from: number): number {
  let mx = 0, my = 0, k = 0;
  for (let i = from; i < t.count; i++) {
    if (t.firstToken[i] < 0) continue;
    mx += t.arrival[i];
    my += t.firstToken[i] - t.arrival[i];
    k++;
  }
  if (k < 2) return 0;
  mx /= k;
  my /= k;
  let sxx = 0, sxy = 0;
  for (let i = from; i < t.count; i++) {
    if (t.firstToken[i] < 0) continue;
    const dx = t.arrival[i] - mx;
    sxx += dx * dx;
    sxy += dx * (t.firstToken[i] - t.arrival[i] - my);
  }
  return sxx > 0 ? sxy / sxx : 0;
}

/**
 * Offered and achieved rates and queue growth of a run.
 *
 * Two estimates of the achieved rate cover each other's blind spot. The
 * middle-80% completion rate is exact in a long run whatever the latency,
 * but in a run too short to reach a steady state completions bunch up as
 * the batch drains and it can exceed the offered rate. The queue growth
 * sees a backlog building from the first requests on. The lower of the two
 * is reported.
 *
 * @param t the per-request table (arrival order)
 *
 * @example A light load is kept up with
 * ```ts
 * import { loadStats, runSources, YamlSource } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", c));
 * const load = loadStats(out.result.requests);
 * assert.equal(load.offeredRate, 2); // the default rate
 * assert.equal(load.keepsUp, true);
 * ```
 */
export function loadStats(t: RequestTable): LoadStats {
  const n = t.count;
  const offeredRate = middleRate(t.arrival);
  let done = 0;
  for (let i = 0; i < n; i++) if (t.engine[i] >= 0 && t.finish[i] >= 0) done++;
  const finish = new Float64Array(done);
  for (let i = 0, k = 0; i < n; i++) if (t.engine[i] >= 0 && t.finish[i] >= 0) finish[k++] = t.finish[i];
  finish.sort();
  let achievedRate = 0;
  if (finish.length > 0) {
    achievedRate = middleRate(finish);
    // One completion, or all at once: completions over the whole run.
    if (!Number.isFinite(achievedRate)) {
      const span = finish[finish.length - 1] - t.arrival[0];
      achievedRate = span > 0 ? (finish.length / span) * 1e6 : offeredRate;
    }
  }
  if (!Number.isFinite(offeredRate)) return { offeredRate, achievedRate, queueGrowth: 0, keepsUp: true };
  const queueGrowth = waitSlope(t, Math.floor(n / 2));
  if (finish.length > 0) achievedRate = Math.min(achievedRate, offeredRate / (1 + Math.max(0, queueGrowth)));
  const keepsUp = achievedRate >= (1 - KEEP_UP_TOLERANCE) * offeredRate;
  return { offeredRate, achievedRate, queueGrowth, keepsUp };
}
