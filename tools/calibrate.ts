/**
 * `deno task calibrate manifest.yaml`: fits the efficiencies and the host
 * costs of the deployment's device to the user's own benchmark results
 * (vLLM `--save-result` JSON, SGLang `bench_serving` JSONL, GenAI-Perf and
 * AIPerf profile exports, CSV), prints the error before and after with
 * k-fold cross-validation, and writes a device file to name as
 * `device_type`.
 *
 * `deno task calibrate --scenarios scenarios/validation/*.yaml [--engine vllm]`
 * fits to validation scenarios instead (their `measured:` rows), one device
 * file per device type they run on, and prints the pooled cross-validated
 * error beside the uncalibrated one. Exit 2 on bad input.
 *
 * @module
 */
import { clip, InputError } from "../core/config/errors.ts";
import type { SourceLocation } from "../core/config/errors.ts";
import { TASK_LIMITS } from "../core/config/limits.ts";
import { denoFileSystem } from "../core/config/load.ts";
import {
  atBounds,
  calibrate,
  DEFAULT_FIT,
  deviceFileText,
  FIT_ITERATIONS,
  FIT_PARAMETERS,
} from "../core/calibrate/fit.ts";
import type { CalibrationResult, FitParameter } from "../core/calibrate/fit.ts";
import { expandScenarioPaths, loadManifest, twiceListed } from "../core/calibrate/manifest.ts";
import type { ScenarioManifest } from "../core/calibrate/manifest.ts";
import { calibrateScenarios, loadScenarioCases } from "../core/calibrate/scenarios.ts";
import { calibrationReportHtml, constantText, percentText, signedPercentText } from "../core/calibrate/report.ts";
import { CONSOLE_OUTPUT, taskMain, VERSION_LINE } from "../scenarios/_args.ts";
import type { TaskOutput } from "../scenarios/_args.ts";
import { makeOutputDir, outputDirProblem, OutputError, outputFileProblem, writeOutput } from "../cli_output.ts";
import { progressBar } from "../cli_progress.ts";
import type { Progress } from "../cli_progress.ts";

const USAGE = [
  "Usage: deno task calibrate manifest.yaml [--report FILE]   (see core/calibrate/manifest.ts for its keys)",
  "       deno task calibrate --scenarios FILE… [--engine NAME] [--fit a,b,…] [--folds K] [--iterations N]",
  "                           [--max-requests N] [--output DIR] [--report FILE]",
  "",
  "Fits the device's efficiencies and host costs to measured benchmark results (a manifest), or to the",
  "measured: rows of validation scenarios (--scenarios), prints the error before and after with k-fold",
  "cross-validation, and writes a device file to name as device_type.",
  "",
  "  --engine NAME       only scenarios on this serving_config.engine",
  `  --fit a,b,…         the constants to fit (default ${DEFAULT_FIT.join(",")}; of ${FIT_PARAMETERS.join(", ")})`,
  "  --folds K           cross-validation folds (default 5)",
  `  --iterations N      Levenberg-Marquardt iterations per fit (default ${FIT_ITERATIONS}, at most ${TASK_LIMITS.calibrateIterations})`,
  "  --max-requests N    cap each scenario's requests",
  "  --output DIR        where to write the device files (default .)",
  "  --report FILE       also write an HTML report: each device's constants before and after with their ranges,",
  "                      and every point's error before, fitted and held out",
  "  -h, --help          show this help and exit",
  "",
  "A fit of more than a second shows its progress on stderr when that is a terminal.",
  "",
  "Every point's error is printed before (with the values the deployment runs with: the catalog device with its",
  "engine profile's host costs), fitted, and held out; a constant that ends at an end of its range is a warning.",
  "",
  "Exit codes: 0 written; 1 a fit made its own points worse (not written); 2 bad input or an output that cannot be",
  "written (checked before the fit).",
].join("\n");

/**
 * User text (a file or device name) in a line of ours: control characters
 * escaped, so that a name never starts a line of its own (a workflow
 * command, a key of the device file's YAML).
 */
const text = (s: string) => clip(s, 4096);

