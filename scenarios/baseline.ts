/**
 * `deno task baseline [scenario…]`: runs scenarios that have `baseline:`
 * and rewrites their snapshots (`__baselines__/<name>.json` beside them).
 * With no file, every such scenario. Review the diff before committing it.
 *
 * @module
 */
import { InputError } from "../core/config/errors.ts";
import { formatBaseline, loadScenario, runScenario } from "../core/scenario/mod.ts";
import type { Scenario } from "../core/scenario/mod.ts";
import { basename, dirname, join } from "node:path";
import { fileIn } from "../core/scenario/scenario.ts";
import { scenarioFiles } from "./_files.ts";
import { CONSOLE_OUTPUT, readTaskArgs } from "./_args.ts";
import type { TaskOutput } from "./_args.ts";
import { OutputError, writeFor } from "../cli_output.ts";
import { taskMain } from "./_args.ts";

const USAGE = `Usage: deno task baseline [scenario.yaml …] [--baseline-dir DIR]

Runs the scenarios that have a 'baseline:' section and rewrites their snapshots
(__baselines__/<name>.json beside them). Review the diff before committing it.

  scenario.yaml …     the scenarios (default: every scenario with 'baseline:')
  --baseline-dir DIR  write the snapshots there instead (as deno task check --baseline-dir reads them);
                      the task's permission set writes under scenarios/ only: elsewhere, run
                      deno run --allow-read --allow-write=DIR scenarios/baseline.ts …
  -h, --help          show this help and exit

Exit codes: 0 written; 2 bad input (one line per bad file).`;

/**
 * `deno task baseline` in this process: writes the snapshots of the scenarios named in `argv` (default: every scenario
 * with `baseline:`), its lines to `io`.
 *
 * @returns the exit code: 0 written (or help), 2 bad input or bad arguments
 */
export function runBaseline(argv: readonly string[], io: TaskOutput = CONSOLE_OUTPUT): number {
  const args = readTaskArgs({ task: "baseline", usage: USAGE, files: true, options: ["--baseline-dir"] }, argv, io);
  if (typeof args === "number") return args;
  const baselineDir = args.options["--baseline-dir"]?.at(-1);
  const files = args.files.length ? args.files : scenarioFiles();
  let code = 0;
  for (const file of files) {
    let s: Scenario;
    try {
      s = loadScenario(file, undefined, { baselineDir });
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      io.err(e.message);
      code = 2;
      continue;
    }
    if (!s.baseline) {
      if (args.files.length) io.err(`${file}: no 'baseline:' in this scenario, nothing written`);
      continue;
    }
    let r;
    try {
      r = runScenario({ ...s, baseline: undefined });
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      io.err(e.message);
      code = 2;
      continue;
    }
    // The name is checked when the scenario is loaded; the path must still stay in __baselines__.
    const out = fileIn(baselineDir ?? join(dirname(s.file), "__baselines__"), basename(s.baseline.file));
    if (out !== s.baseline.file) throw new Error(`refusing to write ${s.baseline.file}: not in ${dirname(out)}`);
    try {
      writeFor("--baseline-dir", out, () => {
        Deno.mkdirSync(dirname(out), { recursive: true });
        Deno.writeTextFileSync(out, formatBaseline(r.snapshot));
      });
    } catch (e) {
      if (!(e instanceof OutputError)) throw e;
      io.err(`baseline: ${e.message} (see deno task baseline --help)`);
      code = 2;
      continue;
    }
    io.out(`wrote ${out} (${Object.keys(r.snapshot).length} metrics)`);
  }
  return code;
}

if (import.meta.main) Deno.exitCode = await taskMain("baseline", () => runBaseline(Deno.args));
