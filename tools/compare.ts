/**
 * `deno task compare a.json b.json [--threshold 5%] [--fail-on worse]
 * [--format table|markdown|github|json] [--report diff.html] [--changed]`:
 * every metric of two runs' `--output_json` documents with its change, a
 * gate on changes for the worse beyond a threshold, and with `--report` an
 * HTML page with the CDFs and time series of both overlaid.
 *
 * @module
 */
import {
  changeText,
  compareMetrics,
  compareReportHtml,
  compareReportNotes,
  formatCompareMarkdown,
  formatCompareTable,
  readRunDocument,
  runMetricRows,
  showValue,
} from "../core/report/compare.ts";
import type { CompareGate } from "../core/report/compare.ts";
import { workflowCommand } from "../core/report/ci_formats.ts";
import { resolveMetric } from "../core/scenario/metric_keys.ts";
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
Changes for the worse are marked; MIN and MAX, which one request at a run's
edge moves, are not judged unless --all-statistics.

Options:
  --threshold T      mark a change only beyond T (5%: a relative change); as
                     METRIC=T for one metric (ttft.p99=10%), repeatable
  --fail-on worse    exit 1 when a metric got worse beyond its threshold
  --all-statistics   judge MIN and MAX too
  --format F         table (default), markdown (the changed metrics as a
                     Markdown table), github (the table and an ::error, or a
                     ::warning without --fail-on, per change for the worse) or
                     json
  --report FILE      also write an HTML page: the change table and the CDFs and time
                     series of both runs overlaid (runs written with time series;
                     at most 256 points drawn per series, a longer one sampled)
  --changed          print only the metrics that changed
  -h, --help         show this help and exit

Exit codes: 0 compared (no regression beyond the threshold with --fail-on
worse); 1 a regression with --fail-on worse; 2 bad input.`;

const FORMATS = ["table", "markdown", "github", "json"] as const;

/**
 * The gate the flags describe, or why not: `--threshold 5%` for every
 * metric, `--threshold ttft.p99=10%` for one (its scenario spelling or
 * its column name).
 */
function gateOf(thresholds: readonly string[], extremes: boolean): CompareGate | string {
  let all = 0;
  const own = new Map<string, number>();
  for (const t of thresholds) {
    const m = /^(?:(.+)=)?\s*(\d+(?:\.\d*)?|\.\d+)\s*%$/.exec(t);
    if (!m) return `--threshold: expected a percentage (5%) or METRIC=PERCENT (ttft.p99=10%), got '${clip(t)}'`;
    const value = Number(m[2]) / 100;
    if (m[1] === undefined) {
      all = value;
      continue;
    }
    const metric = resolveMetric(m[1].trim());
    if (!metric) return `--threshold: unknown metric '${clip(m[1].trim())}'`;
    own.set(metric.name, value);
  }
  return { threshold: (metric) => own.get(metric) ?? all, extremes };
}

/** A number for JSON: null where it is not finite. */
const finite = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);

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

/** Runs `deno task compare` with `argv`: the exit code (0 compared, 1 a regression with --fail-on worse, 2 bad input). */
export async function runCompare(argv: readonly string[], io: TaskOutput = CONSOLE_OUTPUT): Promise<number> {
  const switches = ["--changed", "--all-statistics"];
  const flags = argv.filter((a) => a === "--changed");
  const extremes = argv.includes("--all-statistics");
  const parsed = readTaskArgs(
    {
      task: "compare",
      usage: USAGE,
      options: ["--report", "--threshold", "--fail-on", "--format"],
      files: true,
    },
    argv.filter((a) => !switches.includes(a)),
    io,
  );
  if (typeof parsed === "number") return parsed;
  const bad = (message: string) => (io.err(usageLine("compare", message)), 2);
  const { files, options } = parsed;
  if (files.length !== 2) return bad(`expected two JSON files, got ${files.length}`);
  const failOn = options["--fail-on"]?.at(-1);
  if (failOn !== undefined && failOn !== "worse") return bad(`--fail-on: expected 'worse', got '${clip(failOn)}'`);
  const format = options["--format"]?.at(-1) ?? "table";
  if (!(FORMATS as readonly string[]).includes(format)) {
    return bad(`--format: expected one of ${FORMATS.join(", ")}, got '${clip(format)}'`);
  }
  const gate = gateOf(options["--threshold"] ?? [], extremes);
  if (typeof gate === "string") return bad(gate);
  const report = options["--report"]?.at(-1);
  // Checked before anything is read: never through a link, never over an input.
  const problem = report !== undefined ? outputFileProblem("--report", report, files) : undefined;
  if (problem) return bad(problem);
  const [a, b] = files.map(readRun);
  for (const d of [a, b]) if (typeof d === "string") return (io.err(`compare: ${d}`), 2);
  const rows = runMetricRows(a, b);
  const compared = compareMetrics(a, b, rows, gate);
  const worse = compared.filter((m) => m.verdict === "worse");
  const code = failOn === "worse" && worse.length > 0 ? 1 : 0;
  if (format === "json") {
    io.out(JSON.stringify(
      {
        a: files[0],
        b: files[1],
        regressions: worse.length,
        exit_code: code,
        metrics: compared.map((m) => ({
          metric: m.metric,
          a: finite(m.a),
          b: finite(m.b),
          change: finite(m.delta),
          relative: finite(m.relative),
          verdict: m.verdict || null,
        })),
      },
      null,
      2,
    ));
  } else if (format === "markdown") {
    io.out(formatCompareMarkdown(compared, { a: files[0], b: files[1] }).trimEnd());
  } else {
    io.out(`a: ${shown(files[0])}`);
    io.out(`b: ${shown(files[1])}`);
    for (const line of formatCompareTable(a, b, rows, { changedOnly: flags.length > 0, gate }).trimEnd().split("\n")) {
      io.out(line);
    }
    if (format === "github") {
      for (const m of worse) {
        const beyond = gate.threshold(m.metric) > 0 ? `, beyond its ${100 * gate.threshold(m.metric)}% threshold` : "";
        io.out(workflowCommand(
          failOn === "worse" ? "error" : "warning",
          { title: `compare: ${m.metric}` },
          `${m.metric} got worse: ${showValue(m.a)} → ${showValue(m.b)} (${changeText(m.relative, "from 0")}${beyond})`,
        ));
      }
    }
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
  if (code === 1) io.err(`compare: ${worse.length} metric(s) got worse beyond their threshold`);
  return code;
}

if (import.meta.main) Deno.exitCode = await taskMain("compare", () => runCompare(Deno.args));