/** A NUL character, which no file name holds (the file system refuses it outright). */
const NUL = "\u0000";

/**
 * Why `path` cannot be written as a file (see {@link outputFileProblem}), or
 * undefined; `inFolder`: a name the task chose in a folder (never through a
 * symbolic link), not one the user named.
 */
function fileProblem(flag: string, path: string, inputs: readonly string[], inFolder: boolean): string | undefined {
  if (path.includes(NUL)) return `${flag}: ${text(path)}: a file name cannot hold a NUL character`;
  return outputFileProblem(flag, path, inputs, inFolder);
}

/** Why `path` cannot be the output folder (see {@link outputDirProblem}), or undefined. */
function folderProblem(flag: string, path: string): string | undefined {
  if (path === "") return `${flag}: expected a folder, got ''`;
  if (path.includes(NUL)) return `${flag}: ${text(path)}: a folder name cannot hold a NUL character`;
  return outputDirProblem(flag, path);
}

/** One line on stderr for a bad argument; exit 2. */
const HINT = "(deno task calibrate --help)";

/** A warning line per fitted constant at an end of its range. */
function boundLines(r: CalibrationResult, what: string): string[] {
  return atBounds(r).map((b) =>
    `warning: ${text(what)}: ${b.parameter} fitted to ${
      constantText(b.parameter, b.value)
    }, at the ${b.bound} of its range (${constantText(b.parameter, b.min)} to ${
      constantText(b.parameter, b.max)
    }): the measurements want a value the range does not allow, so the model lacks something this constant stands in for`
  );
}

/** Each measured figure's error before (the values the deployment runs with), after and held out. */
function pointLines(r: CalibrationResult, name: (source: string) => string): string[] {
  const rows = r.errors.map((e) => [`${text(name(e.source))} ${text(e.metric)}`, e]) as [
    string,
    (typeof r.errors)[number],
  ][];
  const width = Math.max(11, ...rows.map(([n]) => n.length));
  return [
    `  ${"point metric".padEnd(width)}  before (as run)   fitted  held-out`,
    ...rows.map(([n, e]) =>
      `  ${n.padEnd(width)}  ${signedPercentText(e.before).padStart(15)}  ${signedPercentText(e.after).padStart(7)}  ${
        (e.heldOut !== undefined ? signedPercentText(e.heldOut) : "-").padStart(8)
      }`
    ),
  ];
}

/**
 * Why a fit is not written: it makes its own training points worse, by the
 * measure it minimizes (the root mean square of ln(simulated / measured));
 * a fit that trades a few points' error for the others' can move the
 * median either way.
 */
function worse(r: CalibrationResult): string | undefined {
  return r.rmsAfter > r.rmsBefore * (1 + 1e-9)
    ? `the fit makes its own points worse (rms log error ${r.rmsBefore.toFixed(3)} before, ${
      r.rmsAfter.toFixed(3)
    } after; median |error| ${percentText(r.errorBefore)} before, ${percentText(r.errorAfter)} after): not written`
    : undefined;
}

/** The error lines of a fit: median |error| and the rms log error it minimizes, before and after. */
function errorLines(r: CalibrationResult): string[] {
  return [
    `  median |error|: ${percentText(r.errorBefore)} before, ${percentText(r.errorAfter)} after`,
    `  rms log error (what the fit minimizes): ${r.rmsBefore.toFixed(3)} before, ${r.rmsAfter.toFixed(3)} after`,
  ];
}

/** The constants before and after, one line each. */
function constantLines(r: CalibrationResult): string[] {
  return FIT_PARAMETERS.map((p) =>
    `  ${p.padEnd(14)} ${constantText(p, r.start[p]).padStart(8)} -> ${constantText(p, r.fitted[p]).padStart(8)}${
      r.parameters.includes(p)
        ? ""
        : r.noEffect.includes(p)
        ? "  (not fitted: it moves none of these points)"
        : "  (not fitted)"
    }`
  );
}

/** Where an output path was named: a flag of the command line, or the manifest's `output:` key (`at`). */
interface OutputSpec {
  /** `--output`, or `output` for the manifest's key. */
  readonly flag: string;
  /** The manifest's `output:` (or the manifest, for the default), when the manifest named it. */
  readonly at?: SourceLocation;
}

