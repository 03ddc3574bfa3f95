/**
 * `deno task baseline [scenario…]`: runs scenarios that have `baseline:`
 * and rewrites their snapshots (`__baselines__/<name>.json` beside them).
 * With no file, every such scenario of `scenarios/`. Review the diff before
 * committing it. Another repository runs it from the package (the
 * `./baseline` export) with its own write permission:
 * `deno run --allow-read --allow-write=scenarios jsr:@servingcast/servingcast/baseline scenarios/`.
 *
 * @module
 */
import { formatBaseline, loadScenario, runScenario } from "../core/scenario/mod.ts";
import type { Scenario } from "../core/scenario/mod.ts";
import { basename, dirname, join } from "node:path";
import { fileIn } from "../core/scenario/scenario.ts";
import { expandFolders, scenarioFiles } from "./_files.ts";
import { CONSOLE_OUTPUT, readTaskArgs, usageLine } from "./_args.ts";
import type { TaskOutput } from "./_args.ts";
import { makeOutputDir, outputDirProblem, OutputError, outputFileProblem, writeOutput } from "../cli_output.ts";
import { clip, InputError } from "../core/config/errors.ts";
import { taskMain } from "./_args.ts";

const USAGE = `Usage: deno task baseline [scenario.yaml …] [--baseline-dir DIR]

Runs the scenarios that have a 'baseline:' section and rewrites their snapshots
(__baselines__/<name>.json beside them). Review the diff before committing it.

  scenario.yaml …     the scenarios (default: every scenario with 'baseline:')
  --baseline-dir DIR  write the snapshots there instead (as deno task check --baseline-dir reads them);
                      the task's permission set writes under scenarios/ only: elsewhere, run
                      deno run -P=baseline --allow-write=DIR scenarios/baseline.ts …
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
  const named = expandFolders(args.files);
  if ("empty" in named) {
    io.err(usageLine("baseline", `${clip(named.empty)} is a folder with no scenario files (*.yaml) in it`));
    return 2;
  }
  const files = args.files.length ? named.files : defaultFiles();
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
    // Where the snapshot goes, checked before the run (which may take minutes).
    const flag = baselineDir !== undefined ? "--baseline-dir" : shown(s.file);
    const dir = baselineDir ?? join(dirname(s.file), "__baselines__");
    // The name is checked when the scenario is loaded; the path must still stay in its folder.
    const out = fileIn(dir, basename(s.baseline.file));
    if (out !== s.baseline.file) throw new Error(`refusing to write ${s.baseline.file}: not in ${dirname(out)}`);
    const problem = snapshotProblem(file, flag, baselineDir, out);
    if (problem) {
      io.err(`baseline: ${problem}`);
      code = 2;
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
    try {
      // Never through a symbolic link: a linked __baselines__ or snapshot file would write outside the folder.
      const folder = baselineDir !== undefined
        ? makeOutputDir(flag, baselineDir)
        : makeOutputDir(flag, dirname(s.file), "__baselines__");
      writeOutput(flag, join(folder, basename(out)), formatBaseline(r.snapshot), [s.file], true);
    } catch (e) {
      if (!(e instanceof OutputError)) throw e;
      io.err(`baseline: ${e.message}${baselineDir !== undefined ? " (see deno task baseline --help)" : ""}`);
      code = 2;
      continue;
    }
    io.out(`wrote ${out} (${Object.keys(r.snapshot).length} metrics)`);
  }
  return code;
}

/**
 * The scenarios to record without files named: those of `scenarios/` in
 * the working folder (a consumer repository's, as `deno test` finds its
 * own), else this repository's.
 */
function defaultFiles(): string[] {
  let own = false;
  try {
    own = Deno.statSync("scenarios").isDirectory;
  } catch {
    // No scenarios/ here.
  }
  const found = own ? expandFolders(["scenarios"]) : undefined;
  return found && "files" in found ? found.files : scenarioFiles();
}

/**
 * Why the snapshot `out` of the scenario `file` cannot be written, before
 * the run, or undefined: the task's permission set (write access under
 * scenarios/ only, so the fix is a command), a symbolic link at its folder
 * or at the file, or a folder that cannot be created. `--baseline-dir` is
 * named only when it was given (`baselineDir`).
 */
function snapshotProblem(file: string, flag: string, baselineDir: string | undefined, out: string): string | undefined {
  const dir = dirname(out);
  const given = baselineDir !== undefined ? ` (--baseline-dir ${shown(baselineDir)})` : "";
  if (Deno.permissions.querySync({ name: "write", path: out }).state !== "granted") {
    const again = [
      "deno run -P=baseline",
      shellWord(`--allow-write=${dir}`),
      "scenarios/baseline.ts",
      shellWord(file),
      ...(baselineDir !== undefined ? ["--baseline-dir", shellWord(baselineDir)] : []),
    ].join(" ");
    return `${shown(file)}: cannot write its snapshot ${shown(out)}${given}: the task's permission set writes under ` +
      `scenarios/ only; run ${clip(again, 1200)}`;
  }
  if (baselineDir === undefined && isLink(dir)) {
    return `${flag}: ${shown(dir)} is a symbolic link; outputs are never written through one (remove it)`;
  }
  const folder = outputDirProblem(flag, dir);
  if (folder) return folder;
  return isFolder(dir) ? outputFileProblem(flag, out, [file], true) : undefined;
}

/** A path as a message shows it: escaped, and cut only when extreme. */
const shown = (path: string) => clip(path, 500);

/** A word of a shell command, quoted when it holds more than plain path characters. */
const shellWord = (w: string) => (/^[\w./=@%+:,-]+$/.test(w) ? w : `'${w.replaceAll("'", "'\\''")}'`);

/** Whether a symbolic link is at `path` (not followed). */
function isLink(path: string): boolean {
  try {
    return Deno.lstatSync(path).isSymlink;
  } catch {
    return false;
  }
}

/** Whether a folder is at `path` (followed). */
function isFolder(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

if (import.meta.main) Deno.exitCode = await taskMain("baseline", () => runBaseline(Deno.args));
