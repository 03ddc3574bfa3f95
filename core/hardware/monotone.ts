/**
 * Measured kernel times made monotone: a kernel never gets faster when its
 * work grows. A benchmark's grid of times (one per size, or per pair of
 * sizes) is first lowered to the fastest time measured at any size at least
 * as large along every axis (a benchmark's glitches are slow runs: a cell
 * slower than a larger one is a glitch, and a running maximum would carry
 * it into every larger cell; vLLM's MLA decode grid on H200 has cells 3×
 * slower than the cell twice their batch), then
 * interpolated linearly in log size and log time (which keeps the order of
 * a monotone grid), and extrapolated beyond the grid at the efficiency of
 * its edge (time in proportion to size). Used by the kernel tables, whose
 * raw fractions of peak can otherwise make a step faster when a request
 * joins it.
 *
 * @module
 */

import { IntMemo } from "./int_memo.ts";

/** How a curve continues below its first point: at the edge's efficiency (time ∝ size), or flat (a latency floor). */
export type Below = "scale" | "flat";

/** Index i with xs[i] ≤ x < xs[i + 1] (−1 below the first, n − 1 at or above the last). */
function segment(xs: readonly number[], x: number): number {
  let i = -1;
  while (i + 1 < xs.length && xs[i + 1] <= x) i++;
  return i;
}

/** log-linear interpolation of positive ys between two points. */
function between(x0: number, x1: number, y0: number, y1: number, x: number): number {
  return alongSegment(x0, y0, slope(x0, x1, y0, y1), x);
}

/** The segment's slope in log-log space: log(y1 / y0) / log(x1 / x0). */
function slope(x0: number, x1: number, y0: number, y1: number): number {
  return Math.log(y1 / y0) / Math.log(x1 / x0);
}

/**
 * {@link between} from the part that does not depend on `x`, the segment's
 * {@link slope} (looked up once per segment by the hot callers): y0 ·
 * (x / x0)^slope, one power where the ratio form, ratio^(log(x / x0) / log
 * span), took a logarithm, a division and a power (decode attention asks at
 * every step; this was 5% of a 512-engine run). The two agree to rounding.
 */
function alongSegment(x0: number, y0: number, slope: number, x: number): number {
  return y0 * Math.pow(x / x0, slope);
}

/** Nondecreasing times over one size axis. */
export class MonotoneCurve {
  /** Sizes with a time, ascending. */
  readonly xs: readonly number[];
  /** Their times, nondecreasing. */
  readonly ys: readonly number[];
  #below: Below;

  /**
   * @param xs sizes, ascending
   * @param times the measured time at each size (undefined: not measured, skipped)
   * @param below how the curve continues below its first point
   */
  constructor(xs: readonly number[], times: readonly (number | undefined)[], below: Below = "scale") {
    const px: number[] = [];
    const py: number[] = [];
    xs.forEach((x, i) => {
      const t = times[i];
      if (t === undefined || !(t > 0) || !Number.isFinite(t)) return;
      px.push(x);
      py.push(t);
    });
    // Each time lowered to the fastest at any larger size.
    for (let i = py.length - 2; i >= 0; i--) if (py[i + 1] < py[i]) py[i] = py[i + 1];
    this.xs = px;
    this.ys = py;
    this.#below = below;
    this.#slopes = px.map((x, i) => slope(x, px[i + 1], py[i], py[i + 1]));
  }

  /** Per segment i: its {@link slope}, the part of {@link between} that does not depend on the size asked. */
  readonly #slopes: readonly number[];

  /** Whether any size was measured. */
  get empty(): boolean {
    return this.xs.length === 0;
  }

  /** The time at size `x` (undefined for an empty curve). */
  at(x: number): number | undefined {
    const { xs, ys } = this;
    const n = xs.length;
    if (n === 0) return undefined;
    const i = segment(xs, x);
    if (i < 0) return this.#below === "flat" ? ys[0] : ys[0] * (x / xs[0]);
    if (i === n - 1) return ys[n - 1] * (x / xs[n - 1]);
    return alongSegment(xs[i], ys[i], this.#slopes[i], x);
  }
}

/**
 * Nondecreasing times over two size axes (rows and columns, both making
 * the work larger): each cell lowered to the smallest time of any cell with
 * no smaller row and column, interpolated bilinearly in log sizes and log
 * time, extrapolated beyond the grid in proportion to each size.
 */
export class MonotoneSurface {
  readonly #rows: readonly number[];
  readonly #cols: readonly number[];
  readonly #t: readonly (readonly number[])[];

