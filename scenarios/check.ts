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
 * @module
 */
import { InputError } from "../core/config/errors.ts";
import { loadScenario, runScenario } from "../core/scenario/mod.ts";
import { fileIn } from "../core/scenario/scenario.ts";
import { relative, scenarioFiles } from "./_files.ts";
import { runJson } from "../core/report/run_json.ts";
import type { RunOutput } from "../core/run.ts";
import { formatSweepRows, sweepJson } from "../core/scenario/sweep_table.ts";
import { CONSOLE_OUTPUT, parseShard, readTaskArgs, usageLine } from "./_args.ts";
import type { TaskOutput } from "./_args.ts";
import type { ScenarioResult } from "../core/scenario/runner.ts";
import { readBaseline } from "../core/scenario/baseline.ts";
import { scenarioReportHtml } from "../core/report/scenario_report.ts";
import { compareReportHtml, snapshotMetricRows } from "../core/report/compare.ts";
import { outputDirProblem, OutputError, writeFor } from "../cli_output.ts";

const USAGE = `Usage: deno task check [scenario.yaml …] [--tag TAG …] [--json-dir DIR] [--report-dir DIR] [--shard I/N]

Runs scenarios and prints one line per scenario: PASS or FAIL, key metrics (or a
sweep's points and capacity answer) and wall time; then what failed.

  scenario.yaml …   the scenarios to run (default: every scenario, validation included)
  --tag TAG         only scenarios with this tag (repeatable: any of them)
  --json-dir DIR    write each run's --output_json document (and a sweep's rows) into DIR
  --report-dir DIR  write an HTML report per scenario into DIR (<name>.html: assertions, a
                    sweep's curves with the SLO lines, or the run's tables and charts), and
                    <name>.baseline.html (every metric against the baseline) when it differs
  --shard I/N       run only the I-th of N shares of the scenarios (0 ≤ I < N, files dealt
                    round-robin in order), e.g. one CI matrix job or Kubernetes Indexed Job each
  -h, --help        show this help and exit

Exit codes: 0 every scenario passes; 1 one fails; 2 bad input.`;

/**
 * Runs `deno task check` with `argv`, its lines to `io`: the exit code (0
 * every scenario passes, 1 one fails, 2 bad input). Tests call it
 * in-process; the task runs it on the process's own output.
 */
export async function runCheck(argv: readonly string[], io: TaskOutput = CONSOLE_OUTPUT): Promise<number> {
  const parsed = readTaskArgs(
    { task: "check", usage: USAGE, files: true, options: ["--tag", "--json-dir", "--report-dir", "--shard"] },
    argv,
  );
  if (parsed.kind === "exit") {
    if (parsed.out !== undefined) io.out(parsed.out);
    if (parsed.err !== undefined) io.err(parsed.err);
    return parsed.code;
  }
  const args = parsed.args;
  const tags = args.options["--tag"] ?? [];
  const jsonDir = args.options["--json-dir"]?.at(-1);
  if (jsonDir) Deno.mkdirSync(jsonDir, { recursive: true });
  const reportDir = args.options["--report-dir"]?.at(-1);
  const dirProblem = reportDir !== undefined ? outputDirProblem("--report-dir", reportDir) : undefined;
  if (dirProblem) {
    io.err(usageLine("check", dirProblem));
    return 2;
  }
  if (reportDir) Deno.mkdirSync(reportDir, { recursive: true });
  const shardText = args.options["--shard"]?.at(-1);
  const shard = shardText === undefined ? { index: 0, count: 1 } : parseShard(shardText);
  if (typeof shard === "string") {
    io.err(usageLine("check", shard));
    return 2;
  }
  const files = (args.files.length ? args.files : scenarioFiles()).filter((_, i) => i % shard.count === shard.index);

  let failed = 0;
  let badInput = false;
  const messages: string[] = [];
  const fmt = (x: number, unit: string) => (Number.isFinite(x) ? `${Number(x.toPrecision(3))}${unit}` : "–");
  for (const file of files) {
    let line: string;
    try {
      const s = loadScenario(file);
      if (tags.length && !tags.some((t) => s.tags.includes(t))) continue;
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
            Deno.writeTextFileSync(
              file(k ? `${run}${run ? "." : ""}seed${out.plan.input.workload.seed}` : run),
              runJson(out),
            )
          );
        if (s.sweep) {
          const axes = s.sweep.axes;
          for (const p of r.points) write(axes.map((ax, i) => `${ax.key}=${p.values[i]}`).join(","), p.outputs);
          Deno.writeTextFileSync(fileIn(jsonDir, `${s.name}.sweep.json`), sweepJson(r));
        } else {
          for (const [run, outs] of r.seedRuns) write(run, outs);
        }
      }
      if (reportDir) await writeReports(reportDir, r);
      if (!r.pass) {
        failed++;
        messages.push(...r.checks.filter((c) => !c.pass).map((c) => c.message));
        messages.push(...r.measurements.filter((c) => !c.pass).map((c) => c.message));
      }
    } catch (e) {
      if (e instanceof OutputError) {
        io.out(`FAIL  ${relative(file)}  (report not written)`);
        for (const m of [...messages, `check: ${e.message}`]) io.err(m);
        return 2;
      }
      if (!(e instanceof InputError)) throw e;
      failed++;
      badInput = true;
      line = `FAIL  ${relative(file)}  (bad input)`;
      messages.push(e.message);
    }
    io.out(line);
  }
  for (const m of messages) io.err(m);
  return badInput ? 2 : failed ? 1 : 0;
}

/** Writes `<name>.html`, and `<name>.baseline.html` when the baseline check failed. */
async function writeReports(dir: string, r: ScenarioResult): Promise<void> {
  const s = r.scenario;
  const html = await scenarioReportHtml(r);
  const page = fileIn(dir, `${s.name}.html`);
  writeFor("--report-dir", page, () => Deno.writeTextFileSync(page, html));
  const baseline = r.checks.find((c) => c.name === "baseline");
  if (s.baseline && baseline && !baseline.pass) {
    const stored = readBaseline(s.baseline.file) ?? {};
    const clean = Object.fromEntries(Object.entries(stored).filter((e): e is [string, number] => e[1] !== null));
    const diff = await compareReportHtml(clean, r.snapshot, snapshotMetricRows(clean, r.snapshot), {
      a: `baseline ${s.baseline.file}`,
      b: "this run",
    });
    const file = fileIn(dir, `${s.name}.baseline.html`);
    writeFor("--report-dir", file, () => Deno.writeTextFileSync(file, diff));
  }
}

if (import.meta.main) Deno.exitCode = await runCheck(Deno.args);
