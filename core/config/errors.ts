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

/** Formats `file:line:col: key.path: detail`, leaving out the parts that are unknown. */
export function formatInputError(loc: SourceLocation, detail: string): string {
  let head = loc.file;
  if (loc.line !== undefined) {
    head += `:${loc.line}`;
    if (loc.col !== undefined) head += `:${loc.col}`;
  }
  const key = loc.keyPath ? ` ${loc.keyPath}:` : "";
  return `${head}:${key} ${detail}`;
}

/** Renders a value the way a user wrote it in YAML, for "got …" in messages. */
export function describeValue(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (typeof v === "string") return JSON.stringify(v);
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
