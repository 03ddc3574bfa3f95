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
import { InputError } from "../core/config/errors.ts";
import { denoFileSystem } from "../core/config/load.ts";
import { atBounds, calibrate, DEFAULT_FIT, deviceFileText, FIT_PARAMETERS } from "../core/calibrate/fit.ts";
import type { CalibrationResult, FitParameter } from "../core/calibrate/fit.ts";
import { expandScenarioPaths, loadManifest } from "../core/calibrate/manifest.ts";
import type { ScenarioManifest } from "../core/calibrate/manifest.ts";
import { calibrateScenarios, loadScenarioCases } from "../core/calibrate/scenarios.ts";
import { taskMain } from "../scenarios/_args.ts";

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const signed = (x: number) => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}%`;

const USAGE = [
  "Usage: deno task calibrate manifest.yaml   (see core/calibrate/manifest.ts for its keys)",
  "       deno task calibrate --scenarios FILE… [--engine NAME] [--fit a,b,…] [--folds K] [--iterations N]",
  "                           [--max-requests N] [--output DIR]",
  "",
  "Fits the device's efficiencies and host costs to measured benchmark results (a manifest), or to the",
  "measured: rows of validation scenarios (--scenarios), prints the error before and after with k-fold",
  "cross-validation, and writes a device file to name as device_type.",
  "",
  "  --engine NAME       only scenarios on this serving_config.engine",
  `  --fit a,b,…         the constants to fit (default ${DEFAULT_FIT.join(",")}; of ${FIT_PARAMETERS.join(", ")})`,
  "  --folds K           cross-validation folds (default 5)",
  "  --iterations N      Levenberg-Marquardt iterations",
  "  --max-requests N    cap each scenario's requests",
  "  --output DIR        where to write the device files (default .)",
  "  -h, --help          show this help and exit",
  "",
  "Every point's error is printed before (with the values the deployment runs with: the catalog device with its",
  "engine profile's host costs), fitted, and held out; a constant that ends at an end of its range is a warning.",
  "",
  "Exit codes: 0 written; 1 a fit made its own points worse (not written); 2 bad input.",
].join("\n");

/** One line on stderr for a bad argument; exit 2. */
const HINT = "(deno task calibrate --help)";

/** A fitted constant in its unit. */
const shown = (p: string, v: number) => (p.endsWith("_overhead") ? `${(v * 1e6).toFixed(0)} µs` : v.toFixed(3));

/** A warning line per fitted constant at an end of its range. */
function boundLines(r: CalibrationResult, what: string): string[] {
  return atBounds(r).map((b) =>
    `warning: ${what}: ${b.parameter} fitted to ${shown(b.parameter, b.value)}, at the ${b.bound} of its range (${
      shown(b.parameter, b.min)
    } to ${
      shown(b.parameter, b.max)
    }): the measurements want a value the range does not allow, so the model lacks something this constant stands in for`
  );
}

/** Each measured figure's error before (the values the deployment runs with), after and held out. */
function pointLines(r: CalibrationResult, name: (source: string) => string): string[] {
  const rows = r.errors.map((e) => [`${name(e.source)} ${e.metric}`, e]) as [string, (typeof r.errors)[number]][];
  const width = Math.max(11, ...rows.map(([n]) => n.length));
  return [
    `  ${"point metric".padEnd(width)}  before (as run)   fitted  held-out`,
    ...rows.map(([n, e]) =>
      `  ${n.padEnd(width)}  ${signed(e.before).padStart(15)}  ${signed(e.after).padStart(7)}  ${
        (e.heldOut !== undefined ? signed(e.heldOut) : "-").padStart(8)
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
    } after; median |error| ${pct(r.errorBefore)} before, ${pct(r.errorAfter)} after): not written`
    : undefined;
}

/** The error lines of a fit: median |error| and the rms log error it minimizes, before and after. */
function errorLines(r: CalibrationResult): string[] {
  return [
    `  median |error|: ${pct(r.errorBefore)} before, ${pct(r.errorAfter)} after`,
    `  rms log error (what the fit minimizes): ${r.rmsBefore.toFixed(3)} before, ${r.rmsAfter.toFixed(3)} after`,
  ];
}

/** The constants before and after, one line each. */
function constantLines(r: CalibrationResult): string[] {
  return FIT_PARAMETERS.map((p) =>
    `  ${p.padEnd(14)} ${shown(p, r.start[p]).padStart(8)} -> ${shown(p, r.fitted[p]).padStart(8)}${
      r.parameters.includes(p)
        ? ""
        : r.noEffect.includes(p)
        ? "  (not fitted: it moves none of these points)"
        : "  (not fitted)"
    }`
  );
}

function runManifest(file: string): number {
  const m = loadManifest(file, denoFileSystem);
  if (m.kind === "scenarios") return runScenarios({ ...m, how: m.file });
  const r = calibrate(m.setup, m.runs, { parameters: m.parameters, folds: m.folds, iterations: m.iterations });
  io.out(`calibrated ${m.setup.device.name} on ${m.runs.length} runs (${r.points} measured figures)`);
  for (const line of constantLines(r)) io.out(line);
  for (const line of pointLines(r, (s) => s.replace(/^.*[\\/]/, ""))) io.out(line);
  for (const line of errorLines(r)) io.out(line);
  const cv = r.crossValidation;
  if (cv) {
    io.out(`  ${cv.folds}-fold cross-validated: ${pct(cv.before)} uncalibrated, ${pct(cv.after)} calibrated`);
  } else io.out("  one run: nothing to hold out, so no cross-validated figure");
  for (const line of boundLines(r, m.setup.device.name)) io.err(line);
  const refused = worse(r);
  if (refused) {
    io.err(`calibrate: ${refused}`);
    return 1;
  }
  const header = [
    `${m.setup.device.name} calibrated by \`deno task calibrate ${m.file}\` on ${m.runs.length} measured runs.`,
    `Median |error| ${pct(r.errorBefore)} before, ${pct(r.errorAfter)} after${
      cv ? `; ${cv.folds}-fold cross-validated ${pct(cv.after)} (uncalibrated ${pct(cv.before)})` : ""
    }.`,
    `Fitted: ${r.parameters.join(", ")}; every other value is the catalog's. Name this file as device_type.`,
  ];
  Deno.writeTextFileSync(m.output, deviceFileText(m.setup.device, r.fitted, header));
  io.out(`wrote ${m.output}`);
  return 0;
}

