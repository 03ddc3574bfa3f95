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
  const n = sorted.length;
  if (n === 0) return NaN;
  const pos = (n - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, n - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
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
  if (n === 0) return NaN;
  const pos = (n - 1) * q;
  const lo = Math.floor(pos);
  const at = (rank: number) => {
    // The first value whose cumulative count exceeds the 0-based rank.
    let a = 0, b = cumulative.length - 1;
    while (a < b) {
      const mid = (a + b) >> 1;
      if (cumulative[mid] > rank) b = mid;
      else a = mid + 1;
    }
    return values[a];
  };
  const x = at(lo);
  const y = at(Math.min(lo + 1, n - 1));
  return x + (y - x) * (pos - lo);
}
