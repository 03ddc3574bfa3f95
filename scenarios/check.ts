/**
 * `deno task check [files…] [--tag T] [--json-dir D]`: runs scenarios
 * outside `deno test` and prints one line per scenario (PASS or FAIL, key
 * metrics or, for a sweep, its answer, wall time); after a sweep's line, one
 * row per point (swept values, PASS or FAIL and why, p99 TTFT from arrival,
 * p99 TPOT, achieved and offered rate; bisection runs marked) and the
 * capacity answer; then the messages of what failed. With `--json-dir`,
 * writes each run's `--output_json` document there (every sweep point,
 * bisection runs included; later seeds as `.seed<N>`) and a sweep's rows as
 * `<name>.sweep.json`. With no file, every scenario (the validation ones
 * included). Exits 1 when any scenario fails, 2 on bad input.
 *
 * `--format` chooses what stdout carries for CI (core/report/ci_formats.ts):
 * `table` (the above), `github` (the above and an `::error` workflow command
 * per failed assertion, at its file and line), or one `junit`, `json` or
 * `markdown` document (the lines then go to stderr). With
 * `GITHUB_STEP_SUMMARY` set, the Markdown summary is appended to that file.
 *
 * @module
 */
import { InputError } from "../core/config/errors.ts";
import { loadScenario, runScenario } from "../core/scenario/mod.ts";
import { fileIn } from "../core/scenario/scenario.ts";
import { expandFolders, relative, scenarioFiles } from "./_files.ts";
import { runJson } from "../core/report/run_json.ts";
import type { RunOutput } from "../core/assembly/run.ts";
import { formatSweepRows, sweepJson } from "../core/scenario/sweep_table.ts";
import { CONSOLE_OUTPUT, parseShard, readTaskArgs, usageLine } from "./_args.ts";
import type { TaskOutput } from "./_args.ts";
export type { TaskOutput } from "./_args.ts";
import type { ScenarioResult } from "../core/scenario/runner.ts";
import { readBaseline } from "../core/scenario/baseline.ts";
import { scenarioReportHtml } from "../core/report/scenario_report.ts";
import { compareReportHtml, snapshotMetricRows } from "../core/report/compare.ts";
import { makeOutputDir, outputDirProblem, OutputError, outputFileProblem, reason, writeOutput } from "../cli_output.ts";
import { clip } from "../core/config/errors.ts";
import {
  CHECK_FORMATS,
  checkJson,
  githubAnnotations,
  isCheckFormat,
  junitXml,
  markdownSummary,
} from "../core/report/ci_formats.ts";
import type { ScenarioOutcome, WorkspacePaths } from "../core/report/ci_formats.ts";
import { taskMain } from "./_args.ts";
import { progressBar } from "../cli_progress.ts";

const USAGE = `Usage: deno task check [scenario.yaml …] [--tag TAG …] [--json-dir DIR] [--report-dir DIR] [--shard I/N]

Runs scenarios and prints one line per scenario: PASS or FAIL, key metrics (or a
sweep's points and capacity answer) and wall time; then what failed.

  scenario.yaml …   the scenarios to run (default: every scenario, validation included)
  --tag TAG         only scenarios with this tag (repeatable: any of them)
  --json-dir DIR    write each run's --output_json document (and a sweep's rows) into DIR
  --baseline-dir DIR  the baseline snapshots' folder (default: __baselines__ beside each scenario)
  --report-dir DIR  write an HTML report per scenario into DIR (<name>.html: assertions, a
                    sweep's curves with the SLO lines, or the run's tables and charts), and
                    <name>.baseline.html (every metric against the baseline) when it differs
  --shard I/N       run only the I-th of N shares of the scenarios (0 ≤ I < N, files dealt
                    round-robin in order), e.g. one CI matrix job or Kubernetes Indexed Job each
  --format FORMAT   what stdout carries: table (default: the lines above), github (those lines
                    and an ::error annotation per failed assertion at its file and line), or one
                    junit (JUnit XML), json or markdown (the job summary) document, the lines
                    then on stderr; paths relative to $GITHUB_WORKSPACE, else the current folder
  -h, --help        show this help and exit

With GITHUB_STEP_SUMMARY set (GitHub Actions), any format also appends the Markdown summary
(a row per scenario, then what failed) to that file.

Exit codes: 0 every scenario passes; 1 one fails; 2 bad input.`;