/** Fits each device to its scenarios, prints per-case and pooled errors, writes one device file per device. */
function runScenarios(m: Omit<ScenarioManifest, "kind" | "file"> & { readonly how: string }): number {
  const cases = loadScenarioCases(m.scenarios, denoFileSystem, m.engine !== undefined ? { engine: m.engine } : {});
  if (cases.length === 0) {
    throw new InputError(
      { file: m.how },
      `no scenario among ${m.scenarios.length} runs on serving_config.engine '${m.engine}'`,
    );
  }
  const r = calibrateScenarios(cases, denoFileSystem, {
    parameters: m.parameters,
    folds: m.folds,
    ...(m.iterations !== undefined ? { iterations: m.iterations } : {}),
    ...(m.maxRequests !== undefined ? { maxRequests: m.maxRequests } : {}),
  });
  Deno.mkdirSync(m.outputDir, { recursive: true });
  let status = 0;
  for (const d of r.devices) {
    const res = d.result;
    const cv = res.crossValidation;
    io.out(`calibrated ${d.group} on ${d.cases.length} scenarios (${res.points} measured figures)`);
    for (const line of constantLines(res)) io.out(line);
    for (const line of pointLines(res, (src) => src.replace(/^.*[\\/]/, ""))) io.out(line);
    for (const line of errorLines(res)) io.out(line);
    if (cv) {
      io.out(`  ${cv.folds}-fold cross-validated: ${pct(cv.before)} uncalibrated, ${pct(cv.after)} calibrated`);
    } else io.out("  one scenario: nothing to hold out, so no cross-validated figure");
    for (const line of boundLines(res, d.group)) io.err(line);
    const refused = worse(res);
    if (refused) {
      io.err(`calibrate: ${d.group}: ${refused}`);
      status = 1;
      continue;
    }
    const out = `${m.outputDir.replace(/\/$/, "")}/${d.group.replace(/[^A-Za-z0-9._-]+/g, "_")}.calibrated.yaml`;
    const header = [
      `${d.group} calibrated by \`deno task calibrate ${m.how}\` on ${d.cases.length} validation scenarios.`,
      `Median |error| ${pct(res.errorBefore)} before, ${pct(res.errorAfter)} after${
        cv ? `; ${cv.folds}-fold cross-validated ${pct(cv.after)} (uncalibrated ${pct(cv.before)})` : ""
      }.`,
      `Fitted: ${res.parameters.join(", ")}; every other value is the catalog's. Name this file as device_type.`,
    ];
    Deno.writeTextFileSync(out, deviceFileText(d.device, res.fitted, header));
    io.out(`  wrote ${out}`);
  }
  io.out(
    `pooled over ${r.devices.length} device(s), ${r.points} figures: median |error| ${
      pct(r.errorBefore)
    } uncalibrated, ${pct(r.errorAfter)} fitted${
      r.crossValidated !== undefined ? `, ${pct(r.crossValidated)} cross-validated` : ""
    }`,
  );
  return status;
}