  /**
   * @param rows row sizes, ascending
   * @param cols column sizes, ascending
   * @param times time of each cell `times[row][col]`; undefined cells take the nearest measured cell of their row at
   *   its efficiency (time ∝ column size), or of the nearest row when a row has none
   */
  constructor(rows: readonly number[], cols: readonly number[], times: readonly (readonly (number | undefined)[])[]) {
    const filledRows = times.map((row) => {
      const known = row.map((t, j) => (t !== undefined && t > 0 && Number.isFinite(t) ? j : -1)).filter((j) => j >= 0);
      if (known.length === 0) return undefined;
      return cols.map((c, j) => {
        if (known.includes(j)) return row[j]!;
        const near = known.reduce((
          a,
          k,
        ) => (Math.abs(Math.log(cols[k] / c)) < Math.abs(Math.log(cols[a] / c)) ? k : a));
        return row[near]! * (c / cols[near]);
      });
    });
    const anyRow = filledRows.findIndex((r) => r !== undefined);
    const t = rows.map((r, i) => {
      const own = filledRows[i];
      if (own) return [...own];
      let near = anyRow;
      filledRows.forEach((x, k) => {
        if (x && Math.abs(Math.log(rows[k] / r)) < Math.abs(Math.log(rows[near] / r))) near = k;
      });
      return near < 0 ? cols.map(() => NaN) : filledRows[near]!.map((v) => v * (r / rows[near]));
    });
    for (let i = rows.length - 1; i >= 0; i--) {
      for (let j = cols.length - 1; j >= 0; j--) {
        if (i + 1 < rows.length && t[i + 1][j] < t[i][j]) t[i][j] = t[i + 1][j];
        if (j + 1 < cols.length && t[i][j + 1] < t[i][j]) t[i][j] = t[i][j + 1];
      }
    }
    this.#rows = rows;
    this.#cols = cols;
    this.#t = t;
  }

  /**
   * Each row's time at column size `c` (interpolated along the columns), by
   * `c`: decode steps ask at one batch size over and over while the context
   * grows, so only the row interpolation is left per call (the same
   * arithmetic as interpolating afresh: the same value, bit for bit).
   */
  readonly #byColumn = new IntMemo<Float64Array>();

  /** The time at row size `r` and column size `c`; NaN when nothing was measured. */
  at(r: number, c: number): number {
    const rows = this.#rows;
    const last = rows.length - 1;
    const rc = Math.min(Math.max(r, rows[0]), rows[last]);
    const cc = this.#clampCol(c);
    const scale = (r / rc) * (c / cc);
    const i = Math.min(segment(rows, rc), last);
    const i1 = Math.min(i + 1, last);
    const col = this.#byColumn.get(c) ?? this.#column(c);
    const a = col[i];
    return scale * (i === i1 ? a : alongSegment(rows[i], a, col[last + 1 + i], rc));
  }

  /** `c` within the measured columns. */
  #clampCol(c: number): number {
    const cols = this.#cols;
    return Math.min(Math.max(c, cols[0]), cols[cols.length - 1]);
  }

  /**
   * Each row's time at column size `c` and the slope from it to the next row
   * (slots n..2n−2), remembered (at most 4,096 sizes; then forgotten and
   * rebuilt).
   */
  #column(c: number): Float64Array {
    const cols = this.#cols;
    const cc = this.#clampCol(c);
    const j = Math.min(segment(cols, cc), cols.length - 1), j1 = Math.min(j + 1, cols.length - 1);
    // Each row's time, then each row segment's slope (the part of the row interpolation fixed by c).
    const n = this.#rows.length;
    const col = new Float64Array(2 * n);
    for (let ii = 0; ii < n; ii++) {
      const t = this.#t[ii];
      col[ii] = j === j1 ? t[j] : between(cols[j], cols[j1], t[j], t[j1], cc);
    }
    const rows = this.#rows;
    for (let ii = 0; ii + 1 < n; ii++) col[n + ii] = slope(rows[ii], rows[ii + 1], col[ii], col[ii + 1]);
    if (this.#byColumn.size >= 4096) this.#byColumn.clear();
    this.#byColumn.set(c, col);
    return col;
  }
}