/** Reads an environment variable when the permission set allows it (never prompting); otherwise undefined. */
function readEnv(name: string): string | undefined {
  return readable(name) ? Deno.env.get(name) : undefined;
}

/**
 * Runs `deno task check` with `argv`, its lines to `io`: the exit code (0
 * every scenario passes, 1 one fails, 2 bad input). Tests call it
 * in-process; the task runs it on the process's own output. `env` reads
 * `GITHUB_WORKSPACE` and `GITHUB_STEP_SUMMARY` (default: the process's
 * environment, as far as the permission set lets it).
 */
export async function runCheck(
  argv: readonly string[],
  io: TaskOutput = CONSOLE_OUTPUT,
  env: (name: string) => string | undefined = readEnv,
): Promise<number> {
  const args = readTaskArgs(
    {
      task: "check",
      usage: USAGE,
      files: true,
      options: ["--tag", "--json-dir", "--report-dir", "--baseline-dir", "--shard", "--format"],
    },
    argv,
    io,
  );
  if (typeof args === "number") return args;
  const format = args.options["--format"]?.at(-1) ?? "table";
  if (!isCheckFormat(format)) {
    io.err(usageLine("check", `--format: expected one of ${CHECK_FORMATS.join(", ")}, got '${clip(format)}'`));
    return 2;
  }
  // The lines of the table: stdout, unless stdout carries a document.
  const show = format === "table" || format === "github" ? (l: string) => io.out(l) : (l: string) => io.err(l);
  const cwd = Deno.cwd();
  const paths: WorkspacePaths = { root: env("GITHUB_WORKSPACE") || cwd, cwd };
  const outcomes: ScenarioOutcome[] = [];
  const tags = args.options["--tag"] ?? [];
  const baselineDir = args.options["--baseline-dir"]?.at(-1);
  const jsonDir = args.options["--json-dir"]?.at(-1);
  const reportDir = args.options["--report-dir"]?.at(-1);
  const dirProblem = (jsonDir !== undefined ? outputDirProblem("--json-dir", jsonDir) : undefined) ??
    (reportDir !== undefined ? outputDirProblem("--report-dir", reportDir) : undefined);
  if (dirProblem) {
    io.err(usageLine("check", dirProblem));
    return 2;
  }
  try {
    if (jsonDir) makeOutputDir("--json-dir", jsonDir);
    if (reportDir) makeOutputDir("--report-dir", reportDir);
  } catch (e) {
    if (!(e instanceof OutputError)) throw e;
    io.err(usageLine("check", e.message));
    return 2;
  }
  const shardText = args.options["--shard"]?.at(-1);
  const shard = shardText === undefined ? { index: 0, count: 1 } : parseShard(shardText);
  if (typeof shard === "string") {
    io.err(usageLine("check", shard));
    return 2;
  }
  const named = expandFolders(args.files);
  if ("empty" in named) {
    io.err(usageLine("check", `${clip(named.empty)} is a folder with no scenario files (*.yaml) in it`));
    return 2;
  }
  const files = (args.files.length ? named.files : scenarioFiles()).filter((_, i) => i % shard.count === shard.index);

  let failed = 0;
  let matched = 0;
  let badInput = false;
  const messages: string[] = [];
  const fmt = (x: number, unit: string) => (Number.isFinite(x) ? `${Number(x.toPrecision(3))}${unit}` : "–");
  // On a terminal, past 2 s, a bar of the scenarios done (cleared before each scenario's line is printed).
  const progress = await progressBar({
    terminal: io === CONSOLE_OUTPUT && Deno.stderr.isTerminal(),
    label: "checking",
    unit: "scenarios",
    delayMs: 2000,
  });
  let done = 0;
  for (const file of files) {
    progress.onProgress?.(done++, files.length);
    let line: string;
    const begun = performance.now();
    try {
      const s = loadScenario(file, undefined, { baselineDir });
      if (tags.length && !tags.some((t) => s.tags.includes(t))) continue;
      matched++;
      // The files this scenario writes, checked before it runs (a folder or a link in the way costs no run).
      const first = jsonDir ? outputFileProblem("--json-dir", fileIn(jsonDir, `${s.name}.json`), [], true) : undefined;
      const page = reportDir
        ? outputFileProblem("--report-dir", fileIn(reportDir, `${s.name}.html`), [], true)
        : undefined;
      if (first ?? page) throw new OutputError((first ?? page)!);
      const start = performance.now();
      const r = runScenario(s, undefined, { timeseries: reportDir !== undefined });
      const wall = (performance.now() - start) / 1000;
      const m = r.output.summary;
      const sweep = s.sweep
        ? `${r.points.length} points (${r.points.filter((p) => p.bisection).length} by bisection)${
          r.seeds.length > 1 ? ` × ${r.seeds.length} seeds` : ""
        }`
        : `ttft.p99=${fmt(m.extMetric["TTFT_FROM_ARRIVAL(s)"].P99, "s")}  tpot.p99=${
          fmt(m.perMetric["TPOT(s)"].P99, "s")
        }  throughput=${fmt(m.overall["output_token_throughput(tok/s)"], " tok/s")}`;
      const c = r.capacity;
      const answer = c
        ? `  ${c.kind}=${Number.isNaN(c.value) ? "none" : c.value}${
          c.failing !== undefined
            ? ` (${c.kind === "max_rate_meeting" ? "first" : "largest"} failing ${c.failing})`
            : ""
        }`
        : "";
      line = [
        `${r.pass ? "PASS" : "FAIL"}  ${s.name}  ${sweep}${answer}  (${wall.toFixed(2)} s)`,
        ...formatSweepRows(r),
      ]
        .join("\n");
      if (jsonDir) {
        const file = (run: string) =>
          fileIn(jsonDir, `${s.name}${run ? `.${run.replace(/[^\w.=-]+/g, "_")}` : ""}.json`);
        const write = (run: string, outs: readonly RunOutput[]) =>
          outs.forEach((out, k) =>
            writeOutput(
              "--json-dir",
              file(k ? `${run}${run ? "." : ""}seed${out.assembled.input.workload.seed}` : run),
              runJson(out),
              [],
              true,
            )
          );
        if (s.sweep) {
          const axes = s.sweep.axes;
          for (const p of r.points) write(axes.map((ax, i) => `${ax.key}=${p.values[i]}`).join(","), p.outputs);
          writeOutput("--json-dir", fileIn(jsonDir, `${s.name}.sweep.json`), sweepJson(r), [], true);
        } else {
          for (const [run, outs] of r.seedRuns) write(run, outs);
        }
      }
      if (reportDir) await writeReports(reportDir, r);
      outcomes.push({ kind: "ran", file, result: r, seconds: wall });
      if (!r.pass) {
        failed++;
        messages.push(...r.checks.filter((c) => !c.pass).map((c) => c.message));
        messages.push(...r.measurements.filter((c) => !c.pass).map((c) => c.message));
      }
    } catch (e) {
      if (e instanceof OutputError) {
        show(`FAIL  ${relative(file)}  (output not written)`);
        for (const m of [...messages, `check: ${e.message}`]) io.err(m);
        return 2;
      }
      if (!(e instanceof InputError)) throw e;
      failed++;
      badInput = true;
      line = `FAIL  ${relative(file)}  (bad input)`;
      messages.push(e.message);
      const seconds = (performance.now() - begun) / 1000;
      outcomes.push({ kind: "bad input", file, message: e.message, location: e.location, detail: e.detail, seconds });
    }
    progress.stop();
    show(line);
    if (format === "github") { for (const a of githubAnnotations(outcomes.at(-1)!, paths)) io.out(a); }
  }
  if (tags.length && matched === 0 && !badInput) {
    // A gate that checks nothing must not pass (as scenarioTests and the action refuse it too).
    io.err(usageLine(
      "check",
      `none of the ${files.length} scenario files has the tag ${tags.map((t) => `'${clip(t)}'`).join(" or ")}`,
    ));
    return 2;
  }
  for (const m of messages) io.err(m);
  const code = badInput ? 2 : failed ? 1 : 0;
  if (format === "junit") io.out(junitXml(outcomes, paths));
  if (format === "json") io.out(checkJson(outcomes, paths, code));
  const title = `ServingCast scenarios${shard.count > 1 ? ` (shard ${shard.index}/${shard.count})` : ""}`;
  const markdown = () => markdownSummary(outcomes, paths, { title });
  if (format === "markdown") io.out(markdown());
  const summaryFile = env("GITHUB_STEP_SUMMARY");
  if (summaryFile) {
    // Never opened unless a regular file (or not there yet): a FIFO would block the job forever.
    const kind = fileKind(summaryFile);
    if (kind !== "file" && kind !== "none") {
      io.err(
        `check: GITHUB_STEP_SUMMARY (${clip(summaryFile)}) is ${kind}, not a regular file: no job summary written`,
      );
    } else {
      try {
        Deno.writeTextFileSync(summaryFile, `${markdown()}\n\n`, { append: true });
      } catch (e) {
        io.err(`check: could not append the summary to GITHUB_STEP_SUMMARY (${clip(summaryFile)}): ${reason(e)}`);
      }
    }
  } else if (format === "github" && env === readEnv && !readable("GITHUB_STEP_SUMMARY")) {
    io.err(
      "check: the permission set does not let the task read GITHUB_STEP_SUMMARY or GITHUB_WORKSPACE: no job summary, " +
        "paths relative to the current folder",
    );
  }
  return code;
}