/** `--scenarios A B … --engine vllm …` */
function runFlags(args: string[]): number {
  const scenarios: string[] = [];
  const opts: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--scenarios") {
      while (i + 1 < args.length && !args[i + 1].startsWith("--")) scenarios.push(args[++i]);
      continue;
    }
    const m = /^--(engine|fit|folds|iterations|max-requests|output)(?:=(.*))?$/.exec(a);
    if (!m) {
      const what = a.startsWith("-") ? "option" : "argument";
      throw new InputError({ file: "(command line)" }, `unknown ${what} '${a}' ${HINT}`);
    }
    const v = m[2] ?? args[++i];
    if (v === undefined) throw new InputError({ file: "(command line)" }, `--${m[1]} needs a value`);
    opts[m[1]] = v;
  }
  if (scenarios.length === 0) throw new InputError({ file: "(command line)" }, `--scenarios needs files ${HINT}`);
  const count = (k: string, min: number): number | undefined => {
    if (opts[k] === undefined) return undefined;
    const n = Number(opts[k]);
    if (!Number.isInteger(n) || n < min) {
      throw new InputError({ file: "(command line)" }, `--${k}: expected an integer ≥ ${min}, got '${opts[k]}'`);
    }
    return n;
  };
  const parameters = (opts.fit?.split(",").map((p) => p.trim()) ?? [...DEFAULT_FIT]) as FitParameter[];
  const bad = parameters.find((p) => !FIT_PARAMETERS.includes(p));
  if (bad) {
    throw new InputError({ file: "(command line)" }, `--fit: unknown constant '${bad}' (${FIT_PARAMETERS.join(", ")})`);
  }
  const iterations = count("iterations", 1);
  const maxRequests = count("max-requests", 1);
  return runScenarios({
    scenarios: expandScenarioPaths(scenarios, { file: "(command line)" }),
    ...(opts.engine !== undefined ? { engine: opts.engine } : {}),
    ...(maxRequests !== undefined ? { maxRequests } : {}),
    parameters,
    folds: count("folds", 0) ?? 5,
    ...(iterations !== undefined ? { iterations } : {}),
    outputDir: opts.output ?? ".",
    how: `--scenarios … (${scenarios.length} paths)`,
  });
}

function main(args: string[]): number {
  if (args.includes("-h") || args.includes("--help")) {
    io.out(USAGE);
    return 0;
  }
  if (args.includes("--scenarios")) return runFlags(args);
  if (args.length !== 1 || args[0].startsWith("-")) {
    const bad = args.find((a) => a.startsWith("-"));
    io.err(
      `calibrate: ${bad ? `unknown option '${bad}'` : "expected one manifest file, or --scenarios FILE…"} ${HINT}`,
    );
    return 2;
  }
  return runManifest(args[0]);
}

/** Where the command's lines go: stdout and stderr, or a test's capture. */
export interface CalibrateOutput {
  /** A line for stdout. */
  out(line: string): void;
  /** A line for stderr. */
  err(line: string): void;
}

let io: CalibrateOutput = { out: (l) => console.log(l), err: (l) => console.error(l) };

/**
 * Runs `deno task calibrate` with `args`, its lines to `output`: the exit
 * code (0 done, 2 bad input with one located line). Tests call it
 * in-process; the task runs it on the process's own output.
 */
export function runCalibrate(args: string[], output: CalibrateOutput = io): number {
  const before = io;
  io = output;
  try {
    return main(args);
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    io.err(e.message);
    return 2;
  } finally {
    io = before;
  }
}

if (import.meta.main) Deno.exitCode = await taskMain("calibrate", () => runCalibrate(Deno.args));
