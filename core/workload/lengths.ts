/**
 * Token-length distributions for prompts and outputs. Every draw is an
 * integer ≥ 1, clamped to the distribution's [min, max].
 *
 * @module
 */
import type { Rng } from "./rng.ts";

/** One bin of the upstream `bins` form: lengths uniform in [min_tokens, max_tokens], chosen by weight. */
export interface LengthBin {
  /** Smallest length in the bin. */
  readonly min_tokens: number;
  /** Largest length in the bin. */
  readonly max_tokens: number;
  /** Relative weight of the bin. */
  readonly weight: number;
}

/** A length distribution. */
export type LengthDist =
  | { readonly dist: "fixed"; readonly value: number }
  | { readonly dist: "uniform"; readonly min: number; readonly max: number }
  | {
    readonly dist: "normal" | "lognormal";
    readonly mean: number;
    readonly std: number;
    readonly min?: number;
    readonly max?: number;
  }
  | { readonly dist: "bins"; readonly bins: readonly LengthBin[] };

/** The largest length a distribution can draw (Infinity when unbounded). */
export function maxLength(d: LengthDist): number {
  switch (d.dist) {
    case "fixed":
      return d.value;
    case "uniform":
      return d.max;
    case "normal":
    case "lognormal":
      return d.max ?? Infinity;
    case "bins":
      return d.bins.reduce((m, b) => Math.max(m, b.max_tokens), 0);
  }
}

/** The mean of a distribution before clamping and rounding. */
export function meanLength(d: LengthDist): number {
  switch (d.dist) {
    case "fixed":
      return d.value;
    case "uniform":
      return (d.min + d.max) / 2;
    case "normal":
    case "lognormal":
      return d.mean;
    case "bins": {
      const w = d.bins.reduce((s, b) => s + b.weight, 0);
      return d.bins.reduce((s, b) => s + (b.weight * (b.min_tokens + b.max_tokens)) / 2, 0) / w;
    }
  }
}

/** `x` as written when whole, else to the token (a fitted distribution's mean). */
const whole = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(0));

/** A short description: `1024`, `lognormal(mean 217, std 217)`. */
export function describeLength(d: LengthDist): string {
  switch (d.dist) {
    case "fixed":
      return String(d.value);
    case "uniform":
      return `uniform(${d.min}..${d.max})`;
    case "normal":
    case "lognormal":
      return `${d.dist}(mean ${whole(d.mean)}, std ${whole(d.std)})`;
    case "bins":
      return `bins(mean ${meanLength(d).toFixed(0)})`;
  }
}

const uniformInt = (rng: Rng, lo: number, hi: number) => lo + Math.floor(rng.uniform() * (hi - lo + 1));

/**
 * Draws one length.
 *
 * Lognormal parameters follow from the requested mean m and std s:
 * σ² = ln(1 + s²/m²), μ = ln m − σ²/2.
 */
export function drawLength(d: LengthDist, rng: Rng): number {
  let x: number;
  switch (d.dist) {
    case "fixed":
      return d.value;
    case "uniform":
      return uniformInt(rng, d.min, d.max);
    case "normal":
      x = d.mean + d.std * rng.normal();
      break;
    case "lognormal": {
      const s2 = Math.log(1 + (d.std * d.std) / (d.mean * d.mean));
      x = Math.exp(Math.log(d.mean) - s2 / 2 + Math.sqrt(s2) * rng.normal());
      break;
    }
    case "bins": {
      const total = d.bins.reduce((s, b) => s + b.weight, 0);
      let u = rng.uniform() * total;
      let bin = d.bins[d.bins.length - 1];
      for (const b of d.bins) {
        if (u < b.weight) {
          bin = b;
          break;
        }
        u -= b.weight;
      }
      return uniformInt(rng, bin.min_tokens, bin.max_tokens);
    }
  }
  return Math.min(d.max ?? Infinity, Math.max(d.min ?? 1, 1, Math.round(x)));
}
