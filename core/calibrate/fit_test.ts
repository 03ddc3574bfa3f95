import assert from "node:assert/strict";
import { loadConfig, loadConfigSources, readYaml } from "../config/load.ts";
import { InputError } from "../config/errors.ts";
import { calibrate, DEFAULT_FIT, deviceFileText, deviceValues, simulateRun, trialDevice } from "./fit.ts";
import type { CalibrationSetup, FitValues } from "./fit.ts";
import { readMeasurementCsv, readSglangResults, readVllmResult } from "./measurements.ts";
import type { MeasuredRun } from "./measurements.ts";
import type { FileSystem } from "../config/load.ts";

const files: Record<string, string> = {
  "i.yaml":
    "instance_groups:\n  - {num_instances: 1, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: both}\n",
  "c.yaml":
    "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\nserving_config: {block_size: 16, max_tokens_budget: 8192}\n",
};
const fs: FileSystem = {
  readText: (p) => {
    if (!(p in files)) throw new Deno.errors.NotFound(p);
    return files[p];
  },
  isDirectory: () => false,
};

/** The deployment of the tests: Llama-3.1-8B on one H100. */
export function h100Setup(): CalibrationSetup {
  const instances = [readYaml("i.yaml", fs)];
  const common = readYaml("c.yaml", fs);
  return { instances, common, fs, device: loadConfigSources(instances, common, fs).groups[0].device };
}

/** Runs "measured" by the simulator itself with known constants: prompts from 200 to 8,000 tokens, batch 1 to 128. */
export function syntheticRuns(setup: CalibrationSetup, truth: FitValues): MeasuredRun[] {
  const shapes: [number, number, number, number][] = [
    [40, 4000, 8, 1],
    [40, 1000, 8, 1],
    [40, 200, 128, 1],
    [60, 1000, 128, 8],
    [120, 1000, 128, 32],
    [200, 500, 256, 128],
    [100, 8000, 64, 4],
    [200, 2000, 200, 64],
  ];
  return shapes.map(([requests, input, output, maxConcurrency], k) => {
    const run = { where: `synthetic ${k}`, requests, input, output, rate: Infinity, maxConcurrency, metrics: {} };
    return { ...run, metrics: simulateRun(setup, truth, run) };
  });
}

Deno.test("calibrate() recovers known constants within 5% from runs the simulator measured with them", () => {
  const setup = h100Setup();
  const truth = {
    matmul: 0.62,
    attention: 0.5,
    memory: 0.7,
    step_overhead: 900e-6,
    seq_overhead: 40e-6,
    request_overhead: 0,
  };
  const r = calibrate(setup, syntheticRuns(setup, truth), { folds: 4 });
  for (const p of DEFAULT_FIT) {
    assert.ok(Math.abs(r.fitted[p] / truth[p] - 1) < 0.05, `${p}: ${r.fitted[p]} vs ${truth[p]}`);
  }
  assert.ok(r.errorBefore > 0.1, `${r.errorBefore}`); // the catalog values are far off
  assert.ok(r.errorAfter < 0.01, `${r.errorAfter}`);
  assert.ok(r.crossValidation!.after < r.crossValidation!.before / 5, JSON.stringify(r.crossValidation));
});

Deno.test("calibrate() recovers a per-request latency (API server, tokenization) from TTFT within 5%", () => {
  const setup = h100Setup();
  const truth = { ...deviceValues(setup.device), request_overhead: 40e-3 };
  const r = calibrate(setup, syntheticRuns(setup, truth), { parameters: ["request_overhead"], folds: 0 });
  assert.ok(Math.abs(r.fitted.request_overhead / 40e-3 - 1) < 0.05, `${r.fitted.request_overhead}`);
  assert.equal(r.fitted.step_overhead, r.start.step_overhead);
});

Deno.test("calibrate() keeps unfitted constants and every efficiency within (0, 1]", () => {
  const setup = h100Setup();
  // Measured as if the chip beat its peak: the fit stops at efficiency 1.
  const truth = {
    matmul: 0.8,
    attention: 0.75,
    memory: 1.4,
    step_overhead: 500e-6,
    seq_overhead: 0,
    request_overhead: 0,
  };
  const r = calibrate(
    setup,
    syntheticRuns(setup, { ...truth, memory: 1 }).map((run) => ({
      ...run,
      metrics: { tpot: run.metrics.tpot! / 1.4 },
    })),
    { parameters: ["memory"], folds: 0 },
  );
  assert.ok(r.fitted.memory <= 1 && r.fitted.memory > 0.95, `${r.fitted.memory}`);
  assert.equal(r.fitted.matmul, r.start.matmul);
  assert.equal(r.crossValidation, undefined);
});

