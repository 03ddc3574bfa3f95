/**
 * The one error type a user of the simulator sees for bad input.
 *
 * It carries where the problem is (file, line, column, key path) so that the
 * CLI can print it in the contract's form
 * `common.yaml:14:5: serving_config.max_tokens_budget: expected a positive integer, got -1`
 * and exit with code 2. Subclasses `TypeError` only to carry that data.
 *
 * @module
 */

/** Where in an input file a problem was found. Lines and columns are 1-based. */
export interface SourceLocation {
  /** The file as the user named it. */
  readonly file: string;
  /** 1-based line, when known. */
  readonly line?: number;
  /** 1-based column, when known. */
  readonly col?: number;
  /** Dotted key path inside the file (`serving_config.block_size`), or "" for the file itself. */
  readonly keyPath?: string;
}

/** Bad input: a missing file, YAML syntax, a schema violation or an infeasible deployment. */
export class InputError extends TypeError {
  /** Where the problem is. */
  readonly location: SourceLocation;
  /** The message without the location prefix. */
  readonly detail: string;

  /**
   * Makes an error whose message is `file:line:col: key.path: detail`.
   *
   * @param location where the problem is
   * @param detail what is wrong, without a final period
   */
  constructor(location: SourceLocation, detail: string) {
    super(formatInputError(location, detail));
    this.name = "InputError";
    this.location = location;
    this.detail = detail;
  }
}

/**
 * Formats `file:line:col: key.path: detail`, leaving out the parts that are unknown.
 *
 * @example Locate a message
 * ```ts
 * import { formatInputError } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const at = { file: "c.yaml", line: 3, col: 5, keyPath: "load_gen.num_requests" };
 * const message = formatInputError(at, "expected a positive integer");
 * assert.equal(message, "c.yaml:3:5: load_gen.num_requests: expected a positive integer");
 * assert.equal(formatInputError({ file: "c.yaml" }, "cannot read"), "c.yaml: cannot read");
 * ```
 */
export function formatInputError(loc: SourceLocation, detail: string): string {
  let head = loc.file;
  if (loc.line !== undefined) {
    head += `:${loc.line}`;
    if (loc.col !== undefined) head += `:${loc.col}`;
  }
  const key = loc.keyPath ? ` ${loc.keyPath}:` : "";
  return `${head}:${key} ${detail}`;
}

/** The most characters of user content a message quotes. */
export const QUOTE_LIMIT = 80;

/** Control, line-separator and bidirectional-override characters, escaped in messages. */
// deno-lint-ignore no-control-regex -- these are the characters escaped
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const ESCAPES: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };
const escapeUnsafe = (s: string) =>
  s.replace(UNSAFE, (c) => ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

/**
 * User text as a message quotes it: at most `limit` characters (then `…`),
 * control characters escaped (`\u0001`, `\n`).
 */
export function clip(s: string, limit: number = QUOTE_LIMIT): string {
  const chars = [...s];
  return chars.length > limit ? `${escapeUnsafe(chars.slice(0, limit).join(""))}…` : escapeUnsafe(s);
}

/**
 * A string in double quotes for "got …": at most {@link QUOTE_LIMIT}
 * characters, escaped as JSON (and bidirectional overrides too); a longer
 * one is cut, followed by `… (N characters)`.
 */
export function quoteString(s: string): string {
  const chars = [...s];
  const head = chars.length > QUOTE_LIMIT ? chars.slice(0, QUOTE_LIMIT).join("") : s;
  const q = escapeUnsafe(JSON.stringify(head));
  return chars.length > QUOTE_LIMIT ? `${q}… (${chars.length} characters)` : q;
}

/** Renders a value the way a user wrote it in YAML, for "got …" in messages (long strings cut). */
export function describeValue(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (typeof v === "string") return quoteString(v);
  if (typeof v === "number") {
    if (Number.isNaN(v)) return ".nan";
    if (v === Infinity) return ".inf";
    if (v === -Infinity) return "-.inf";
    return String(v);
  }
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object") return "a mapping";
  return String(v);
}

/** A limit of a run's `limits:` section as a message writes it, the way a config would: `1e9`, `100000`. */
export const showLimit = (x: number): string => (x >= 1e7 ? x.toExponential().replace("e+", "e") : String(x));
