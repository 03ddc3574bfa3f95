/**
 * `deno task compare a.json b.json [--report diff.html] [--changed]`: every
 * metric of two runs' `--output_json` documents with its change, and with
 * `--report` an HTML page with the CDFs and time series of both overlaid.
 *
 * @module
 */
import {
  compareReportHtml,
  compareReportNotes,
  formatCompareTable,
  readRunDocument,
  runMetricRows,
} from "../core/report/compare.ts";
import { clip } from "../core/config/errors.ts";
import { denoFileSystem } from "../core/config/load.ts";
import { OutputError, outputFileProblem, reason, writeOutput } from "../cli_output.ts";
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
                  series of both runs overlaid (runs written with time series;
                  at most 256 points drawn per series, a longer one sampled)
  --changed       print only the metrics that changed
  -h, --help      show this help and exit

Exit codes: 0 compared; 2 bad input.`;

/** A path as a message shows it: escaped, and cut when extreme. */
const shown = (path: string) => clip(path, 500);

/**
 * Reads a run document through the one input reader (a FIFO, a device or a
 * file over its size limit is refused before it is opened), or the
 * one-line reason it is not one.
 */
function readRun(path: string): unknown | string {
  let text: string;
  try {
    text = denoFileSystem.readText(path);
  } catch (e) {
    return `${shown(path)}: cannot read: ${reason(e)}`;
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return `${shown(path)}: not JSON: ${clip(e instanceof Error ? e.message.split("\n")[0] : String(e), 200)}`;
  }
  const r = readRunDocument(doc);
  return typeof r !== "string"
    ? doc
    : `${shown(path)}: not a run document (${clip(r, 300)}; write one with deno task sim --output_json)`;
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
  // Checked before anything is read: never through a link, never over an input.
  const problem = report !== undefined ? outputFileProblem("--report", report, files) : undefined;
  if (problem) return bad(problem);
  const [a, b] = files.map(readRun);
  for (const d of [a, b]) if (typeof d === "string") return (io.err(`compare: ${d}`), 2);
  const rows = runMetricRows(a, b);
  io.out(`a: ${shown(files[0])}`);
  io.out(`b: ${shown(files[1])}`);
  for (const line of formatCompareTable(a, b, rows, { changedOnly: flags.length > 0 }).trimEnd().split("\n")) {
    io.out(line);
  }
  if (report !== undefined) {
    const html = await compareReportHtml(a, b, rows, { a: files[0], b: files[1] });
    try {
      writeOutput("--report", report, html, files);
    } catch (e) {
      if (!(e instanceof OutputError)) throw e;
      return (io.err(`compare: ${e.message}`), 2);
    }
    for (const note of compareReportNotes(a, b, { a: shown(files[0]), b: shown(files[1]) })) io.err(`compare: ${note}`);
    io.err(`report written to ${shown(report)}`);
  }
  return 0;
}

if (import.meta.main) Deno.exitCode = await taskMain("compare", () => runCompare(Deno.args));
