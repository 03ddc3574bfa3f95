/**
 * Scenario assertions: a comparison of a reported metric with an
 * expression, optionally with a tolerance.
 *
 * ```text
 * "< 0.5"                         absolute bound
 * ">= 0.9 * agg.request_throughput"  against another variant's metric
 * "== 3900 ± 50"   "== 3900 ± 5%"    tolerance, absolute or relative
 * 3900                            exactly (a bare number)
 * {value: 3900, within: "5%"}     the mapping form of a tolerance
 * "< 2s @ 90%"                    the bound holds at 90% confidence
 * ```
 *
 * With a confidence (`@ 90%` or `@ 0.9`, on `<`, `<=`, `>` and `>=`), the
 * bound is checked against the end of the metric's prediction interval
 * (core/metrics/intervals.ts): a real deployment stays below (or above)
 * it with that probability, judged from the simulator's held-out errors.
 *
 * An expression is numbers and metric names (`ttft.p99`,
 * `agg.request_throughput`) joined by `+ - * /` and parentheses. A number
 * may carry a unit: a time (`50ms`, `0.5 s`, `200us`, `2min`), a multiplier
 * (`2k`, `1.5M`, `1G`), a percentage (`80%`, for fractions) and a rate or
 * count (`tok/s`, `req/s`, `tokens`), as in `< 50ms` or `>= 2k tok/s`. Times
 * are converted to seconds; a unit that does not fit the metric is an error.
 *
 * @module
 */
import { clip, describeValue } from "../config/errors.ts";
import type { MetricUnit } from "./metric_keys.ts";

/** Comparison operators. */
export const OPERATORS = ["<=", ">=", "==", "<", ">"] as const;
/** A comparison operator. */
export type Operator = (typeof OPERATORS)[number];

/** A parsed right-hand side. */
export type Expr =
  | { readonly kind: "num"; readonly value: number; readonly unit?: MetricUnit; readonly unitText?: string }
  | { readonly kind: "ref"; readonly name: string }
  | { readonly kind: "bin"; readonly op: "+" | "-" | "*" | "/"; readonly left: Expr; readonly right: Expr };

/** A tolerance on `==`. */
export interface Tolerance {
  /** Absolute amount, or a fraction when `relative`. */
  readonly amount: number;
  /** A fraction of the expected value. */
  readonly relative: boolean;
}

/** A parsed assertion. */
export interface Bound {
  /** The comparison. */
  readonly op: Operator;
  /** What the metric is compared with. */
  readonly rhs: Expr;
  /** Accepted difference for `==`. */
  readonly tolerance?: Tolerance;
  /** The confidence the bound must hold at (`@ 90%`), in (0, 1); absent: on the simulated value itself. */
  readonly confidence?: number;
  /** The assertion as written, normalized. */
  readonly text: string;
  /** True when no operator was written (a bare value: `== value`), which a latency never takes. */
  readonly bare?: true;
}

const NUM = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/;
const REF = /^[A-Za-z_][A-Za-z0-9_.]*/;

/** Time units, in seconds. */
export const TIME: Readonly<Record<string, number>> = { us: 1e-6, "µs": 1e-6, ms: 1e-3, s: 1, min: 60, h: 3600 };
/** Multipliers. */
const SCALE: Record<string, number> = { k: 1e3, K: 1e3, M: 1e6, G: 1e9 };
/** Rate and count units (no scaling). */
const DIMENSION: Record<string, MetricUnit> = { "tok/s": "tok/s", "req/s": "req/s", tokens: "tokens", token: "tokens" };
/** A unit after a number: a time, or [multiplier or %] then optionally a rate or count; not followed by a name character. */
const UNIT = /^\s*(?:(us|µs|ms|min|h|s)|(k|K|M|G|%)?\s*(tok\/s|req\/s|tokens|token)?)(?![A-Za-z0-9_/])/;

/** A number literal with its unit, scaled to the base unit, or undefined when `text` does not start with one. */
function literal(text: string): { value: number; unit?: MetricUnit; unitText?: string; length: number } | undefined {
  const n = NUM.exec(text);
  if (!n) return undefined;
  let value = Number(n[0]);
  const u = UNIT.exec(text.slice(n[0].length));
  if (!u || u[0].trim() === "") return { value, length: n[0].length };
  let unit: MetricUnit | undefined;
  if (u[1]) {
    value *= TIME[u[1]];
    unit = "s";
  } else {
    if (u[2] === "%") {
      value /= 100;
      unit = "fraction";
    } else if (u[2]) value *= SCALE[u[2]];
    if (u[3]) unit = DIMENSION[u[3]];
  }
  // Multiplying by a power of ten leaves binary noise (50 × 1e-3): keep 15 significant digits.
  value = Number(value.toPrecision(15));
  return { value, unit, unitText: u[0].trim(), length: n[0].length + u[0].length };
}

