/**
 * Bad input never crashes: each case exits 2 with one line
 * `file:line:col: key.path: message` on stderr and nothing on stdout.
 * The cases call cli.ts's main in this process; one also runs as
 * `deno task sim`, so that the exit code of the process is checked too.
 */
import assert from "node:assert/strict";
import { type CliRun, COMMON_OK, INSTANCE_OK, runCli, runTask, writeTemp } from "./_helpers.ts";

interface Case {
  /** What is wrong. */
  name: string;
  instance?: string;
  common?: string;
  extra?: Record<string, string>;
  /** The exact line expected, with DIR standing for the temp folder. */
  expect: string | RegExp;
  args?: (dir: string) => string[];
}

const cases: Case[] = [
  {
    name: "YAML syntax error",
    instance: "instance_groups:\n  - num_instances: 1\n    pd_role: [both\n",
    expect: /^DIRi\.yaml:4:1: YAML syntax error: .+$/,
  },
  {
    name: "unknown key, with a suggestion",
    common: COMMON_OK.replace("max_tokens_budget", "max_token_budget"),
    expect:
      "DIRc.yaml:13:3: serving_config.max_token_budget: unknown key 'max_token_budget'; did you mean 'max_tokens_budget'?",
  },
  {
    name: "a key of another workload type: where it belongs under this one",
    common: COMMON_OK.replace("load_gen_type: fixed_length", "load_gen_type: synthetic").replace(
      "  num_input_tokens: 512\n  num_output_tokens: 64\n",
      "",
    ),
    expect: "DIRc.yaml:7:3: load_gen.request_rate: unknown key 'request_rate' here: it belongs under load_gen.arrival",
  },
  {
    name: "a key of another workload type: which type it goes with",
    common: COMMON_OK.replace("load_gen_type: fixed_length", "load_gen_type: trace\n  trace_path: t.jsonl"),
    expect:
      "DIRc.yaml:8:3: load_gen.num_input_tokens: unknown key 'num_input_tokens' here: it goes with load_gen_type fixed_length",
  },
  {
    name: "a common-file key in an instance file: which file it belongs in",
    instance: INSTANCE_OK + "    enable_kv_transfer_modeling: true\n",
    expect:
      "DIRi.yaml:6:5: instance_groups[0].enable_kv_transfer_modeling: unknown key 'enable_kv_transfer_modeling' here: it belongs in the common file (--common_config_path), under model_config",
  },
  {
    name: "wrong type",
    common: COMMON_OK.replace("num_requests: 50", "num_requests: many"),
    expect: 'DIRc.yaml:6:17: load_gen.num_requests: expected a positive integer, got "many"',
  },
  {
    name: "negative number",
    common: COMMON_OK.replace("max_tokens_budget: 4096", "max_tokens_budget: -1"),
    expect: "DIRc.yaml:13:22: serving_config.max_tokens_budget: expected a positive integer, got -1",
  },
  {
    name: "missing instance file",
    args: (d) => ["--instance_config_path", `${d}nope.yaml`, "--common_config_path", `${d}c.yaml`],
    expect: "DIRnope.yaml: cannot read: file not found",
  },
  {
    name: "missing device file named in the config",
    instance: INSTANCE_OK.replace("H100_SXM_80G", "./chips/mine.yaml"),
    expect:
      "DIRi.yaml:4:18: instance_groups[0].device_type: cannot read device file DIRchips/mine.yaml: file not found",
  },
  {
    name: "missing required key",
    instance: INSTANCE_OK.replace("    num_devices_per_instance: 1\n", ""),
    expect:
      "DIRi.yaml:2:5: instance_groups[0].num_devices_per_instance: missing required key 'num_devices_per_instance'",
  },
  {
    name: "unknown device",
    instance: INSTANCE_OK.replace("H100_SXM_80G", "H100_SXM_80GB"),
    expect:
      "DIRi.yaml:4:18: instance_groups[0].device_type: unknown device 'H100_SXM_80GB'; did you mean 'H100_SXM_80G'?",
  },
  {
    name: "unknown model",
    common: COMMON_OK.replace("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instrct"),
    expect:
      "DIRc.yaml:2:9: model_config.name: unknown model 'meta-llama/Llama-3.1-8B-Instrct'; did you mean 'meta-llama/Llama-3.1-8B-Instruct'?",
  },
  {
    name: "model too big for the device",
    instance: INSTANCE_OK.replace("H100_SXM_80G", "L40S_48G"),
    common: COMMON_OK.replace("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B-Instruct"),
    expect:
      /^DIRi\.yaml:3:31: instance_groups\[0\]\.num_devices_per_instance: meta-llama\/Llama-3\.1-70B-Instruct does not fit on L40S_48G with tp_size 1: needs 13\d\.\d GiB per device \(weights 13\d\.\d GiB, activations 1\.\d GiB, runtime 1\.0 GiB\) plus KV blocks of 5\.0 MiB, but 40\.5 GiB is usable \(kv_cache_memory_fraction 0\.9 of 45\.0 GiB\)$/,
  },
  {
    name: "pd_role both mixed with prefill",
    instance: INSTANCE_OK + INSTANCE_OK.replace("instance_groups:\n", "").replace("pd_role: both", "pd_role: prefill"),
    expect:
      /^DIRi\.yaml:9:14: instance_groups\[1\]\.pd_role: 'both' groups cannot be mixed with 'prefill' or 'decode' groups.*$/,
  },
  {
    name: "only a prefill group",
    instance: INSTANCE_OK.replace("pd_role: both", "pd_role: prefill"),
    expect: "DIRi.yaml:5:14: instance_groups[0].pd_role: a 'prefill' group needs a 'decode' group to pair with",
  },
  {
    name: "unknown routing policy",
    common: COMMON_OK.replace("max_tokens_budget: 4096", "max_tokens_budget: 4096\n  routing_policy: shortest_queue"),
    expect:
      'DIRc.yaml:14:19: serving_config.routing_policy: expected one of least_loaded, round_robin, least_kv, random, prefix_aware, session_affinity, got "shortest_queue"',
  },
  {
    name: "a !!binary value where a key is unknown (parsed data is shared frozen; binary data stays as parsed)",
    common: COMMON_OK.replace("max_tokens_budget: 4096", "max_tokens_budget: 4096\n  note: !!binary aGVsbG8="),
    expect: "DIRc.yaml:14:3: serving_config.note: unknown key 'note'",
  },
  {
    name: "unknown pd_role",
    instance: INSTANCE_OK.replace("pd_role: both", "pd_role: mixed"),
    expect: 'DIRi.yaml:5:14: instance_groups[0].pd_role: expected one of prefill, decode, both, got "mixed"',
  },
  {
    name: "tp_size not dividing the heads",
    instance: INSTANCE_OK.replace("num_devices_per_instance: 1", "num_devices_per_instance: 8") +
      "    parallel_config:\n      tp_size: 8\n",
    common: COMMON_OK.replace("meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-7B-Instruct"),
    expect:
      "DIRi.yaml:7:16: instance_groups[0].parallel_config.tp_size: must divide the 28 attention heads of Qwen/Qwen2.5-7B-Instruct, got 8",
  },
  {
    name: "tp_size × dp_size not equal to world_size",
    instance: INSTANCE_OK.replace("num_devices_per_instance: 1", "num_devices_per_instance: 4") +
      "    parallel_config:\n      tp_size: 2\n      dp_size: 1\n",
    expect:
      "DIRi.yaml:7:16: instance_groups[0].parallel_config.tp_size: tp_size × dp_size must equal world_size: 2 × 1 ≠ 4",
  },
  {
    name: "no instance groups",
    instance: "instance_groups: []\n",
    expect: "DIRi.yaml:1:18: instance_groups: expected at least one instance group, got an empty list",
  },
  {
    name: "a request that can never fit the KV cache",
    common: COMMON_OK.replace("max_tokens_budget: 4096", "max_tokens_budget: 4096\n  num_kv_blocks: 20"),
    expect:
      "DIRc.yaml:7:21: load_gen.num_input_tokens: no engine can ever serve a request of 512 + 64 tokens: needs 36 KV blocks (575 tokens) but an engine holds 20 (320 tokens)",
  },
  {
    name: "MoE layout not covering the devices",
    instance: INSTANCE_OK.replace("num_devices_per_instance: 1", "num_devices_per_instance: 8") +
      "    parallel_config:\n      tp_size: 8\n      ep_size: 4\n      moe_tp_size: 1\n      moe_dp_size: 1\n",
    common: COMMON_OK.replace("meta-llama/Llama-3.1-8B-Instruct", "mistralai/Mixtral-8x7B-Instruct-v0.1"),
    expect:
      "DIRi.yaml:10:20: instance_groups[0].parallel_config.moe_dp_size: moe_tp_size × moe_dp_size × ep_size must equal world_size: 1 × 1 × 4 ≠ 8",
  },
  {
    name: "more expert-parallel ranks than experts",
    instance: INSTANCE_OK.replace("num_devices_per_instance: 1", "num_devices_per_instance: 16") +
      "    parallel_config:\n      tp_size: 16\n      ep_size: 16\n      moe_tp_size: 1\n",
    common: COMMON_OK.replace("meta-llama/Llama-3.1-8B-Instruct", "mistralai/Mixtral-8x7B-Instruct-v0.1"),
    expect:
      "DIRi.yaml:8:16: instance_groups[0].parallel_config.ep_size: must not exceed the 8 experts of mistralai/Mixtral-8x7B-Instruct-v0.1, got 16",
  },
  {
    name: "infinite number where a finite one is needed",
    common: COMMON_OK.replace("max_concurrency: 16", "max_concurrency: .inf"),
    expect: "DIRc.yaml:11:20: serving_config.max_concurrency: expected a positive integer, got .inf",
  },
  {
    name: "local config.json missing a field",
    common: COMMON_OK.replace("meta-llama/Llama-3.1-8B-Instruct", "./mymodel"),
    extra: { "mymodel": "", "mymodel/config.json": '{\n  "hidden_size": 4096,\n  "num_attention_heads": 32\n}\n' },
    expect: "DIRmymodel/config.json:1:1: num_hidden_layers: missing required field",
  },
  {
    name: "bad --seed",
    args: (d) => ["--instance_config_path", `${d}i.yaml`, "--common_config_path", `${d}c.yaml`, "--seed", "-3"],
    expect: "servingcast: --seed: expected a non-negative integer, got '-3'",
  },
];

