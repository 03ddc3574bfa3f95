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
 * counts as keeping up (5%) in a run too short for the statistical test
 * (fewer than {@link MIN_BATCHES} × 10 requests in its later half):
 * Poisson arrivals over a few hundred requests vary by a few percent
 * around their mean, and a run's first and last tenth (ramp-up and drain)
 * are left out of both rates.
 */
export const KEEP_UP_TOLERANCE = 0.05;

/**
 * Batches of the later half of the arrivals the queue-growth test averages
 * (at most; at least 10 requests and one mean decode time each):
 * batch means tame the autocorrelation of successive waits, which would
 * make a per-request regression's interval far too narrow.
 */
export const GROWTH_BATCHES = 20;
/** The fewest batches the test runs on (two degrees of freedom beyond the line's two). */
export const MIN_BATCHES = 4;

/**
 * How much of its own level a wait may grow by across the window the test
 * fits (the later half of the arrivals) and still be steady (10%). A
 * growth is an overload when its whole 95% interval is above 0 and, at its
 * interval's lower end, it adds more than this share of the wait's mean
 * over the window: a steady run's wait drifts a little (a cache warming, a
 * batch filling), which a long run resolves without it mattering, while a
 * backlog's wait keeps rising against its level (a deployment 1.5% over
 * its capacity adds 0.015 s per s, seconds over a minute of arrivals).
 */
export const GROWTH_SHARE = 0.1;

/**
 * How many of its own time constants (the mean time from arrival to the
 * last token) the window the test fits must span for a steady verdict to
 * mean anything (5): a run whose later half lasts barely one request's
 * lifetime has not let its batch or its KV cache fill, and a queue that
 * will grow once they are full does not grow yet.
 */
export const SETTLE_SPANS = 5;

/** Two-sided 95% quantiles of Student's t by degrees of freedom (1 to 30; the normal's 1.96 beyond). */
const T95 = [
  12.706,
  4.303,
  3.182,
  2.776,
  2.571,
  2.447,
  2.365,
  2.306,
  2.262,
  2.228,
  2.201,
  2.179,
  2.16,
  2.145,
  2.131,
  2.12,
  2.11,
  2.101,
  2.093,
  2.086,
  2.08,
  2.074,
  2.069,
  2.064,
  2.06,
  2.056,
  2.052,
  2.048,
  2.045,
  2.042,
];

/** The two-sided 95% quantile of Student's t with `dof` degrees of freedom (≥ 1). */
export function t95(dof: number): number {
  return dof <= T95.length ? T95[dof - 1] : 1.96;
}

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
  /**
   * The 95% interval of the steady-state queue growth: the slope of the
   * batch means of the wait before the first token against arrival time
   * over the later half of the arrivals ({@link GROWTH_BATCHES} batches,
   * Student's t); undefined when the run is too short for it, or when all
   * requests arrive at once.
   */
  readonly queueGrowthCi?: readonly [number, number];
  /**
   * Whether the deployment keeps up: neither its queue (the wait before
   * the first token) nor its batch (the time to the last token) builds a
   * backlog ({@link isBacklog}; either fit finding one decides it); when
   * a fit finds none but the run is too short for the other, achieved within
   * {@link KEEP_UP_TOLERANCE} of offered.
   */
  readonly keepsUp: boolean;
  /**
   * Whether the run decides {@link keepsUp}: a backlog was found, or the
   * window spans {@link SETTLE_SPANS} lifetimes of a request (a capacity
   * search reruns an undecided point with more requests); true for a
   * closed loop, false for a run too short for the test.
   */
  readonly decided: boolean;
  /**
   * What this run says of the highest rate the deployment sustains, req/s:
   * at least the offered rate when it keeps up (high: Infinity); between
   * the rate it achieved under this overload (its service rate, which an
   * overload's preemptions and full KV may hold below the sustainable
   * rate) and the offered rate when it does not. A capacity search
   * (`max_rate_meeting`) narrows it.
   */
  readonly sustainable: { readonly low: number; readonly high: number };
  /**
   * The completion rate of the overload probe, req/s, when one ran and
   * overloaded the deployment ({@link withProbe}): the same deployment and
   * requests at a rate it does not keep up with, where it serves at its own
   * pace. It estimates the highest rate the deployment sustains (from
   * below: an overload's preemptions and full KV cache can hold a service
   * rate under what the deployment sustains short of overload).
   */
  readonly probe?: number;
}

/**
 * A run's figures with its overload probe's: a probe that fell behind
 * bounds the sustainable rate from above by its offered rate and gives its
 * completion rate as the estimate; one that kept up raises the lower end.
 */
export function withProbe(l: LoadStats, probe: Probe): LoadStats {
  if (probe.keepsUp) {
    return { ...l, sustainable: { ...l.sustainable, low: Math.max(l.sustainable.low, probe.offeredRate) } };
  }
  const high = Math.min(l.sustainable.high, probe.offeredRate);
  return { ...l, probe: probe.serviceRate, sustainable: { low: Math.min(l.sustainable.low, high), high } };
}

