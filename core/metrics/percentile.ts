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