/** The longest assertion or expression accepted, in characters. */
export const MAX_EXPR_LENGTH = 1000;
/** The deepest nesting of parentheses accepted. */
export const MAX_EXPR_DEPTH = 32;

const tooLong = (text: string) =>
  text.length > MAX_EXPR_LENGTH
    ? `expression too long (${text.length} characters; at most ${MAX_EXPR_LENGTH})`
    : undefined;

/**
 * Parses an expression, or returns an error message (also for one longer
 * than {@link MAX_EXPR_LENGTH} characters or nested deeper than
 * {@link MAX_EXPR_DEPTH} parentheses).
 */
export function parseExpr(text: string): Expr | string {
  const long = tooLong(text);
  if (long) return long;
  let s = text.trim();
  let depth = 0;
  const skip = () => (s = s.trimStart());
  const sum = (): Expr | string => {
    let left = product();
    if (typeof left === "string") return left;
    for (skip(); s[0] === "+" || s[0] === "-"; skip()) {
      const op = s[0] as "+" | "-";
      s = s.slice(1);
      const right = product();
      if (typeof right === "string") return right;
      left = { kind: "bin", op, left, right };
    }
    return left;
  };
  const product = (): Expr | string => {
    let left = factor();
    if (typeof left === "string") return left;
    for (skip(); s[0] === "*" || s[0] === "/" || s[0] === "×"; skip()) {
      const op = s[0] === "/" ? "/" : "*";
      s = s.slice(1);
      const right = factor();
      if (typeof right === "string") return right;
      left = { kind: "bin", op, left, right };
    }
    return left;
  };
  const factor = (): Expr | string => {
    skip();
    if (s[0] === "(") {
      if (++depth > MAX_EXPR_DEPTH) return `expression nested too deeply (more than ${MAX_EXPR_DEPTH} parentheses)`;
      s = s.slice(1);
      const e = sum();
      if (typeof e === "string") return e;
      depth--;
      skip();
      if (s[0] !== ")") return "missing ')'";
      s = s.slice(1);
      return e;
    }
    const n = literal(s);
    if (n) {
      s = s.slice(n.length);
      return n.unit
        ? { kind: "num", value: n.value, unit: n.unit, unitText: n.unitText }
        : { kind: "num", value: n.value };
    }
    const r = REF.exec(s);
    if (r) {
      s = s.slice(r[0].length).replace(/^\.$/, "");
      return { kind: "ref", name: r[0].replace(/\.$/, "") };
    }
    return s === "" ? "expected a number or a metric" : `unexpected '${clip(s[0])}'`;
  };
  const e = sum();
  if (typeof e === "string") return e;
  skip();
  return s === "" ? e : `unexpected '${clip(s)}'`;
}

/** The metric names an expression reads. */
export function exprRefs(e: Expr): string[] {
  if (e.kind === "ref") return [e.name];
  if (e.kind === "bin") return [...exprRefs(e.left), ...exprRefs(e.right)];
  return [];
}

/**
 * Why the units written in an expression do not fit a metric measured in
 * `unit`, or undefined when they do (unitless numbers always fit).
 */
export function unitMismatch(e: Expr, unit: MetricUnit): string | undefined {
  if (e.kind === "num") {
    return e.unit && e.unit !== unit ? `'${e.unitText}' is not a unit of this metric, which is in ${unit}` : undefined;
  }
  if (e.kind === "bin") return unitMismatch(e.left, unit) ?? unitMismatch(e.right, unit);
  return undefined;
}

/** Evaluates an expression; `lookup` gives each metric's value. */
export function evalExpr(e: Expr, lookup: (name: string) => number): number {
  switch (e.kind) {
    case "num":
      return e.value;
    case "ref":
      return lookup(e.name);
    case "bin": {
      const a = evalExpr(e.left, lookup);
      const b = evalExpr(e.right, lookup);
      return e.op === "+" ? a + b : e.op === "-" ? a - b : e.op === "*" ? a * b : a / b;
    }
  }
}

/**
 * Parses an assertion value (a string, a bare number, or `{value, within}`).
 *
 * @returns the bound, or an error message
 */
