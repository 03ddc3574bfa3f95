/**
 * The outcome of one check, shared by the runner and the baseline
 * comparison (its own module, so that neither imports the other for it).
 *
 * @module
 */

/** The outcome of one check (an assertion, a point's assertion, the baseline). */
export interface CheckResult {
  /** A short name (the test step's). */
  readonly name: string;
  /** Whether it holds. */
  readonly pass: boolean;
  /** `file:line:col: key: expected …, got …` (and more lines for a baseline table). */
  readonly message: string;
  /** The value judged: the worst seed's, or the seed at the stated quantile (NaN for a baseline check). */
  readonly actual: number;
  /** The value of every seed, the first seed first (one value without `seeds`; absent for a baseline check). */
  readonly values?: readonly number[];
  /**
   * A percentile's 95% interval (from its order statistics, or across seeds
   * when there are several) when it is bounded by a literal.
   */
  readonly interval?: readonly [number, number];
  /** Whether that interval straddles the bound: these runs do not decide it (true only then). */
  readonly undecided?: boolean;
}