/** Runs a case (in this process, or with `run` as `deno task sim`) and checks its exit code and its one line. */
async function checkCase(c: Case, run: (args: string[]) => Promise<CliRun> = runCli) {
  const files: Record<string, string> = { "i.yaml": c.instance ?? INSTANCE_OK, "c.yaml": c.common ?? COMMON_OK };
  const dir = writeTemp({});
  for (const [name, text] of Object.entries({ ...files, ...c.extra })) {
    if (text === "") Deno.mkdirSync(dir + name, { recursive: true });
    else Deno.writeTextFileSync(dir + name, text);
  }
  const args = c.args?.(dir) ?? ["--instance_config_path", `${dir}i.yaml`, "--common_config_path", `${dir}c.yaml`];
  const r = await run(args);
  assert.equal(r.code, 2, `exit code; stderr: ${r.stderr}`);
  assert.equal(r.stdout, "");
  const lines = r.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `one line on stderr, got:\n${r.stderr}`);
  const line = lines[0].replaceAll(dir, "DIR");
  if (typeof c.expect === "string") assert.equal(line, c.expect);
  else assert.match(line, c.expect);
  assert.doesNotMatch(r.stderr, /\bat .*\.ts:\d+/, "no stack trace");
}

for (const c of cases) {
  Deno.test(`bad input: ${c.name} exits 2 with one located line`, () => checkCase(c));
}