/** What an overload probe run found (see `saturationProbe` in core/assembly/run.ts). */
export interface Probe {
  /** Its arrivals per second (middle 80%). */
  readonly offeredRate: number;
  /** Whether it kept up ({@link loadStats}). */
  readonly keepsUp: boolean;
  /** Its completions per second over the middle 80% of completions. */
  readonly serviceRate: number;
}

/**
 * The slope of the time from arrival to `until` (the first token, or the
 * last) against arrival time over requests `from`… that reached it (but
 * the drain: those whose first token came within a mean decode time of the
 * last first token), fitted to batch means, with its 95% interval, the mean of that time and the
 * window's span; undefined with fewer than {@link MIN_BATCHES} batches of 10.
 */
export function growthInterval(
  t: RequestTable,
  from: number,
  until: "firstToken" | "finish" = "firstToken",
  drain: Drain = drainOf(t, from),
): GrowthFit | undefined {
  const end = t[until];
  const { cut, decode } = drain;
  const counted = (i: number) => end[i] >= 0 && t.firstToken[i] <= cut;
  let k = 0, x0 = Infinity, x1 = -Infinity;
  for (let i = from; i < t.count; i++) {
    if (!counted(i)) continue;
    k++;
    x0 = Math.min(x0, t.firstToken[i]);
    x1 = Math.max(x1, t.firstToken[i]);
  }
  // For the time to the last token, a batch spans at least a mean decode time (first token to last) of first tokens:
  // requests that share the engine's batch share their decode times, and batch means closer together than that are
  // correlated, which narrows the interval falsely.
  const perLife = until === "finish" && decode > 0 ? Math.floor((x1 - x0) / decode) : GROWTH_BATCHES;
  const batches = Math.min(GROWTH_BATCHES, Math.floor(k / 10), perLife);
  if (batches < MIN_BATCHES) return undefined;
  const xs = new Float64Array(batches);
  const ys = new Float64Array(batches);
  const ns = new Float64Array(batches);
  let j = 0;
  for (let i = from; i < t.count; i++) {
    if (!counted(i)) continue;
    const b = Math.min(batches - 1, Math.floor((j++ * batches) / k));
    xs[b] += t.arrival[i];
    ys[b] += end[i] - t.arrival[i];
    ns[b]++;
  }
  let mx = 0, my = 0;
  for (let b = 0; b < batches; b++) {
    xs[b] /= ns[b];
    ys[b] /= ns[b];
    mx += xs[b];
    my += ys[b];
  }
  mx /= batches;
  my /= batches;
  let sxx = 0, sxy = 0;
  for (let b = 0; b < batches; b++) {
    sxx += (xs[b] - mx) ** 2;
    sxy += (xs[b] - mx) * (ys[b] - my);
  }
  if (!(sxx > 0)) return undefined;
  const slope = sxy / sxx;
  let ssr = 0;
  for (let b = 0; b < batches; b++) ssr += (ys[b] - my - slope * (xs[b] - mx)) ** 2;
  const dof = batches - 2;
  const se = Math.sqrt(ssr / dof / sxx);
  const half = t95(dof) * se;
  return { ci: [slope - half, slope + half], level: my, span: xs[batches - 1] - xs[0] };
}

/** Where a run's drain starts, and its mean decode time (µs): what both fits of a run leave out, computed once. */
export interface Drain {
  /** Requests whose first token came after this (µs) ran in the drain. */
  readonly cut: number;
  /** The mean time from first token to last of requests `from`… (0 when none finished). */
  readonly decode: number;
}

/**
 * The drain of a run, left out of its growth fits: once arrivals stop and
 * the queue empties, the batch shrinks and its last requests' times fall,
 * which a fit over them reads as a queue shrinking (or, in a steady run, as
 * noise). Requests that got their first token within one mean decode time
 * (first token to last) of the last first token ran in it.
 */
export function drainOf(t: RequestTable, from: number): Drain {
  let decode = 0, m = 0, lastFirst = -Infinity;
  for (let i = 0; i < t.count; i++) lastFirst = Math.max(lastFirst, t.firstToken[i]);
  for (let i = from; i < t.count; i++) {
    if (t.finish[i] < 0 || t.firstToken[i] < 0) continue;
    decode += t.finish[i] - t.firstToken[i];
    m++;
  }
  const mean = m > 0 ? decode / m : 0;
  return { cut: lastFirst - mean, decode: mean };
}

/** A growth fit: the slope's 95% interval, the wait's mean over the window, and the window's span (µs). */
export interface GrowthFit {
  readonly ci: readonly [number, number];
  readonly level: number;
  readonly span: number;
}

/**
 * Whether a fitted growth is a backlog: its interval above 0, adding more
 * than {@link GROWTH_SHARE} of its level and more than `jitter` (µs) over
 * the window.
 *
 * @param jitter how far a wait moves without any queue building: evenly
 * spaced arrivals beat against the engine's step cadence, and the wait
 * drifts across a step and wraps (a bounded sawtooth whose rising half a
 * fit sees as a perfect line); a queue that has not grown by one arrival
 * gap and one decode step has not grown by a request
 */
