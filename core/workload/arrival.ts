/**
 * Client arrival times for the upstream `fixed_length` workload: a
 * constant, Poisson or gamma process at `request_rate`, or every request at
 * t = 0 for an infinite rate. Arrival times are drawn lazily, one at a time,
 * so a run never holds them all.
 *
 * @module
 */
import type { Rng } from "./rng.ts";

/** One segment of a piecewise-constant rate. */
export interface RateSegment {
  /** Seconds the segment lasts. */
  readonly duration: number;
  /** Requests per second during it. */
  readonly rate: number;
}

/** How requests arrive. */
export interface ArrivalSpec {
  /** Requests per second; `Infinity` = all at t = 0. Ignored when `schedule` is set. */
  readonly rate: number;
  /** Inter-arrival distribution; `burst` = all at t = 0. */
  readonly process: "constant" | "poisson" | "gamma" | "burst";
  /** Coefficient of variation of gamma inter-arrival gaps. */
  readonly cv: number;
  /** A piecewise-constant rate; the last segment's rate goes on after it ends. */
  readonly schedule?: readonly RateSegment[];
}

/**
 * Yields successive arrival times in integer microseconds. The first
 * request arrives at t = 0 (a benchmark client sends its first request at
 * once); each next gap is 1/rate (constant), exponential (poisson) or gamma
 * with shape 1/cv² (gamma), all with mean 1/rate. Under a rate schedule the
 * gaps are drawn with mean 1 in "operational time" Λ(t) = ∫ rate and mapped
 * back through Λ⁻¹ (time rescaling), so each segment runs at its own rate.
 */
export class ArrivalClock {
  #spec: ArrivalSpec;
  #rng: Rng;
  #t = 0; // seconds, kept in full precision so rounding never accumulates
  #n = 0;
  #lambda = 0; // operational time (expected arrivals so far) under a schedule

  /**
   * @param spec the arrival process
   * @param rng the arrivals stream
   */
  constructor(spec: ArrivalSpec, rng: Rng) {
    this.#spec = spec;
    this.#rng = rng;
  }

  /** A gap of mean 1 from the process. */
  #unitGap(): number {
    const s = this.#spec;
    if (s.process === "constant") return 1;
    if (s.process === "poisson") return this.#rng.exponential(1);
    const shape = 1 / (s.cv * s.cv);
    return this.#rng.gamma(shape, 1 / shape);
  }

  /** Λ⁻¹: the time at which `lambda` arrivals are expected under the schedule. */
  #timeAt(lambda: number, schedule: readonly RateSegment[]): number {
    return scheduleTimeAt(lambda, schedule);
  }

  /** The next arrival time, µs. */
  next(): number {
    const s = this.#spec;
    if (s.schedule && s.process !== "burst") {
      if (this.#n++ > 0) this.#lambda += this.#unitGap();
      return Math.round(this.#timeAt(this.#lambda, s.schedule) * 1e6);
    }
    if (this.#n++ > 0 && Number.isFinite(s.rate) && s.process !== "burst") {
      const mean = 1 / s.rate;
      if (s.process === "constant") this.#t = (this.#n - 1) * mean;
      else if (s.process === "poisson") this.#t += this.#rng.exponential(mean);
      else {
        const shape = 1 / (s.cv * s.cv);
        this.#t += this.#rng.gamma(shape, mean / shape);
      }
    }
    return Math.round(this.#t * 1e6);
  }
}

/**
 * Λ⁻¹ of a piecewise-constant rate schedule: the time, seconds, at which
 * `lambda` arrivals are expected (the last segment extends without end).
 */
export function scheduleTimeAt(lambda: number, schedule: readonly RateSegment[]): number {
  let t = 0;
  let left = lambda;
  for (let i = 0; i < schedule.length; i++) {
    const seg = schedule[i];
    const inSeg = seg.rate * seg.duration;
    if (left <= inSeg || i === schedule.length - 1) return t + left / seg.rate;
    left -= inSeg;
    t += seg.duration;
  }
  return t;
}