Deno.test("bad input through deno task sim: the process exits 2 with the one located line and nothing else", async () => {
  const unknownKey = cases.find((c) => c.name === "unknown key, with a suggestion")!;
  await checkCase(unknownKey, (args) => runTask("sim", args));
});

const SYNTHETIC = COMMON_OK.replace(
  /load_gen:\n( {2}.*\n)+?serving_config:/,
  "load_gen:\n  load_gen_type: synthetic\n  num_requests: 50\n  arrival: {process: poisson, request_rate: 5}\n  input_tokens: {dist: lognormal, mean: 300, std: 100}\n  output_tokens: {dist: uniform, min: 10, max: 50}\nserving_config:",
);

for (
  const c of [
    {
      name: "unknown length distribution",
      common: SYNTHETIC.replace("dist: uniform", "dist: zipf"),
      expect:
        "DIRc.yaml:9:25: load_gen.output_tokens.dist: expected dist one of fixed, uniform, normal, lognormal, bins",
    },
    {
      name: "uniform max below min",
      common: SYNTHETIC.replace("min: 10, max: 50", "min: 10, max: 5"),
      expect: "DIRc.yaml:9:48: load_gen.output_tokens.max: must be ≥ min (10), got 5",
    },
    {
      name: "both request_rate and rate_schedule",
      common: SYNTHETIC.replace(
        "request_rate: 5}",
        "request_rate: 5, rate_schedule: [{duration: 1, request_rate: 2}]}",
      ),
      expect:
        "DIRc.yaml:7:12: load_gen.arrival: give exactly one of request_rate and rate_schedule (or process: burst)",
    },
  ]
) {
  Deno.test(`bad input: ${c.name} exits 2 with one located line`, async () => {
    const dir = writeTemp({ "i.yaml": INSTANCE_OK, "c.yaml": c.common });
    const run = await runCli(["--instance_config_path", `${dir}i.yaml`, "--common_config_path", `${dir}c.yaml`]);
    assert.equal(run.code, 2, run.stderr);
    assert.equal(run.stderr.replaceAll(dir, "DIR"), c.expect + "\n");
  });
}

Deno.test("a synthetic workload runs and reports its lengths", async () => {
  const dir = writeTemp({ "i.yaml": INSTANCE_OK, "c.yaml": SYNTHETIC });
  const run = await runCli(["--instance_config_path", `${dir}i.yaml`, "--common_config_path", `${dir}c.yaml`]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(
    run.stderr,
    /50 requests of lognormal\(mean 300, std 100\) in \/ uniform\(10\.\.50\) out at 5 req\/s poisson/,
  );
  assert.match(run.stdout, /\ntotal_requests {17}50\.000\n/);
});
