/**
 * `deno task validate:actions`: validates the repository's GitHub Actions
 * files against their schemas with action-validator 0.6.0 (the WebAssembly
 * core of `npm:@action-validator/cli`, pinned in deno.json; offline): the
 * composite action (`action.yml` or `action.yaml` at the repository root,
 * when present) and every workflow in `.github/workflows/`. Files named on
 * the command line are validated instead.
 *
 * The npm CLI validates one file per process and reads the colour settings
 * of the environment (chalk); calling its core here validates them all in
 * one process that only reads files. The task's permission set `actions` is
 * read access and nothing else (no env, write, net, run or sys); read access
 * everywhere because the core reads its `.wasm` from Deno's npm cache, whose
 * location (`DENO_DIR`) differs per machine.
 *
 * Exit codes: 0 every file valid; 1 a file is invalid; 2 usage, or a named
 * file cannot be read.
 *
 * @module
 */
import type { ValidationError } from "@action-validator/core";
import { CONSOLE_OUTPUT, readTaskArgs } from "../scenarios/_args.ts";
import type { TaskOutput } from "../scenarios/_args.ts";
import { taskMain } from "../scenarios/_args.ts";

const USAGE = `Usage: deno task validate:actions [FILE …]

Validates GitHub Actions files against their schemas (action-validator 0.6.0,
offline): action.yml (or action.yaml) at the repository root when present, and
every .github/workflows/*.yml and *.yaml. With FILE arguments, those instead;
a file named action.yml or action.yaml is an action, anything else a workflow.

Prints PASS or FAIL per file and each error's path and title; exits 0 when
every file is valid, 1 when one is not, 2 on a usage error or a missing file.

  -h, --help   show this help and exit`;

const ROOT = new URL("../", import.meta.url);

/** The default files: the root action (if any) and the workflows, sorted. */
function defaultFiles(): string[] {
  const exists = (p: string) => {
    try {
      return Deno.statSync(new URL(p, ROOT)).isFile;
    } catch {
      return false;
    }
  };
  const action = ["action.yml", "action.yaml"].filter(exists);
  let workflows: string[] = [];
  try {
    workflows = [...Deno.readDirSync(new URL(".github/workflows/", ROOT))]
      .filter((e) => e.isFile && /\.ya?ml$/.test(e.name))
      .map((e) => `.github/workflows/${e.name}`)
      .sort();
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return [...action, ...workflows];
}

/** One line per error: where, what, and the detail when there is one. */
function describe(e: ValidationError): string {
  const where = "path" in e && e.path
    ? e.path
    : "location" in e && e.location
    ? `line ${e.location.line}, column ${e.location.column}`
    : "(file)";
  return `  ${where}: ${e.title}${e.detail ? ` (${e.detail})` : ""}`;
}

/**
 * `deno task validate:actions` in this process, its lines to `io`. The
 * validator's WebAssembly core is loaded only when there is a file to check.
 *
 * @returns the exit code: 0 every file valid (or help), 1 a file invalid, 2 bad arguments or a missing file
 */
export async function runValidateActions(argv: readonly string[], io: TaskOutput = CONSOLE_OUTPUT): Promise<number> {
  const args = readTaskArgs({ task: "validate:actions", usage: USAGE, files: true }, argv, io);
  if (typeof args === "number") return args;
  // What to validate: the name to print and where to read it.
  const files: { name: string; at: string | URL }[] = args.files.length > 0
    ? args.files.map((f) => ({ name: f, at: f }))
    : defaultFiles().map((f) => ({ name: f, at: new URL(f, ROOT) }));
  if (files.length === 0) {
    io.out("validate:actions: no action.yml and no .github/workflows/*.yml to validate");
    return 0;
  }
  const { validateAction, validateWorkflow } = await import("@action-validator/core");
  let invalid = 0;
  for (const { name, at } of files) {
    let text: string;
    try {
      text = Deno.readTextFileSync(at);
    } catch (e) {
      const why = e instanceof Deno.errors.NotFound ? "file not found" : e instanceof Error ? e.message : String(e);
      io.err(`${name}: cannot read: ${why}`);
      return 2;
    }
    const isAction = /(^|[\/\\])action\.ya?ml$/.test(name);
    const state = isAction ? validateAction(text) : validateWorkflow(text);
    if (state.errors.length === 0) {
      io.out(`PASS ${name} (${isAction ? "action" : "workflow"})`);
      continue;
    }
    invalid++;
    io.out(`FAIL ${name} (${isAction ? "action" : "workflow"}): ${state.errors.length} error(s)`);
    for (const e of state.errors) io.out(describe(e));
  }
  io.out(`${files.length - invalid} valid, ${invalid} invalid`);
  return invalid > 0 ? 1 : 0;
}

if (import.meta.main) Deno.exitCode = await taskMain("validate:actions", () => runValidateActions(Deno.args));