export function isBacklog(f: GrowthFit, jitter = 0): boolean {
  const rise = f.ci[0] * f.span;
  return f.ci[0] > 0 && rise > GROWTH_SHARE * f.level && rise > jitter;
}

/** The mean time per output token after the first (µs) over requests `from`… that finished with two or more. */
function meanTpot(t: RequestTable, from: number): number {
  let sum = 0, k = 0;
  for (let i = from; i < t.count; i++) {
    if (t.finish[i] < 0 || t.firstToken[i] < 0 || t.output[i] < 2) continue;
    sum += (t.finish[i] - t.firstToken[i]) / (t.output[i] - 1);
    k++;
  }
  return k > 0 ? sum / k : 0;
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
  // A thinned table (every stride-th request) shows 1/stride of the rates; the fits read latencies, not counts.
  const stride = t.stride ?? 1;
  const offeredRate = middleRate(t.arrival) * stride;
  let done = 0;
  for (let i = 0; i < n; i++) if (t.engine[i] >= 0 && t.finish[i] >= 0) done++;
  const finish = new Float64Array(done);
  for (let i = 0, k = 0; i < n; i++) if (t.engine[i] >= 0 && t.finish[i] >= 0) finish[k++] = t.finish[i];
  finish.sort();
  let achievedRate = 0;
  if (finish.length > 0) {
    achievedRate = middleRate(finish) * stride;
    // One completion, or all at once: completions over the whole run.
    if (!Number.isFinite(achievedRate)) {
      const span = finish[finish.length - 1] - t.arrival[0];
      achievedRate = span > 0 ? ((finish.length * stride) / span) * 1e6 : offeredRate;
    }
  }
  if (!Number.isFinite(offeredRate)) {
    // A closed loop: every request at once; the deployment serves them at its own rate.
    const sustainable = { low: achievedRate, high: Infinity };
    return { offeredRate, achievedRate, queueGrowth: 0, keepsUp: true, decided: true, sustainable };
  }
  const queueGrowth = waitSlope(t, Math.floor(n / 2));
  if (finish.length > 0) achievedRate = Math.min(achievedRate, offeredRate / (1 + Math.max(0, queueGrowth)));
  const drain = drainOf(t, Math.floor(n / 2));
  const first = growthInterval(t, Math.floor(n / 2), "firstToken", drain);
  // A backlog grows before the first token (the queues) or after it (a batch that takes requests in faster than it
  // finishes them: the time to the last token grows): either is an overload. A run too short for the test falls back
  // on the rates.
  const last = growthInterval(t, Math.floor(n / 2), "finish", drain);
  const jitter = 1e6 / offeredRate + meanTpot(t, Math.floor(n / 2));
  // Either fit finding a backlog decides it; keeping up takes both, over a window long enough to have settled.
  const backlog = (first !== undefined && isBacklog(first, jitter)) || (last !== undefined && isBacklog(last, jitter));
  const keepsUp = backlog ? false : first && last ? true : achievedRate >= (1 - KEEP_UP_TOLERANCE) * offeredRate;
  const decided = backlog || (first !== undefined && last !== undefined && last.span >= SETTLE_SPANS * last.level);
  return {
    offeredRate,
    achievedRate,
    queueGrowth,
    ...(first ? { queueGrowthCi: first.ci } : {}),
    keepsUp,
    decided,
    sustainable: keepsUp ? { low: offeredRate, high: Infinity } : { low: achievedRate, high: offeredRate },
  };
}

/** The prefix lengths {@link backlogAtSomeLength} judges, as shares of the run (its later half is each one's window). */
export const PREFIXES = [0.25, 0.5, 0.75, 1] as const;

/**
 * The first of a run's prefixes (its first quarter, half, three quarters
 * of arrivals, then the whole run) that does not keep up, judged as a run
 * of that length would be ({@link loadStats}); undefined when every one
 * keeps up.
 *
 * A deployment within a fraction of a percent of its capacity neither
 * clearly keeps up nor clearly falls behind: its wait wanders up, and
 * whether a run shows a backlog depends on the run's length and luck. A
 * rate that keeps up holds over every length of run; the prefix of a run
 * has the arrivals of a shorter run with the same seed, so this is how a
 * capacity search confirms its answer over one long run.
 *
 * @returns the prefix's share and its figures
 */
export function backlogAtSomeLength(t: RequestTable): { share: number; load: LoadStats } | undefined {
  for (const share of PREFIXES) {
    const n = Math.floor(t.count * share);
    const load = loadStats(share === 1 ? t : prefix(t, n));
    if (!load.keepsUp) return { share, load };
  }
  return undefined;
}

/** The first `n` requests of a table. */
function prefix(t: RequestTable, n: number): RequestTable {
  return {
    count: n,
    ...(t.stride ? { stride: t.stride } : {}),
    arrival: t.arrival.subarray(0, n),
    send: t.send.subarray(0, n),
    firstToken: t.firstToken.subarray(0, n),
    finish: t.finish.subarray(0, n),
    input: t.input.subarray(0, n),
    output: t.output.subarray(0, n),
    preemptions: t.preemptions.subarray(0, n),
    engine: t.engine.subarray(0, n),
  };
}