export function parseBound(v: unknown): Bound | string {
  if (typeof v === "number" && Number.isFinite(v)) {
    return { op: "==", rhs: { kind: "num", value: v }, text: `== ${v}`, bare: true };
  }
  if (v !== null && typeof v === "object" && !Array.isArray(v)) {
    const m = v as Record<string, unknown>;
    const keys = Object.keys(m).sort().join(",");
    if (keys !== "value,within" || typeof m.value !== "number") return "expected {value: <number>, within: <n>%|<n>}";
    return parseBound(`== ${m.value} ± ${m.within}`);
  }
  if (typeof v !== "string") return `expected "<op> <expression>", got ${describeValue(v)}`;
  const long = tooLong(v);
  if (long) return long;
  const at = /^(.*?)\s*@\s*(.*?)\s*$/.exec(v);
  if (at) {
    const c = /^(\d+(?:\.\d*)?|\.\d+)\s*(%?)$/.exec(at[2]);
    const confidence = c ? Number(c[1]) / (c[2] ? 100 : 1) : NaN;
    if (!(confidence > 0.5 && confidence < 1)) {
      return `expected a confidence above 50% and below 100% after '@' (as in "< 2s @ 90%"), got ${
        describeValue(at[2])
      }`;
    }
    const b = parseBound(at[1]);
    if (typeof b === "string") return b;
    if (b.op === "==") return "a confidence ('@') goes with <, <=, > or >=";
    return { ...b, confidence, text: `${b.text} @ ${Number((confidence * 100).toPrecision(6))}%` };
  }
  const m =
    /^\s*(<=|>=|==|<|>)?\s*(.*?)\s*(?:±\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(%|us|µs|ms|min|h|s)?)?\s*$/
      .exec(v);
  if (!m || m[2] === "") return `expected "<op> <expression>" with op one of < <= > >= ==, got ${describeValue(v)}`;
  const op = (m[1] ?? "==") as Operator;
  if (!m[1] && !literal(m[2])) {
    return `expected "<op> <expression>" with op one of < <= > >= ==, got ${describeValue(v)}`;
  }
  const rhs = parseExpr(m[2]);
  if (typeof rhs === "string") return rhs.startsWith("expression ") ? rhs : `${rhs} in ${describeValue(v)}`;
  if (m[3] !== undefined && op !== "==") return "a ± tolerance goes with ==";
  if (m[3] !== undefined && Number(m[3]) < 0) return `a tolerance cannot be negative, got ${m[3]}${m[4] ?? ""}`;
  const tolerance = m[3] !== undefined
    ? {
      amount: m[4] === "%" ? Number(m[3]) / 100 : Number((Number(m[3]) * (m[4] ? TIME[m[4]] : 1)).toPrecision(15)),
      relative: m[4] === "%",
    }
    : undefined;
  const text = `${op} ${m[2]}${m[3] !== undefined ? ` ± ${m[3]}${m[4] ?? ""}` : ""}`;
  const bare = m[1] === undefined && m[3] === undefined ? { bare: true as const } : {};
  return tolerance ? { op, rhs, tolerance, text, ...bare } : { op, rhs, text, ...bare };
}

/**
 * Checks `actual` against the bound's expected value. `==` without a
 * tolerance allows a relative difference of 1e-9. NaN satisfies nothing.
 */
export function holds(b: Bound, actual: number, expected: number): boolean {
  if (Number.isNaN(actual) || Number.isNaN(expected)) return false;
  switch (b.op) {
    case "<":
      return actual < expected;
    case "<=":
      return actual <= expected;
    case ">":
      return actual > expected;
    case ">=":
      return actual >= expected;
    case "==":
      return Math.abs(actual - expected) <= allowedDifference(b, expected);
  }
}

/** The difference `==` accepts: the tolerance, or a relative 1e-9 without one. */
function allowedDifference(b: Bound, expected: number): number {
  const t = b.tolerance;
  return t ? (t.relative ? t.amount * Math.abs(expected) : t.amount) : 1e-9 * Math.max(1, Math.abs(expected));
}

/**
 * How far `actual` is from breaking the bound (negative: broken; -Infinity
 * when either side has no value): seeds are ranked by it.
 */
export function margin(b: Bound, actual: number, expected: number): number {
  if (Number.isNaN(actual) || Number.isNaN(expected)) return -Infinity;
  switch (b.op) {
    case "<":
    case "<=":
      return expected - actual;
    case ">":
    case ">=":
      return actual - expected;
    case "==":
      return allowedDifference(b, expected) - Math.abs(actual - expected);
  }
}
