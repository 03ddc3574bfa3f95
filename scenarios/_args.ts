/**
 * Argument handling shared by the `deno task` scripts other than `sim`:
 * `-h`/`--help` prints the usage on stdout and exits 0; an unknown option or
 * a missing value is one line on stderr and exit 2.
 *
 * @module
 */
import { InputError } from "../core/config/errors.ts";
import { capMessage } from "../core/config/limits.ts";
import { OutputError } from "../cli_output.ts";
import denoJson from "../deno.json" with { type: "json" };

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

/** The process's own stdout and stderr; an error line is cut at {@link TASK_LIMITS}' `messageChars`. */
export const CONSOLE_OUTPUT: TaskOutput = { out: (l) => console.log(l), err: (l) => console.error(capMessage(l)) };

/**
 * Runs a task's entry point as its process's main: its exit code, and for
 * an error that escapes it, one line instead of a stack trace: exit 2 for
 * bad input or an output that cannot be written (an {@link InputError} or
 * {@link OutputError}, located), exit 1 and `task: internal error: …` for
 * anything else (the stack with SERVINGCAST_DEBUG set). Every task's
 * `import.meta.main` goes through it.
 */
export async function taskMain(task: string, run: () => number | Promise<number>): Promise<number> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof InputError || e instanceof OutputError) {
      CONSOLE_OUTPUT.err(e.message);
      return 2;
    }
    CONSOLE_OUTPUT.err(`${task}: internal error: ${e instanceof Error ? e.message : String(e)}`);
    // The stack only when asked for, and only when the task's permission set lets it read the variable.
    const debug = Deno.permissions.querySync({ name: "env", variable: "SERVINGCAST_DEBUG" }).state === "granted" &&
      Deno.env.get("SERVINGCAST_DEBUG");
    if (debug) console.error(e instanceof Error ? e.stack : e);
    return 1;
  }
}

/** What `--version` prints, for every task as for the simulator: `servingcast <version of deno.json>`. */
export const VERSION_LINE = `servingcast ${denoJson.version}`;

/** `task: message (deno task task --help)`: the one line of a usage error. */
export function usageLine(task: string, message: string): string {
  return `${task}: ${message} (deno task ${task} --help)`;
}

/**
 * Parses a task's arguments: the arguments to run with, or the exit code the
 * task ends with at once: 0 after the usage went to `io.out` for
 * `-h`/`--help`, 2 after one line went to `io.err` for anything it does not
 * accept. Every task's in-process entry point starts here.
 *
 * @example
 * ```ts
 * import { readTaskArgs } from "./_args.ts";
 * import assert from "node:assert/strict";
 *
 * const spec = { task: "demo", usage: "Usage: deno task demo [--n N]", options: ["--n"] };
 * const lines: string[] = [];
 * const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) };
 * assert.deepEqual(readTaskArgs(spec, ["--n=3", "--n", "4"], io), { files: [], options: { "--n": ["3", "4"] } });
 * assert.equal(readTaskArgs(spec, ["--help"], io), 0);
 * assert.equal(readTaskArgs(spec, ["--m"], io), 2);
 * assert.deepEqual(lines, ["Usage: deno task demo [--n N]", "demo: unknown option '--m' (deno task demo --help)"]);
 * ```
 */
export function readTaskArgs(spec: TaskArgs, args: readonly string[], io: TaskOutput): ParsedTaskArgs | 0 | 2 {
  if (args.some((a) => a === "-h" || a === "--help")) return (io.out(spec.usage), 0);
  if (args.includes("--version")) return (io.out(VERSION_LINE), 0);
  const fail = (message: string) => (io.err(usageLine(spec.task, message)), 2 as const);
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
  return { files, options };
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
