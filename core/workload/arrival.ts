/**
 * Client arrival times for the upstream `fixed_length` workload: a
 * constant, Poisson or gamma process at `request_rate`, or every request at
 * t = 0 for an infinite rate. Arrival times are drawn lazily, one at a time,
 * so a run never holds them all.
 *
 * @module
 */
import type { Rng } from "./rng.ts";

/** How requests arrive. */
export interface ArrivalSpec {
  /** Requests per second; `Infinity` = all at t = 0. */
  readonly rate: number;
  /** Inter-arrival distribution. */
  readonly process: "constant" | "poisson" | "gamma";
  /** Coefficient of variation of gamma inter-arrival gaps. */
  readonly cv: number;
}

/**
 * Yields successive arrival times in integer microseconds. The first
 * request arrives at t = 0 (a benchmark client sends its first request at
 * once); each next gap is 1/rate (constant), exponential (poisson) or gamma
 * with shape 1/cv² (gamma), all with mean 1/rate.
 */
export class ArrivalClock {
  #spec: ArrivalSpec;
  #rng: Rng;
  #t = 0; // seconds, kept in full precision so rounding never accumulates
  #n = 0;

  /**
   * @param spec the arrival process
   * @param rng the arrivals stream
   */
  constructor(spec: ArrivalSpec, rng: Rng) {
    this.#spec = spec;
    this.#rng = rng;
  }

  /** The next arrival time, µs. */
  next(): number {
    const s = this.#spec;
    if (this.#n++ > 0 && Number.isFinite(s.rate)) {
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