/**
 * A problem of an output path as the error the user sees: the flag's
 * {@link OutputError}, or an {@link InputError} at the manifest's `output:`.
 */
function outputFailure(spec: OutputSpec, problem: string): OutputError | InputError {
  if (!spec.at) return new OutputError(problem);
  const detail = problem.startsWith(`${spec.flag}: `) ? problem.slice(spec.flag.length + 2) : problem;
  return new InputError({ ...spec.at, keyPath: "output" }, detail);
}

/**
 * Writes `content` to `path` for `spec`: never over one of `inputs`, and a
 * name the task chose (`inFolder`) never through a symbolic link.
 */
function write(spec: OutputSpec, path: string, content: string, inputs: readonly string[], inFolder: boolean): void {
  const problem = fileProblem(spec.flag, path, inputs, inFolder);
  if (problem) throw outputFailure(spec, problem);
  try {
    writeOutput(spec.flag, path, content, inputs, inFolder);
  } catch (e) {
    throw e instanceof OutputError ? outputFailure(spec, e.message) : e;
  }
}

/** A progress bar of the fit's trials on a terminal (shown after a second; none when the lines are captured). */
function fitProgress(io: TaskOutput): Promise<Progress> {
  return progressBar({
    terminal: io === CONSOLE_OUTPUT && Deno.stderr.isTerminal(),
    label: "calibrating",
    unit: "trials",
    every: 1,
  });
}

async function runManifest(file: string, io: TaskOutput, report?: string): Promise<number> {
  const m = loadManifest(file, denoFileSystem);
  const spec: OutputSpec = { flag: "output", at: m.outputAt };
  if (m.kind === "scenarios") return runScenarios({ ...m, how: m.file, spec, ...(report ? { report } : {}) }, io);
  if (report !== undefined) {
    const problem = fileProblem("--report", report, m.inputs, false);
    if (problem) throw new OutputError(problem);
  }
  // The output is checked before the fit: a typo costs no fit. The default (no line: no output: key) is a name
  // the task chose beside the manifest, so it is never written through a symbolic link; a file the user named may be one.
  const chosen = m.outputAt.line === undefined;
  const problem = fileProblem(spec.flag, m.output, m.inputs, chosen);
  if (problem) throw outputFailure(spec, problem);
  const progress = await fitProgress(io);
  let r: CalibrationResult;
  try {
    r = calibrate(m.setup, m.runs, {
      parameters: m.parameters,
      folds: m.folds,
      ...(m.iterations !== undefined ? { iterations: m.iterations } : {}),
      ...(progress.onProgress ? { onProgress: progress.onProgress } : {}),
    });
  } finally {
    progress.stop();
  }
  io.out(`calibrated ${text(m.setup.device.name)} on ${m.runs.length} runs (${r.points} measured figures)`);
  for (const line of constantLines(r)) io.out(line);
  for (const line of pointLines(r, (s) => s.replace(/^.*[\\/]/, ""))) io.out(line);
  for (const line of errorLines(r)) io.out(line);
  const cv = r.crossValidation;
  if (cv) {
    io.out(
      `  ${cv.folds}-fold cross-validated: ${percentText(cv.before)} uncalibrated, ${percentText(cv.after)} calibrated`,
    );
  } else io.out("  one run: nothing to hold out, so no cross-validated figure");
  for (const line of boundLines(r, m.setup.device.name)) io.err(line);
  if (report !== undefined) {
    const devices = [{ name: m.setup.device.name, fittedOn: `${m.runs.length} measured runs`, result: r }];
    writeReport(report, await calibrationReportHtml(`deno task calibrate ${text(m.file)}`, devices), m.inputs, io);
  }
  const refused = worse(r);
  if (refused) {
    io.err(`calibrate: ${refused}`);
    return 1;
  }
  const header = [
    `${text(m.setup.device.name)} calibrated by \`deno task calibrate ${
      text(m.file)
    }\` on ${m.runs.length} measured runs.`,
    `Median |error| ${percentText(r.errorBefore)} before, ${percentText(r.errorAfter)} after${
      cv ? `; ${cv.folds}-fold cross-validated ${percentText(cv.after)} (uncalibrated ${percentText(cv.before)})` : ""
    }.`,
    `Fitted: ${r.parameters.join(", ")}; every other value is the catalog's. Name this file as device_type.`,
  ];
  write(spec, m.output, deviceFileText(m.setup.device, r.fitted, header), m.inputs, chosen);
  io.out(`wrote ${text(m.output)}`);
  return 0;
}

