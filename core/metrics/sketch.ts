/**
 * A latency distribution in bounded memory: exact while it holds at most
 * `exactUpTo` values, then a DDSketch (Datadog's `@datadog/sketches-js`)
 * whose every quantile is within {@link SKETCH_RELATIVE_ACCURACY} of the
 * exact one, relative to it. Sketches merge (shards of a run, seeds) into
 * the sketch of all their values.
 *
 * A run of 100M requests keeps thousands of buckets per latency, not 100M
 * numbers (issue 29).
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

/**
 * Requests whose figures a run keeps exactly, by default; a longer run
 * sketches its percentiles (and says so). 100,000: every bundled run,
 * scenario and capacity search (at most 64,000 requests) stays exact, and
 * a million-request run holds 100,000 figures per column, not a million
 * (8 × H100, 1M requests: 270 MB resident with every figure kept, 160 MB
 * without; issue 29).
 */
export const EXACT_UP_TO = 100_000;

/** A {@link LatencyDistribution} as JSON: exact values, or a sketch. */
export interface DistributionJson {
  /** Values it keeps exactly before sketching them. */
  readonly exactUpTo: number;
  /** Its values, while exact. */
  readonly values?: readonly number[];
  /** The sketch's buckets as [key, count] pairs (keys of DDSketch's logarithmic mapping), and its zeros. */
  readonly sketch?: { readonly bins: readonly (readonly [number, number])[]; readonly zeros: number };
  /** The least value (a sketch's; its protobuf does not keep it). */
  readonly min?: number;
  /** The greatest value. */
  readonly max?: number;
  /** Σ values. */
  readonly sum?: number;
}

/** A distribution of non-negative values: exact up to a count, then sketched. */
export class LatencyDistribution {
  /** The values while exact (the first `#n` slots), in the order added until {@link sortedValues} sorts them. */
  #values: Float64Array | undefined;
  #n = 0;
  #sorted = true;
  #sketch: DDSketch | undefined;
  /**
   * Sketched values equal to the last one added, not yet in the sketch: a
   * run of equal values goes in as one weighted value (the same buckets,
   * count and extremes). A column of fixed lengths, or of zero waits, is such
   * a run: its logarithm and bucket were computed for every request of a
   * million (with the other columns, 6% of a 512-engine run).
   */
  #runValue = NaN;
  #runCount = 0;
  #sum = 0;
  readonly #exactUpTo: number;

  /**
   * An empty distribution.
   *
   * @param exactUpTo how many values are kept exactly before it sketches them all
   * @param expected how many values are expected (room for them, up to `exactUpTo`, is taken at once)
   */
  constructor(exactUpTo: number = EXACT_UP_TO, expected: number = 16) {
    this.#exactUpTo = exactUpTo;
    this.#values = new Float64Array(Math.max(1, Math.min(expected, exactUpTo)));
  }

  /** Whether its quantiles are exact (it has held no more than `exactUpTo` values). */
  get exact(): boolean {
    return this.#values !== undefined;
  }

  /** How many values it holds. */
  get count(): number {
    return this.#values ? this.#n : this.#sketched().count;
  }

  /** Σ of its values, summed in the order they were added (exactly as a loop over them would). */
  get sum(): number {
    return this.#sum;
  }

