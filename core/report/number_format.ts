/**
 * Number formatting as Python prints it: `%.Nf` and numpy's `round`, both
 * rounding exact ties to even (JavaScript's `toFixed` rounds them up).
 *
 * @module
 */

/** numpy.round(x, digits): scale, round half to even, unscale. */
export function roundHalfEven(x: number, digits: number): number {
  const k = 10 ** digits;
  const s = x * k;
  const f = Math.floor(s);
  const d = s - f;
  const r = d > 0.5 ? f + 1 : d < 0.5 ? f : f % 2 === 0 ? f : f + 1;
  return r / k;
}

/** Python's `"%.{digits}f" % x`. */
export function formatFixed(x: number, digits: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  const s = x * 10 ** digits;
  // An exact binary tie (…5 at the last place) rounds to even, as C's printf does.
  if (Number.isInteger(s * 2) && !Number.isInteger(s) && Math.abs(s) < 2 ** 52) {
    return roundHalfEven(x, digits).toFixed(digits);
  }
  return x.toFixed(digits);
}