/** The scenarios to calibrate on, how to fit, where the files go, and how the run was asked for. */
type ScenarioRun = Omit<ScenarioManifest, "kind" | "file" | "outputAt"> & {
  /** The manifest, or the command line, for messages. */
  readonly how: string;
  /** Where the HTML report goes (`--report`), if anywhere. */
  readonly report?: string;
  /** Where the output folder was named. */
  readonly spec: OutputSpec;
};

/** The device file of a fitted group in `dir`. */
const deviceFileIn = (dir: string, group: string) =>
  `${dir.replace(/\/$/, "")}/${group.replace(/[^A-Za-z0-9._-]+/g, "_")}.calibrated.yaml`;

/** Fits each device to its scenarios, prints per-case and pooled errors, writes one device file per device. */
async function runScenarios(m: ScenarioRun, io: TaskOutput): Promise<number> {
  const { spec } = m;
  const dirProblem = folderProblem(spec.flag, m.outputDir);
  if (dirProblem) throw outputFailure(spec, dirProblem);
  let cases: ReturnType<typeof loadScenarioCases>;
  try {
    cases = loadScenarioCases(m.scenarios, denoFileSystem, m.engine !== undefined ? { engine: m.engine } : {});
  } catch (e) {
    // A scenario that cannot be read is an error where it was named; one that reads, at its own lines.
    if (e instanceof InputError && e.location.line === undefined && m.scenarios.includes(e.location.file)) {
      throw new InputError(
        m.scenariosAt,
        `cannot read ${text(e.location.file)}: ${e.detail.replace(/^cannot read: /, "")}`,
      );
    }
    throw e;
  }
  if (cases.length === 0) {
    throw new InputError(
      { file: m.how },
      `no scenario among ${m.scenarios.length} runs on serving_config.engine '${m.engine}'`,
    );
  }
  let figures = 0;
  for (const c of cases) {
    figures += c.scenario.measured.length;
    if (figures > TASK_LIMITS.fitEntries) {
      c.scenario.source.fail(
        ["measured"],
        `${figures} measured figures so far, more than the ${TASK_LIMITS.fitEntries} a fit takes; calibrate on fewer scenarios`,
      );
    }
  }
  // Every device file this run may write, checked before the fit (in a folder that exists; one to create is empty).
  if (isFolder(m.outputDir)) {
    for (const group of new Set(cases.map((c) => c.group))) {
      const problem = fileProblem(spec.flag, deviceFileIn(m.outputDir, group), m.inputs, true);
      if (problem) throw outputFailure(spec, problem);
    }
  }
  if (m.report !== undefined) {
    const problem = fileProblem("--report", m.report, m.inputs, false);
    if (problem) throw new OutputError(problem);
  }
  const progress = await fitProgress(io);
  let r: ReturnType<typeof calibrateScenarios>;
  try {
    r = calibrateScenarios(cases, denoFileSystem, {
      parameters: m.parameters,
      folds: m.folds,
      ...(m.iterations !== undefined ? { iterations: m.iterations } : {}),
      ...(m.maxRequests !== undefined ? { maxRequests: m.maxRequests } : {}),
      ...(progress.onProgress ? { onProgress: progress.onProgress } : {}),
    });
  } finally {
    progress.stop();
  }
  let status = 0;
  for (const d of r.devices) {
    const res = d.result;
    const cv = res.crossValidation;
    io.out(`calibrated ${text(d.group)} on ${d.cases.length} scenarios (${res.points} measured figures)`);
    for (const line of constantLines(res)) io.out(line);
    for (const line of pointLines(res, (src) => src.replace(/^.*[\\/]/, ""))) io.out(line);
    for (const line of errorLines(res)) io.out(line);
    if (cv) {
      io.out(
        `  ${cv.folds}-fold cross-validated: ${percentText(cv.before)} uncalibrated, ${
          percentText(cv.after)
        } calibrated`,
      );
    } else io.out("  one scenario: nothing to hold out, so no cross-validated figure");
    for (const line of boundLines(res, d.group)) io.err(line);
    const refused = worse(res);
    if (refused) {
      io.err(`calibrate: ${text(d.group)}: ${refused}`);
      status = 1;
      continue;
    }
    let dir: string;
    try {
      dir = makeOutputDir(spec.flag, m.outputDir);
    } catch (e) {
      throw e instanceof OutputError ? outputFailure(spec, e.message) : e;
    }
    const out = deviceFileIn(dir, d.group);
    const header = [
      `${text(d.group)} calibrated by \`deno task calibrate ${
        text(m.how)
      }\` on ${d.cases.length} validation scenarios.`,
      `Median |error| ${percentText(res.errorBefore)} before, ${percentText(res.errorAfter)} after${
        cv ? `; ${cv.folds}-fold cross-validated ${percentText(cv.after)} (uncalibrated ${percentText(cv.before)})` : ""
      }.`,
      `Fitted: ${res.parameters.join(", ")}; every other value is the catalog's. Name this file as device_type.`,
    ];
    write(spec, out, deviceFileText(d.device, res.fitted, header), m.inputs, true);
    io.out(`  wrote ${text(out)}`);
  }
  if (m.report !== undefined) {
    const devices = r.devices.map((d) => ({
      name: d.group,
      fittedOn: `${d.cases.length} validation scenarios`,
      result: d.result,
    }));
    writeReport(m.report, await calibrationReportHtml(`deno task calibrate ${text(m.how)}`, devices), m.inputs, io);
  }
  io.out(
    `pooled over ${r.devices.length} device(s), ${r.points} figures: median |error| ${
      percentText(r.errorBefore)
    } uncalibrated, ${percentText(r.errorAfter)} fitted${
      r.crossValidated !== undefined ? `, ${percentText(r.crossValidated)} cross-validated` : ""
    }`,
  );
  return status;
}

