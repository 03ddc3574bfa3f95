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

/** Prints `task: message (deno task task --help)` on stderr and exits 2. */
export function usageError(task: string, message: string): never {
  console.error(`${task}: ${message} (deno task ${task} --help)`);
  Deno.exit(2);
}

/**
 * Parses a task's arguments, or exits: 0 after printing the usage for
 * `-h`/`--help`, 2 with one line for anything it does not accept.
 */
export function parseTaskArgs(spec: TaskArgs, args: readonly string[]): ParsedTaskArgs {
  if (args.some((a) => a === "-h" || a === "--help")) {
    console.log(spec.usage);
    Deno.exit(0);
  }
  const files: string[] = [];
  const options: Record<string, string[]> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith("-") || a === "-") {
      if (!spec.files) usageError(spec.task, `takes no arguments, got '${a}'`);
      files.push(a);
      continue;
    }
    const eq = a.indexOf("=");
    const name = eq >= 0 ? a.slice(0, eq) : a;
    if (!spec.options?.includes(name)) {
      usageError(
        spec.task,
        spec.options?.length || spec.files ? `unknown option '${a}'` : `takes no arguments, got '${a}'`,
      );
    }
    const value = eq >= 0 ? a.slice(eq + 1) : args[++i];
    if (value === undefined || value === "" || (eq < 0 && value.startsWith("--"))) {
      usageError(spec.task, `${name} needs a value`);
    }
    (options[name] ??= []).push(value);
  }
  return { files, options };
}
