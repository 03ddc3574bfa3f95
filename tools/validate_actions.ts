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
import { validateAction, validateWorkflow } from "@action-validator/core";
import type { ValidationError } from "@action-validator/core";
import { parseTaskArgs } from "../scenarios/_args.ts";

const { files: named } = parseTaskArgs({
  task: "validate:actions",
  usage: `Usage: deno task validate:actions [FILE …]

Validates GitHub Actions files against their schemas (action-validator 0.6.0,
offline): action.yml (or action.yaml) at the repository root when present, and
every .github/workflows/*.yml and *.yaml. With FILE arguments, those instead;
a file named action.yml or action.yaml is an action, anything else a workflow.

Prints PASS or FAIL per file and each error's path and title; exits 0 when
every file is valid, 1 when one is not, 2 on a usage error or a missing file.

  -h, --help   show this help and exit`,
  files: true,
}, Deno.args);

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

/** What to validate: the name to print and where to read it. */
const files: { name: string; at: string | URL }[] = named.length > 0
  ? named.map((f) => ({ name: f, at: f }))
  : defaultFiles().map((f) => ({ name: f, at: new URL(f, ROOT) }));
if (files.length === 0) {
  console.log("validate:actions: no action.yml and no .github/workflows/*.yml to validate");
  Deno.exit(0);
}
let invalid = 0;
for (const { name, at } of files) {
  let text: string;
  try {
    text = Deno.readTextFileSync(at);
  } catch (e) {
    const why = e instanceof Deno.errors.NotFound ? "file not found" : e instanceof Error ? e.message : String(e);
    console.error(`${name}: cannot read: ${why}`);
    Deno.exit(2);
  }
  const isAction = /(^|[\/\\])action\.ya?ml$/.test(name);
  const state = isAction ? validateAction(text) : validateWorkflow(text);
  if (state.errors.length === 0) {
    console.log(`PASS ${name} (${isAction ? "action" : "workflow"})`);
    continue;
  }
  invalid++;
  console.log(`FAIL ${name} (${isAction ? "action" : "workflow"}): ${state.errors.length} error(s)`);
  for (const e of state.errors) console.log(describe(e));
}
console.log(`${files.length - invalid} valid, ${invalid} invalid`);
Deno.exit(invalid > 0 ? 1 : 0);
