/**
 * Order statistics as numpy computes them (linear interpolation between
 * closest ranks, numpy's default `method="linear"`).
 *
 * @module
 */

/**
 * The q-th quantile of an ascending-sorted array.
 *
 * @param sorted values in ascending order (non-empty)
 * @param q in [0, 1]
 */
export function quantileSorted(sorted: ArrayLike<number>, q: number): number {
  return quantileAt(sorted.length, (rank) => sorted[rank], q);
}

/**
 * The q-th quantile, numpy-style, of `n` samples whose 0-based `rank`-th
 * smallest is `at(rank)`: linear between the two closest ranks.
 *
 * @param n samples (NaN when none)
 * @param at the sample of a rank
 * @param q in [0, 1]
 */
export function quantileAt(n: number, at: (rank: number) => number, q: number): number {
  if (n === 0) return NaN;
  const pos = (n - 1) * q;
  const lo = Math.floor(pos);
  const x = at(lo);
  return x + (at(Math.min(lo + 1, n - 1)) - x) * (pos - lo);
}

/**
 * The ranks (0-based, in ascending order) of the order statistics that hold
 * the q-th quantile of the distribution `n` samples were drawn from with
 * 95% confidence, distribution-free: ranks k with Bin(n, q) between them
 * (normal approximation, nq ± 1.96 √(nq(1 − q)), widened to whole ranks
 * and clamped to the sample). With few samples in a tail the interval
 * reaches the sample's edge: its end is then the extreme value, and the
 * quantile's true value may lie beyond.
 *
 * @example The median of 100 samples lies between the 40th and 61st values (0-based 39 and 60)
 * ```ts
 * import { quantileRanks } from "./percentile.ts";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(quantileRanks(100, 0.5), [39, 60]);
 * assert.deepEqual(quantileRanks(100, 0.99), [96, 99]);
 * ```
 */
export function quantileRanks(n: number, q: number): readonly [number, number] {
  const half = 1.96 * Math.sqrt(n * q * (1 - q));
  // 1-based ranks nq ∓ half, widened outwards; then 0-based and clamped.
  const lo = Math.floor(n * q - half);
  const hi = Math.ceil(n * q + half) + 1;
  return [Math.min(n - 1, Math.max(0, lo - 1)), Math.min(n - 1, Math.max(0, hi - 1))];
}

/**
 * The q-th quantile, numpy-style, of a multiset given as ascending distinct
 * values and their cumulative counts (as if each value were repeated).
 *
 * @param values distinct values in ascending order (non-empty)
 * @param cumulative cumulative[i] = how many samples are ≤ values[i]
 * @param q in [0, 1]
 */
export function quantileCounted(values: ArrayLike<number>, cumulative: ArrayLike<number>, q: number): number {
  const n = cumulative.length ? cumulative[cumulative.length - 1] : 0;
  return quantileAt(n, (rank) => valueAtRank(values, cumulative, rank), q);
}

/**
 * The sample of 0-based `rank` in a multiset given as ascending distinct
 * values and their cumulative counts: the first value whose cumulative
 * count exceeds the rank.
 */
export function valueAtRank(values: ArrayLike<number>, cumulative: ArrayLike<number>, rank: number): number {
  let a = 0, b = cumulative.length - 1;
  while (a < b) {
    const mid = (a + b) >> 1;
    if (cumulative[mid] > rank) b = mid;
    else a = mid + 1;
  }
  return values[a];
}
