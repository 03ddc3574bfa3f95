/**
 * `deno task calibrate` as a user runs it: their vLLM, SGLang and CSV
 * results in, a device file out that brings the simulator to the
 * measurements; bad files exit 2 at their line.
 */
import assert from "node:assert/strict";
import { runCli, runTask, writeTemp } from "./_helpers.ts";
import { readYaml } from "../core/config/load.ts";
import { loadConfigSources } from "../core/config/load.ts";
import { denoFileSystem } from "../core/config/load.ts";
import { simulateRun } from "../core/calibrate/fit.ts";

const INSTANCE =
  "instance_groups:\n  - {num_instances: 1, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: both}\n";
const COMMON =
  "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\nserving_config: {block_size: 16, max_tokens_budget: 8192}\n";

/** What "the cluster" measured: the simulator with slower constants than the catalog's. */
function measure(dir: string, input: number, output: number, concurrency: number) {
  const instances = [readYaml(`${dir}i.yaml`)];
  const common = readYaml(`${dir}c.yaml`);
  const device = loadConfigSources(instances, common).groups[0].device;
  const truth = { matmul: 0.6, attention: 0.55, memory: 0.72, step_overhead: 1e-3, seq_overhead: 30e-6 };
  return simulateRun({ instances, common, fs: denoFileSystem, device }, truth, {
    where: "",
    requests: 4 * concurrency + 20,
    input,
    output,
    rate: Infinity,
    maxConcurrency: concurrency,
    metrics: {},
  });
}

Deno.test("deno task calibrate fits a device file from vLLM, SGLang and CSV results that brings the simulator to them", async () => {
  const dir = writeTemp({ "i.yaml": INSTANCE, "c.yaml": COMMON });
  const vllm = (input: number, output: number, c: number) => {
    const m = measure(dir, input, output, c);
    const n = 4 * c + 20;
    return {
      completed: n,
      total_input_tokens: n * input,
      total_output_tokens: n * output,
      request_rate: "inf",
      max_concurrency: c,
      median_ttft_ms: m.ttft! * 1000,
      median_tpot_ms: m.tpot! * 1000,
      output_throughput: m.throughput,
    };
  };
  Deno.writeTextFileSync(`${dir}a.json`, JSON.stringify(vllm(4000, 16, 1)));
  Deno.writeTextFileSync(`${dir}b.json`, JSON.stringify(vllm(500, 200, 64)));
  Deno.writeTextFileSync(
    `${dir}s.jsonl`,
    [vllm(1000, 128, 8), vllm(2000, 64, 32)].map((o) => JSON.stringify(o)).join("\n") + "\n",
  );
  const c = measure(dir, 200, 128, 1);
  Deno.writeTextFileSync(
    `${dir}m.csv`,
    `num_prompts,input_len,output_len,request_rate,max_concurrency,median_ttft_ms,median_tpot_ms,output_throughput\n24,200,128,inf,1,${
      c.ttft! * 1000
    },${c.tpot! * 1000},\n`,
  );
  Deno.writeTextFileSync(
    `${dir}cal.yaml`,
    "instance_config: i.yaml\ncommon_config: c.yaml\nmeasurements:\n  - vllm: a.json\n  - vllm: b.json\n  - sglang: s.jsonl\n  - csv: m.csv\nfolds: 0\noutput: h100-mine.yaml\n",
  );
  const run = await runTask("calibrate", [`${dir}cal.yaml`]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^calibrated H100_SXM_80G on 5 runs \(14 measured figures\)$/m);
  assert.match(run.stdout, /^ {2}matmul +0\.800 -> +0\.6\d\d$/m);
  assert.match(run.stdout, /^ {2}median \|error\|: \d+\.\d% before, 0\.\d% after$/m);
  // The device file it wrote is one a user names as device_type.
  const device = Deno.readTextFileSync(`${dir}h100-mine.yaml`);
  assert.match(device, /^# H100_SXM_80G calibrated by `deno task calibrate /);
  Deno.writeTextFileSync(`${dir}i2.yaml`, INSTANCE.replace("H100_SXM_80G", "./h100-mine.yaml"));
  const sim = await runCli([
    "--quiet",
    "--instance_config_path",
    `${dir}i2.yaml`,
    "--common_config_path",
    `${dir}c.yaml`,
  ]);
  assert.equal(sim.code, 0, sim.stderr);
});

Deno.test("deno task calibrate: a bad measurement file or manifest exits 2 with its file and line", async () => {
  const dir = writeTemp({
    "i.yaml": INSTANCE,
    "c.yaml": COMMON,
    "s.jsonl": '{"completed": 3, "total_input_tokens": 30, "total_output_tokens": 30, "median_tpot_ms": 5}\nnot json\n',
    "cal.yaml": "instance_config: i.yaml\ncommon_config: c.yaml\nmeasurements:\n  - sglang: s.jsonl\n",
    "bad.yaml": "instance_config: i.yaml\ncommon_config: c.yaml\nmeasurements:\n  - tgi: x.json\n",
  });
  const run = await runTask("calibrate", [`${dir}cal.yaml`]);
  assert.equal(run.code, 2);
  assert.match(run.stderr, /s\.jsonl:2:1: not JSON: /);
  const bad = await runTask("calibrate", [`${dir}bad.yaml`]);
  assert.equal(bad.code, 2);
  assert.match(
    bad.stderr,
    /bad\.yaml:4:\d+: measurements\[0\]: expected \{vllm: file\}, \{sglang: file\} or \{csv: file\}/,
  );
});