  /** Adds a value (≥ 0). */
  add(v: number): void {
    this.#sum += v;
    const values = this.#values;
    if (values === undefined) {
      if (v === this.#runValue) this.#runCount++;
      else {
        this.#flush();
        this.#runValue = v;
        this.#runCount = 1;
      }
      return;
    }
    if (this.#n === values.length) {
      if (this.#n >= this.#exactUpTo) {
        this.#toSketch();
        this.#sketch!.accept(v);
        return;
      }
      const grown = new Float64Array(Math.min(this.#exactUpTo, 2 * values.length));
      grown.set(values);
      this.#values = grown;
    }
    this.#values![this.#n++] = v;
    this.#sorted = false;
  }

  /** A distribution of the same values, its own from here. */
  copy(): LatencyDistribution {
    const d = new LatencyDistribution(this.#exactUpTo, 1);
    d.#n = this.#n;
    d.#sorted = this.#sorted;
    d.#sum = this.#sum;
    if (this.#values) d.#values = this.#values.slice();
    else {
      d.#values = undefined;
      d.#sketch = new DDSketch({ relativeAccuracy: SKETCH_RELATIVE_ACCURACY });
      d.#sketch.merge(this.#sketched());
    }
    return d;
  }

  /** Adds every value of `other` (whose values it then holds too; `other` is unchanged). */
  merge(other: LatencyDistribution): void {
    if (other.#values) {
      for (let i = 0; i < other.#n; i++) this.add(other.#values[i]);
      return;
    }
    if (this.#values) this.#toSketch();
    this.#sketched().merge(other.#sketched());
    this.#sum += other.#sum;
  }

  /** The values in ascending order (exact only; sorted in place once; valid until the next add). */
  sortedValues(): Float64Array {
    if (!this.#values) throw new RangeError("a sketched distribution keeps no values");
    const v = this.#values.subarray(0, this.#n);
    if (!this.#sorted) {
      v.sort();
      this.#sorted = true;
    }
    return v;
  }

  /**
   * The value of 0-based rank `k` (the (k+1)-th smallest): exact, or the
   * sketch's estimate within {@link SKETCH_RELATIVE_ACCURACY} of it (the
   * smallest and largest are exact either way); NaN when empty.
   */
  valueAtRank(k: number): number {
    const n = this.count;
    if (n === 0) return NaN;
    if (this.#values) return this.sortedValues()[Math.min(n - 1, Math.max(0, k))];
    const s = this.#sketched();
    if (k <= 0) return s.min;
    if (k >= n - 1) return s.max;
    // DDSketch's rank is q·(n − 1) (0-based, the first bucket whose running count exceeds it). Asking for the middle
    // of rank k (k + 0.5) lands in its bucket whichever way the sketch rounds.
    // Within the values seen, which the value of any rank is (a column of one value comes back as that value).
    const v = s.getValueAtQuantile(Math.min(1, (k + 0.5) / (n - 1)));
    return v < s.min ? s.min : v > s.max ? s.max : v;
  }

  /**
   * The value of rank `q` (0 to 1): the ⌈q·n⌉-th smallest when exact, else the
   * sketch's estimate within {@link SKETCH_RELATIVE_ACCURACY} of it; NaN when empty.
   */
  quantile(q: number): number {
    const n = this.count;
    return this.valueAtRank(Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1)));
  }

  /** Its state as JSON (its values while exact, else the sketch's buckets with its extremes and sum). */
  toJSON(): DistributionJson {
    if (this.#values) return { exactUpTo: this.#exactUpTo, values: Array.from(this.#values.subarray(0, this.#n)) };
    const s = this.#sketched();
    const bins: [number, number][] = [];
    s.store.bins.forEach((c, i) => c > 0 && bins.push([i + s.store.offset, c]));
    return {
      exactUpTo: this.#exactUpTo,
      sketch: { bins, zeros: s.zeroCount },
      min: s.min,
      max: s.max,
      sum: this.#sum,
    };
  }

  /** A distribution from {@link toJSON}'s output. */
  static fromJSON(j: DistributionJson): LatencyDistribution {
    const d = new LatencyDistribution(j.exactUpTo, j.values?.length ?? 1);
    if (j.values) {
      for (const v of j.values) d.add(v);
      return d;
    }
    // The same buckets with the same counts: the same sketch, quantile for quantile.
    const s = new DDSketch({ relativeAccuracy: SKETCH_RELATIVE_ACCURACY });
    let count = j.sketch!.zeros;
    for (const [key, c] of j.sketch!.bins) {
      s.store.add(key, c);
      count += c;
    }
    s.zeroCount = j.sketch!.zeros;
    s.count = count;
    s.min = j.min!;
    s.max = j.max!;
    s.sum = j.sum!;
    d.#values = undefined;
    d.#sketch = s;
    d.#sum = j.sum!;
    return d;
  }

  /** The sketch, with the pending run of equal values in it. */
  #sketched(): DDSketch {
    this.#flush();
    return this.#sketch!;
  }

  /** Puts the pending run of equal values into the sketch, as one value of that weight. */
  #flush(): void {
    if (this.#runCount === 0) return;
    this.#sketch!.accept(this.#runValue, this.#runCount);
    this.#runCount = 0;
    this.#runValue = NaN;
  }

  #toSketch(): void {
    const s = new DDSketch({ relativeAccuracy: SKETCH_RELATIVE_ACCURACY });
    const values = this.#values!;
    for (let i = 0; i < this.#n; i++) s.accept(values[i]);
    this.#values = undefined;
    this.#sketch = s;
  }
}
