/**
 * `deno task calibrate manifest.yaml`: fits the efficiencies and the step
 * overhead of the deployment's device to the user's own benchmark results
 * (vLLM `--save-result` JSON, SGLang `bench_serving` JSONL, CSV), prints
 * the error before and after with k-fold cross-validation, and writes a
 * device file to name as `device_type`. Exit 2 on bad input.
 *
 * @module
 */
import { InputError } from "../core/config/errors.ts";
import { denoFileSystem } from "../core/config/load.ts";
import { calibrate, deviceFileText, FIT_PARAMETERS } from "../core/calibrate/fit.ts";
import { loadManifest } from "../core/calibrate/manifest.ts";

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

function main(args: string[]): number {
  if (args.length !== 1 || args[0].startsWith("-")) {
    console.error("usage: deno task calibrate manifest.yaml   (see core/calibrate/manifest.ts for its keys)");
    return 2;
  }
  const m = loadManifest(args[0], denoFileSystem);
  const r = calibrate(m.setup, m.runs, { parameters: m.parameters, folds: m.folds });
  const show = (p: string, v: number) => (p.endsWith("_overhead") ? `${(v * 1e6).toFixed(0)} µs` : v.toFixed(3));
  console.log(`calibrated ${m.setup.device.name} on ${m.runs.length} runs (${r.points} measured figures)`);
  for (const p of FIT_PARAMETERS) {
    const fitted = r.parameters.includes(p);
    console.log(
      `  ${p.padEnd(14)} ${show(p, r.start[p]).padStart(8)} -> ${show(p, r.fitted[p]).padStart(8)}${
        fitted ? "" : "  (not fitted)"
      }`,
    );
  }
  console.log(`  median |error|: ${pct(r.errorBefore)} before, ${pct(r.errorAfter)} after`);
  const cv = r.crossValidation;
  if (cv) {
    console.log(`  ${cv.folds}-fold cross-validated: ${pct(cv.before)} uncalibrated, ${pct(cv.after)} calibrated`);
  }
  const header = [
    `${m.setup.device.name} calibrated by \`deno task calibrate ${m.file}\` on ${m.runs.length} measured runs.`,
    `Median |error| ${pct(r.errorBefore)} before, ${pct(r.errorAfter)} after${
      cv ? `; ${cv.folds}-fold cross-validated ${pct(cv.after)} (uncalibrated ${pct(cv.before)})` : ""
    }.`,
    `Fitted: ${r.parameters.join(", ")}; every other value is the catalog's. Name this file as device_type.`,
  ];
  Deno.writeTextFileSync(m.output, deviceFileText(m.setup.device, r.fitted, header));
  console.log(`wrote ${m.output}`);
  return 0;
}

try {
  Deno.exitCode = main(Deno.args);
} catch (e) {
  if (!(e instanceof InputError)) throw e;
  console.error(e.message);
  Deno.exitCode = 2;
}
