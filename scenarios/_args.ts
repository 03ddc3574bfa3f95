/**
 * Argument handling shared by the `deno task` scripts other than `sim`:
 * `-h`/`--help` prints the usage on stdout and exits 0; an unknown option or
 * a missing value is one line on stderr and exit 2.
 *
 * @module
 */

/** What a task accepts. */
export interface TaskArgs {
  /** The task's name, as after `deno task`. */
  readonly task: string;
  /** The help text; its first line starts with `Usage: deno task <name>`. */
  readonly usage: string;
  /** Options that take a value (`--x V` or `--x=V`), each possibly repeated. */
  readonly options?: readonly string[];
  /** Whether the task takes file arguments. */
  readonly files?: boolean;
}

/** The parsed arguments: files, and the values of each option in order. */
export interface ParsedTaskArgs {
  /** File arguments. */
  readonly files: string[];
  /** Option name (with its dashes) to its values. */
  readonly options: Record<string, string[]>;
}

/** Where a task writes its lines (the process's stdout and stderr, or a test's buffers). */
export interface TaskOutput {
  /** A line for stdout. */
  out(line: string): void;
  /** A line for stderr. */
  err(line: string): void;
}

/** The process's own stdout and stderr. */
export const CONSOLE_OUTPUT: TaskOutput = { out: (l) => console.log(l), err: (l) => console.error(l) };

/** The arguments a task runs with, or the exit it ends with before running (help, or a usage error). */
export type TaskArgsOutcome =
  | { readonly kind: "run"; readonly args: ParsedTaskArgs }
  | { readonly kind: "exit"; readonly code: 0 | 2; readonly out?: string; readonly err?: string };

/** `task: message (deno task task --help)`: the one line of a usage error. */
export function usageLine(task: string, message: string): string {
  return `${task}: ${message} (deno task ${task} --help)`;
}

/** Prints `task: message (deno task task --help)` on stderr and exits 2. */
export function usageError(task: string, message: string): never {
  console.error(usageLine(task, message));
  Deno.exit(2);
}

/**
 * Parses a task's arguments, or exits: 0 after printing the usage for
 * `-h`/`--help`, 2 with one line for anything it does not accept.
 */
export function parseTaskArgs(spec: TaskArgs, args: readonly string[]): ParsedTaskArgs {
  const r = readTaskArgs(spec, args);
  if (r.kind === "run") return r.args;
  if (r.out !== undefined) console.log(r.out);
  if (r.err !== undefined) console.error(r.err);
  Deno.exit(r.code);
}

/**
 * Parses a task's arguments without exiting: the usage for `-h`/`--help`
 * (exit 0), one line for anything it does not accept (exit 2), or the
 * arguments to run with. Tasks that run in-process in tests use this.
 */
export function readTaskArgs(spec: TaskArgs, args: readonly string[]): TaskArgsOutcome {
  if (args.some((a) => a === "-h" || a === "--help")) return { kind: "exit", code: 0, out: spec.usage };
  const fail = (message: string): TaskArgsOutcome => ({ kind: "exit", code: 2, err: usageLine(spec.task, message) });
  const files: string[] = [];
  const options: Record<string, string[]> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith("-") || a === "-") {
      if (!spec.files) return fail(`takes no arguments, got '${a}'`);
      files.push(a);
      continue;
    }
    const eq = a.indexOf("=");
    const name = eq >= 0 ? a.slice(0, eq) : a;
    if (!spec.options?.includes(name)) {
      return fail(spec.options?.length || spec.files ? `unknown option '${a}'` : `takes no arguments, got '${a}'`);
    }
    const value = eq >= 0 ? a.slice(eq + 1) : args[++i];
    if (value === undefined || value === "" || (eq < 0 && value.startsWith("--"))) {
      return fail(`${name} needs a value`);
    }
    (options[name] ??= []).push(value);
  }
  return { kind: "run", args: { files, options } };
}

/** A share of a task's work: the `index`-th (0-based) of `count`. */
export interface Shard {
  /** 0 ≤ index < count (as Kubernetes' JOB_COMPLETION_INDEX counts). */
  readonly index: number;
  /** How many shares. */
  readonly count: number;
}

/** `--shard I/N` as a share, or the usage error's message. */
export function parseShard(text: string): Shard | string {
  const m = /^(\d+)\/(\d+)$/.exec(text);
  const [index, count] = m ? [Number(m[1]), Number(m[2])] : [NaN, NaN];
  return count >= 1 && index >= 0 && index < count
    ? { index, count }
    : `--shard: expected I/N with 0 ≤ I < N (I counted from 0, as JOB_COMPLETION_INDEX), got '${text}'`;
}
