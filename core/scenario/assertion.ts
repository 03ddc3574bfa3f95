/**
 * One SLO assertion: `<op> <number>` checked against a reported metric.
 *
 * @module
 */

/** Comparison operators. */
export const OPERATORS = ["<=", ">=", "==", "<", ">"] as const;
/** A comparison operator. */
export type Operator = (typeof OPERATORS)[number];

/** A parsed bound. */
export interface Bound {
  /** The comparison. */
  readonly op: Operator;
  /** The number compared against. */
  readonly value: number;
}

/**
 * Parses `"< 0.5"`, `">= 1200"`, `"== 1000"`; a bare number means `==`.
 *
 * @returns the bound, or undefined when the text is not one
 */
export function parseBound(v: unknown): Bound | undefined {
  if (typeof v === "number" && Number.isFinite(v)) return { op: "==", value: v };
  if (typeof v !== "string") return undefined;
  const m = /^\s*(<=|>=|==|<|>)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$/.exec(v);
  if (!m) return undefined;
  return { op: m[1] as Operator, value: Number(m[2]) };
}

/**
 * Whether `actual` satisfies the bound. `==` allows a relative difference of
 * 1e-9 (the report's numbers are sums and ratios of floats). NaN satisfies
 * nothing.
 */
export function holds(b: Bound, actual: number): boolean {
  if (Number.isNaN(actual)) return false;
  switch (b.op) {
    case "<":
      return actual < b.value;
    case "<=":
      return actual <= b.value;
    case ">":
      return actual > b.value;
    case ">=":
      return actual >= b.value;
    case "==":
      return Math.abs(actual - b.value) <= 1e-9 * Math.max(1, Math.abs(b.value));
  }
}
