/**
 * Seeded random streams, one per subsystem (arrivals, routing, …), so that
 * adding draws to one subsystem never shifts another's numbers and the same
 * seed gives byte-identical output. The generator is pure-rand's
 * xoroshiro128+; streams are 2^64 draws apart (its `jump`).
 *
 * @module
 */
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import type { JumpableRandomGenerator } from "pure-rand/types/JumpableRandomGenerator";

/** The subsystems that draw random numbers, each with its own stream. */
export const RNG_STREAMS = { arrivals: 0, routing: 1, lengths: 2, sessions: 3 } as const;

/** A subsystem's stream name. */
export type RngStream = keyof typeof RNG_STREAMS;

/** One seeded stream of random numbers. */
export class Rng {
  #g: JumpableRandomGenerator;
  #spareNormal: number | undefined;

  /**
   * @param seed the run's seed (a non-negative integer)
   * @param stream which subsystem's stream
   */
  constructor(seed: number, stream: RngStream) {
    // Seeds above 2^32 fold into 32 bits (the generator's seed width); config files and --seed reject them.
    const g = xoroshiro128plus(Number(BigInt.asIntN(32, BigInt(Math.trunc(seed)))));
    for (let i = 0; i < RNG_STREAMS[stream]; i++) g.jump();
    this.#g = g;
  }

  /** A uniform draw in [0, 1) with 53 random bits. */
  uniform(): number {
    return uniformFloat64(this.#g);
  }

  /** An exponential draw with mean `mean`. */
  exponential(mean: number): number {
    return -Math.log(1 - this.uniform()) * mean;
  }

  /** A standard normal draw (Marsaglia's polar method). */
  normal(): number {
    if (this.#spareNormal !== undefined) {
      const s = this.#spareNormal;
      this.#spareNormal = undefined;
      return s;
    }
    let u: number, v: number, s: number;
    do {
      u = 2 * this.uniform() - 1;
      v = 2 * this.uniform() - 1;
      s = u * u + v * v;
    } while (s >= 1 || s === 0);
    const f = Math.sqrt((-2 * Math.log(s)) / s);
    this.#spareNormal = v * f;
    return u * f;
  }

  /** A gamma draw with the given shape and scale (Marsaglia–Tsang; boosted for shape < 1). */
  gamma(shape: number, scale: number): number {
    if (shape < 1) {
      return this.gamma(shape + 1, scale) * Math.pow(1 - this.uniform(), 1 / shape);
    }
    const d = shape - 1 / 3;
    const c = 1 / Math.sqrt(9 * d);
    for (;;) {
      let x: number, v: number;
      do {
        x = this.normal();
        v = 1 + c * x;
      } while (v <= 0);
      v = v * v * v;
      const u = this.uniform();
      if (u < 1 - 0.0331 * x * x * x * x) return d * v * scale;
      if (Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v * scale;
    }
  }
}
