/**
 * A latency distribution in bounded memory: exact while it holds at most
 * `exactUpTo` values, then a DDSketch (Datadog's `@datadog/sketches-js`)
 * whose every quantile is within {@link SKETCH_RELATIVE_ACCURACY} of the
 * exact one, relative to it. Sketches merge (shards of a run, seeds) into
 * the sketch of all their values.
 *
 * A step toward issue 29's bounded memory: a run of 100M requests keeps
 * thousands of buckets per latency, not 100M numbers.
 *
 * @module
 */
import { DDSketch } from "@datadog/sketches-js";

/**
 * The relative accuracy of a sketch's quantiles (0.5%, issue 29's bound):
 * a quantile q the sketch returns lies within ±0.5% of the value of rank q.
 * DDSketch guarantees it by its logarithmic buckets (γ = 1.01005…).
 */
export const SKETCH_RELATIVE_ACCURACY = 0.005;

/** Values kept exactly before a distribution turns into a sketch, by default (1M: every bundled run stays exact). */
export const EXACT_UP_TO = 1_000_000;

/** A distribution of non-negative values: exact up to a count, then sketched. */
export class LatencyDistribution {
  #exact: number[] | undefined = [];
  #sketch: DDSketch | undefined;
  readonly #exactUpTo: number;

  /** @param exactUpTo how many values are kept exactly before it sketches them all */
  constructor(exactUpTo: number = EXACT_UP_TO) {
    this.#exactUpTo = exactUpTo;
  }

  /** Whether its quantiles are exact (it has held no more than `exactUpTo` values). */
  get exact(): boolean {
    return this.#exact !== undefined;
  }

  /** How many values it holds. */
  get count(): number {
    return this.#exact ? this.#exact.length : this.#sketch!.count;
  }

  /** Adds a value (≥ 0). */
  add(v: number): void {
    if (this.#exact) {
      this.#exact.push(v);
      if (this.#exact.length > this.#exactUpTo) this.#toSketch();
    } else this.#sketch!.accept(v);
  }

  /** Adds every value of `other` (whose values it then holds too; `other` is unchanged). */
  merge(other: LatencyDistribution): void {
    if (other.#exact) {
      for (const v of other.#exact) this.add(v);
      return;
    }
    if (this.#exact) this.#toSketch();
    this.#sketch!.merge(other.#sketch!);
  }

  /**
   * The value of rank `q` (0 to 1): the ⌈q·n⌉-th smallest when exact, else the
   * sketch's estimate within {@link SKETCH_RELATIVE_ACCURACY} of it; NaN when empty.
   */
  quantile(q: number): number {
    if (this.#exact) {
      const n = this.#exact.length;
      if (n === 0) return NaN;
      const sorted = Float64Array.from(this.#exact).sort();
      return sorted[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))];
    }
    // DDSketch's rank is q·(n − 1) (0-based, the first bucket whose running count exceeds it); the exact path's is
    // ⌈q·n⌉ − 1. Asking for the middle of that element's rank (k + 0.5) lands in its bucket under either rounding.
    const n = this.#sketch!.count;
    const k = Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1));
    return this.#sketch!.getValueAtQuantile(n > 1 ? Math.min(1, (k + 0.5) / (n - 1)) : 0) ?? NaN;
  }

  #toSketch(): void {
    const s = new DDSketch({ relativeAccuracy: SKETCH_RELATIVE_ACCURACY });
    for (const v of this.#exact!) s.accept(v);
    this.#exact = undefined;
    this.#sketch = s;
  }
}