Deno.test("a trial runs on the device its written device file loads as; a constant out of bounds is an InputError", () => {
  const d = h100Setup().device;
  const v = {
    matmul: 0.6123456789,
    attention: 0.5,
    memory: 0.7,
    step_overhead: 901.23456e-6,
    seq_overhead: 40e-6,
    request_overhead: 3e-3,
  };
  const written: Record<string, string> = {
    "i.yaml": files["i.yaml"].replace("device_type: H100_SXM_80G", "device_type: ./fitted.yaml"),
    "c.yaml": files["c.yaml"],
    "fitted.yaml": deviceFileText(d, v, ["a fit"]),
  };
  const loaded = loadConfig(["i.yaml"], "c.yaml", { readText: (p) => written[p], isDirectory: () => false })
    .groups[0].device;
  assert.deepEqual({ ...trialDevice(d, v), provenance: "" }, { ...loaded, provenance: "" });
  assert.equal(trialDevice(d, v).efficiency.matmul, 0.612346);
  assert.throws(
    () => trialDevice(d, { ...v, memory: 1.2 }),
    (e) => e instanceof InputError && /trial constant memory: expected a value in \(0, 1\], got 1\.2$/.test(e.message),
  );
  assert.throws(() => trialDevice(d, { ...v, step_overhead: -1e-6 }), /trial constant step_overhead: .* 0 to 10 s/);
});

Deno.test("readVllmResult() and readSglangResults() take the means, the rate and the medians in seconds", () => {
  const v = readVllmResult(
    "r.json",
    JSON.stringify({
      completed: 100,
      total_input_tokens: 102400,
      total_output_tokens: 12800,
      request_rate: "inf",
      max_concurrency: 16,
      median_ttft_ms: 120,
      median_tpot_ms: 9.5,
      output_throughput: 1800,
    }),
  );
  const [{ origin, ...run }] = v;
  assert.deepEqual(origin?.requests, { file: "r.json", line: 1, col: 14, keyPath: "completed" });
  assert.deepEqual([run], [{
    where: "r.json",
    requests: 100,
    input: 1024,
    output: 128,
    rate: Infinity,
    maxConcurrency: 16,
    metrics: { ttft: 0.12, tpot: 0.0095, throughput: 1800 },
  }]);
  const s = readSglangResults(
    "s.jsonl",
    '{"completed": 10, "total_input_tokens": 1000, "total_output_tokens": 500, "request_rate": 4, "median_tpot_ms": 20}\n\n',
  );
  assert.equal(s[0].rate, 4);
  assert.equal(s[0].maxConcurrency, undefined);
  assert.deepEqual(s[0].metrics, { tpot: 0.02 });
});

Deno.test("a bad measurement file is an InputError at its file and line", () => {
  const bad = (f: () => unknown, message: string) =>
    assert.throws(f, (e) => e instanceof InputError && e.message === message);
  bad(
    () =>
      readSglangResults(
        "s.jsonl",
        '{"completed": 1, "total_input_tokens": 5, "total_output_tokens": 5, "output_throughput": 9}\n{oops\n',
      ),
    "s.jsonl:2:1: not JSON: Expected property name or '}' in JSON at position 1 (line 1 column 2)",
  );
  bad(
    () => readVllmResult("r.json", '{"completed": 0}'),
    "r.json:1:15: completed: expected a positive integer (requests finished), got 0",
  );
  bad(
    () => readMeasurementCsv("m.csv", "num_prompts,input_len,output_len\n1,2,3\n"),
    "m.csv:1:1: missing column 'request_rate'",
  );
  bad(
    () => readMeasurementCsv("m.csv", "num_prompts,input_len,output_len,request_rate,median_tpot_ms\n10,100,10,-1,5\n"),
    'm.csv:2:11: request_rate: expected a positive number, got "-1"',
  );
});