/** What is at `path`: a regular file, nothing, or what else (links followed). */
function fileKind(path: string): string {
  try {
    const st = Deno.statSync(path);
    return st.isFile ? "file" : st.isDirectory ? "a folder" : st.isFifo ? "a FIFO" : "a device or socket";
  } catch {
    return "none";
  }
}

/** Whether the permission set lets the task read an environment variable. */
function readable(name: string): boolean {
  return Deno.permissions.querySync({ name: "env", variable: name }).state === "granted";
}

/** Writes `<name>.html`, and `<name>.baseline.html` when the baseline check failed. */
async function writeReports(dir: string, r: ScenarioResult): Promise<void> {
  const s = r.scenario;
  const html = await scenarioReportHtml(r);
  const page = fileIn(dir, `${s.name}.html`);
  writeOutput("--report-dir", page, html, [], true);
  const baseline = r.checks.find((c) => c.name === "baseline");
  if (s.baseline && baseline && !baseline.pass) {
    const stored = readBaseline(s.baseline.file) ?? {};
    const clean = Object.fromEntries(Object.entries(stored).filter((e): e is [string, number] => e[1] !== null));
    const diff = await compareReportHtml(clean, r.snapshot, snapshotMetricRows(clean, r.snapshot), {
      a: `baseline ${s.baseline.file}`,
      b: "this run",
    });
    const file = fileIn(dir, `${s.name}.baseline.html`);
    writeOutput("--report-dir", file, diff, [], true);
  }
}

if (import.meta.main) Deno.exitCode = await taskMain("check", () => runCheck(Deno.args));
