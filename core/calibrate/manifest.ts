/**
 * The calibration manifest (`deno task calibrate manifest.yaml`): the
 * deployment the measurements ran on, the measurement files, and what to fit.
 *
 * ```yaml
 * instance_config: configs/h100_tp1.yaml   # the deployment (one device type), relative to this file
 * common_config: configs/llama8b.yaml      # model and serving settings; load_gen comes from each run
 * measurements:
 *   - vllm: results/rate4.json             # vLLM bench serve --save-result
 *   - sglang: results/runs.jsonl           # SGLang bench_serving (one run per line)
 *   - csv: results/more.csv                # num_prompts,input_len,output_len,request_rate,max_concurrency,median_ttft_ms,median_tpot_ms,output_throughput
 * fit: [matmul, attention, memory, step_overhead]   # default: all four
 * folds: 5                                 # k-fold cross-validation (0: none)
 * output: h100-my-cluster.yaml             # the fitted device file; default <manifest>.device.yaml
 * ```
 *
 * @module
 */
import { z } from "zod";
import { loadConfigSources, readYaml, resolveFrom } from "../config/load.ts";
import type { FileSystem } from "../config/load.ts";
import { mapping, nonNegativeInt } from "../config/schema.ts";
import { validate } from "../config/validate.ts";
import { FIT_PARAMETERS } from "./fit.ts";
import type { CalibrationSetup, FitParameter } from "./fit.ts";
import { readMeasurementCsv, readSglangResults, readVllmResult } from "./measurements.ts";
import type { MeasuredRun } from "./measurements.ts";

const path = () => z.string({ error: "expected a file path" }).min(1, { error: "expected a file path" });

/** Schema of a calibration manifest. */
export const ManifestSchema = mapping({
  instance_config: z.union([path(), z.array(path()).min(1)]),
  common_config: path(),
  measurements: z.array(
    z.union([mapping({ vllm: path() }), mapping({ sglang: path() }), mapping({ csv: path() })], {
      error: "expected {vllm: file}, {sglang: file} or {csv: file}",
    }),
  ).min(1, { error: "expected at least one measurement file" }),
  fit: z.array(z.enum(FIT_PARAMETERS, { error: `expected one of ${FIT_PARAMETERS.join(", ")}` })).min(1).optional(),
  folds: nonNegativeInt().optional(),
  output: path().optional(),
});

/** A loaded manifest: the deployment, the runs and the options. */
export interface Manifest {
  /** The deployment. */
  readonly setup: CalibrationSetup;
  /** Every measured run, in file order. */
  readonly runs: readonly MeasuredRun[];
  /** Constants to fit. */
  readonly parameters: readonly FitParameter[];
  /** Cross-validation folds. */
  readonly folds: number;
  /** Where the fitted device file goes. */
  readonly output: string;
  /** The manifest file. */
  readonly file: string;
}

/**
 * Reads a manifest and everything it names.
 *
 * @throws {InputError} on a bad manifest, configuration or measurement file (located), or groups on unlike devices
 */
export function loadManifest(file: string, fs: FileSystem): Manifest {
  const src = readYaml(file, fs);
  const m = validate(src, ManifestSchema);
  const rel = (p: string) => resolveFrom(file, p);
  const instancePaths = (Array.isArray(m.instance_config) ? m.instance_config : [m.instance_config]).map(rel);
  const instances = instancePaths.map((p) => readYaml(p, fs));
  const common = readYaml(rel(m.common_config), fs);
  const cfg = loadConfigSources(instances, common, fs);
  const device = cfg.groups[0].device;
  cfg.groups.forEach((g, i) => {
    if (g.device.name !== device.name) {
      src.fail(
        ["instance_config"],
        `group ${i} runs on ${g.device.name}, group 0 on ${device.name}: calibrate one device type at a time`,
      );
    }
  });
  const runs = m.measurements.flatMap((entry) => {
    const [kind, p] = Object.entries(entry)[0] as ["vllm" | "sglang" | "csv", string];
    const f = rel(p);
    let text: string;
    try {
      text = fs.readText(f);
    } catch {
      return src.fail(["measurements"], `cannot read measurement file ${f}`);
    }
    return kind === "vllm"
      ? readVllmResult(f, text)
      : kind === "sglang"
      ? readSglangResults(f, text)
      : readMeasurementCsv(f, text);
  });
  return {
    setup: { instances, common, fs, device },
    runs,
    parameters: m.fit ?? FIT_PARAMETERS,
    folds: m.folds ?? 5,
    output: m.output ? rel(m.output) : file.replace(/\.ya?ml$/i, "") + ".device.yaml",
    file,
  };
}