/** Whether `path` is a folder (following links: the folder the user named may be one). */
function isFolder(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/** An error of the command line. */
const commandLine = (detail: string) => new InputError({ file: "(command line)" }, detail);

/** `--fit a,b,…` as constants: each one of {@link FIT_PARAMETERS}, none twice. */
function fitList(text: string): FitParameter[] {
  const names = text.split(",").map((p) => p.trim());
  const accepted = FIT_PARAMETERS.join(", ");
  const bad = names.find((p) => !(FIT_PARAMETERS as readonly string[]).includes(p));
  if (bad === "") {
    throw commandLine(`--fit: expected constants separated by commas (of ${accepted}), got '${clip(text)}'`);
  }
  if (bad !== undefined) throw commandLine(`--fit: unknown constant '${clip(bad)}' (of ${accepted})`);
  const twice = twiceListed(names);
  if (twice !== undefined) throw commandLine(`--fit: '${twice}' listed twice`);
  return names as FitParameter[];
}

/** `--scenarios A B … --engine vllm …` */
function runFlags(args: string[], io: TaskOutput): Promise<number> {
  const scenarios: string[] = [];
  const opts: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--scenarios") {
      while (i + 1 < args.length && !args[i + 1].startsWith("--")) scenarios.push(args[++i]);
      continue;
    }
    const m = /^--(engine|fit|folds|iterations|max-requests|output|report)(?:=(.*))?$/.exec(a);
    if (!m) {
      const what = a.startsWith("-") ? "option" : "argument";
      throw commandLine(`unknown ${what} '${clip(a)}' ${HINT}`);
    }
    const v = m[2] ?? args[++i];
    if (v === undefined) throw commandLine(`--${m[1]} needs a value`);
    opts[m[1]] = v;
  }
  if (scenarios.length === 0) throw commandLine(`--scenarios needs files ${HINT}`);
  const count = (k: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined => {
    if (opts[k] === undefined) return undefined;
    const n = Number(opts[k]);
    if (opts[k].trim() === "" || !Number.isInteger(n) || n < min || n > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
      throw commandLine(`--${k}: expected an integer ${range}, got '${clip(opts[k])}'`);
    }
    return n;
  };
  const parameters = opts.fit !== undefined ? fitList(opts.fit) : [...DEFAULT_FIT];
  const iterations = count("iterations", 1, TASK_LIMITS.calibrateIterations);
  const maxRequests = count("max-requests", 1);
  const folds = count("folds", 0) ?? 5;
  const paths = expandScenarioPaths(scenarios, { file: "(command line)" });
  if (paths.length > TASK_LIMITS.fitEntries) {
    throw commandLine(
      `--scenarios: ${paths.length} files, more than the ${TASK_LIMITS.fitEntries} a fit takes (each has a measured figure or more)`,
    );
  }
  return runScenarios({
    scenarios: paths,
    ...(opts.engine !== undefined ? { engine: opts.engine } : {}),
    ...(maxRequests !== undefined ? { maxRequests } : {}),
    parameters,
    folds,
    ...(iterations !== undefined ? { iterations } : {}),
    outputDir: opts.output ?? ".",
    ...(opts.report !== undefined ? { report: opts.report } : {}),
    inputs: paths,
    scenariosAt: { file: "(command line)", keyPath: "--scenarios" },
    how: `--scenarios … (${scenarios.length} paths)`,
    spec: { flag: "--output" },
  }, io);
}

