/**
 * `deno task compare a.json b.json [--report diff.html] [--changed]`: every
 * metric of two runs' `--output_json` documents with its change, and with
 * `--report` an HTML page with the CDFs and time series of both overlaid.
 *
 * @module
 */
import { compareReportHtml, formatCompareTable, runDocumentProblem, runMetricRows } from "../core/report/compare.ts";
import { OutputError, outputFileProblem, reason, writeFor } from "../cli_output.ts";
import { CONSOLE_OUTPUT, readTaskArgs, usageLine } from "../scenarios/_args.ts";
import type { TaskOutput } from "../scenarios/_args.ts";
import { taskMain } from "../scenarios/_args.ts";

const USAGE = `Usage: deno task compare A.json B.json [options]

Compares two runs' --output_json documents (deno task sim --output_json, or
deno task check --json-dir): every statistic of every metric, the overall
summary, load, headroom and the groups both have, with the change from A to B.
Changes for the worse are marked.

Options:
  --report FILE   also write an HTML page: the change table and the CDFs and time
                  series of both runs overlaid (runs written with time series)
  --changed       print only the metrics that changed
  -h, --help      show this help and exit

Exit codes: 0 compared; 2 bad input.`;

/** Reads a run document, or the one-line reason it is not one. */
function readRun(path: string): unknown | string {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (e) {
    return `${path}: cannot read: ${reason(e)}`;
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return `${path}: not JSON: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}`;
  }
  const problem = runDocumentProblem(doc);
  return problem === undefined
    ? doc
    : `${path}: not a run document (${problem}; write one with deno task sim --output_json)`;
}

/** Runs `deno task compare` with `argv`: the exit code (0 compared, 2 bad input). */
export async function runCompare(argv: readonly string[], io: TaskOutput = CONSOLE_OUTPUT): Promise<number> {
  const flags = argv.filter((a) => a === "--changed");
  const parsed = readTaskArgs(
    { task: "compare", usage: USAGE, options: ["--report"], files: true },
    argv.filter((a) => a !== "--changed"),
    io,
  );
  if (typeof parsed === "number") return parsed;
  const bad = (message: string) => (io.err(usageLine("compare", message)), 2);
  const { files, options } = parsed;
  if (files.length !== 2) return bad(`expected two JSON files, got ${files.length}`);
  const report = options["--report"]?.at(-1);
  const problem = report !== undefined ? outputFileProblem("--report", report) : undefined;
  if (problem) return bad(problem);
  const [a, b] = files.map(readRun);
  for (const d of [a, b]) if (typeof d === "string") return (io.err(`compare: ${d}`), 2);
  const rows = runMetricRows(a, b);
  io.out(`a: ${files[0]}\nb: ${files[1]}`);
  io.out(formatCompareTable(a, b, rows, { changedOnly: flags.length > 0 }).trimEnd());
  if (report !== undefined) {
    const html = await compareReportHtml(a, b, rows, { a: files[0], b: files[1] });
    try {
      writeFor("--report", report, () => Deno.writeTextFileSync(report, html));
    } catch (e) {
      if (!(e instanceof OutputError)) throw e;
      return (io.err(`compare: ${e.message}`), 2);
    }
    io.err(`report written to ${report}`);
  }
  return 0;
}

if (import.meta.main) Deno.exitCode = await taskMain("compare", () => runCompare(Deno.args));