function main(args: string[], io: TaskOutput): Promise<number> | number {
  if (args.includes("-h") || args.includes("--help")) {
    io.out(USAGE);
    return 0;
  }
  if (args.includes("--version")) return (io.out(VERSION_LINE), 0);
  if (args.includes("--scenarios")) return runFlags(args, io);
  // A manifest, and optionally --report FILE.
  const at = args.findIndex((a) => a === "--report" || a.startsWith("--report="));
  let report: string | undefined;
  if (at >= 0) {
    const inline = args[at].startsWith("--report=") ? args[at].slice("--report=".length) : undefined;
    report = inline ?? args[at + 1];
    if (report === undefined || report === "") {
      io.err(`calibrate: --report needs a file ${HINT}`);
      return 2;
    }
    args = args.filter((_, i) => i !== at && (inline !== undefined || i !== at + 1));
  }
  if (args.length !== 1 || args[0].startsWith("-")) {
    const bad = args.find((a) => a.startsWith("-"));
    io.err(
      `calibrate: ${
        bad ? `unknown option '${clip(bad)}'` : "expected one manifest file, or --scenarios FILE…"
      } ${HINT}`,
    );
    return 2;
  }
  return runManifest(args[0], io, report);
}

/** Writes the calibration report (checked writable before the fit) and says so. */
function writeReport(path: string, html: string, inputs: readonly string[], io: TaskOutput): void {
  write({ flag: "--report" }, path, html, inputs, false);
  io.out(`wrote ${text(path)}`);
}

/** Where the command's lines go: stdout and stderr, or a test's capture. */
export type CalibrateOutput = TaskOutput;

/**
 * Runs `deno task calibrate` with `args`, its lines to `output`: the exit
 * code (0 written; 1 a fit made its own points worse; 2 bad input or an
 * output that cannot be written, with one located line). Tests call it
 * in-process; the task runs it on the process's own output, where a fit
 * that takes more than a second shows a progress bar on a terminal.
 */
export async function runCalibrate(args: readonly string[], output: TaskOutput = CONSOLE_OUTPUT): Promise<number> {
  try {
    return await main([...args], output);
  } catch (e) {
    if (!(e instanceof InputError || e instanceof OutputError)) throw e;
    output.err(e.message);
    return 2;
  }
}

if (import.meta.main) Deno.exitCode = await taskMain("calibrate", () => runCalibrate(Deno.args));
