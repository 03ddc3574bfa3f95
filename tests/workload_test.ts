/**
 * Workloads: trace replay (JSONL, CSV, rescaling, malformed lines), the
 * dump/replay round trip, request classes and prefix caching.
 */
import assert from "node:assert/strict";
import { describeRun, runFiles } from "../core/assembly/run.ts";
import { COMMON_OK, INSTANCE_OK, memoryFs, runCli, writeTemp } from "./_helpers.ts";

const common = (loadGen: string, serving = "") =>
  `model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
load_gen: ${loadGen}
serving_config: {max_concurrency: 1000, block_size: 16${serving}}
`;
const run = (files: Record<string, string>) =>
  runFiles(["i.yaml"], "c.yaml", { fs: memoryFs({ "i.yaml": INSTANCE_OK, ...files }) });

const jsonl = [
  '{"timestamp": 1000, "input_length": 900, "output_length": 20, "hash_ids": [1, 2]}',
  '{"timestamp": 1500, "input_length": 300, "output_length": 10}',
  "",
  '{"timestamp": 2500, "input_length": 1200, "output_length": 5, "hash_ids": [1, 2, 3]}',
].join("\n");

Deno.test("trace replay: arrivals from timestamps (ms, origin at the first line), lengths from the lines", () => {
  const out = run({ "c.yaml": common("{load_gen_type: trace, trace_path: t.jsonl}"), "t.jsonl": jsonl });
  const t = out.result.requests;
  assert.deepEqual([...t.arrival], [0, 500_000, 1_500_000]);
  assert.deepEqual([...t.input], [900, 300, 1200]);
  assert.deepEqual([...t.output], [20, 10, 5]);
});

Deno.test("trace replay: time_scale stretches gaps, request_rate rescales to a mean rate, num_requests cuts", () => {
  const scaled = run({
    "c.yaml": common("{load_gen_type: trace, trace_path: t.jsonl, time_scale: 2}"),
    "t.jsonl": jsonl,
  });
  assert.deepEqual([...scaled.result.requests.arrival], [0, 1_000_000, 3_000_000]);
  const rated = run({
    "c.yaml": common("{load_gen_type: trace, trace_path: t.jsonl, request_rate: 4}"),
    "t.jsonl": jsonl,
  });
  assert.deepEqual([...rated.result.requests.arrival], [0, 166_667, 500_000]); // 2 gaps over 0.5 s
  const cut = run({
    "c.yaml": common("{load_gen_type: trace, trace_path: t.jsonl, num_requests: 2}"),
    "t.jsonl": jsonl,
  });
  assert.equal(cut.summary.overall.total_requests, 2);
});

Deno.test("trace replay: CSV with the same columns", () => {
  const csv = 'timestamp,input_length,output_length,hash_ids\n0,100,10,"[7, 8]"\n250,200,20,\n';
  const out = run({ "c.yaml": common("{load_gen_type: trace, trace_path: t.csv}"), "t.csv": csv });
  assert.deepEqual([...out.result.requests.arrival], [0, 250_000]);
  assert.deepEqual([...out.result.requests.input], [100, 200]);
});

Deno.test("a malformed trace line exits 2 with file:line and the field", async () => {
  const dir = writeTemp({
    "i.yaml": INSTANCE_OK,
    "c.yaml": common("{load_gen_type: trace, trace_path: t.jsonl}"),
    "t.jsonl": jsonl.replace('"output_length": 10', '"output_length": -10'),
  });
  const r = await runCli(["--instance_config_path", `${dir}i.yaml`, "--common_config_path", `${dir}c.yaml`]);
  assert.equal(r.code, 2);
  assert.equal(
    r.stderr.replaceAll(dir, "DIR"),
    "DIRt.jsonl:2:1: output_length: expected a positive integer, got -10\n",
  );
  const back = writeTemp({
    "i.yaml": INSTANCE_OK,
    "c.yaml": common("{load_gen_type: trace, trace_path: t.jsonl}"),
    "t.jsonl": jsonl.replace('"timestamp": 2500', '"timestamp": 1200'),
  });
  const r2 = await runCli(["--instance_config_path", `${back}i.yaml`, "--common_config_path", `${back}c.yaml`]);
  assert.equal(r2.stderr.replaceAll(back, "DIR"), "DIRt.jsonl:4:1: timestamp: goes back in time (1200 after 1500)\n");
});

Deno.test("--dump_requests then replaying the dump gives a byte-identical summary", async () => {
  const dir = writeTemp({
    "i.yaml": INSTANCE_OK.replace("num_instances: 1", "num_instances: 2"),
    "c.yaml": common(
      `{load_gen_type: synthetic, num_requests: 400, seed: 9, arrival: {process: gamma, request_rate: 15, cv: 2},
  classes: [{name: chat, weight: 3, input_tokens: {dist: lognormal, mean: 2500, std: 800, min: 2100}, output_tokens: {dist: lognormal, mean: 150, std: 100}, shared_prefix_tokens: 2000, prefix_groups: 3},
            {name: batch, input_tokens: {dist: uniform, min: 10, max: 3000}, output_tokens: {dist: fixed, value: 40}}]}`,
      ", enable_prefix_caching: true",
    ),
    "r.yaml": common(
      "{load_gen_type: trace, trace_path: dump.jsonl, hash_block_tokens: 16}",
      ", enable_prefix_caching: true",
    ),
  });
  const a = await runCli([
    "--instance_config_path",
    `${dir}i.yaml`,
    "--common_config_path",
    `${dir}c.yaml`,
    "--dump_requests",
    `${dir}dump.jsonl`,
  ]);
  assert.equal(a.code, 0, a.stderr);
  assert.equal(Deno.readTextFileSync(`${dir}dump.jsonl`).trimEnd().split("\n").length, 400);
  const b = await runCli(["--instance_config_path", `${dir}i.yaml`, "--common_config_path", `${dir}r.yaml`]);
  assert.equal(b.code, 0, b.stderr);
  assert.equal(b.stdout, a.stdout);
  const ja = await runCli([
    "--instance_config_path",
    `${dir}i.yaml`,
    "--common_config_path",
    `${dir}c.yaml`,
    "--format",
    "json",
  ]);
  const jb = await runCli([
    "--instance_config_path",
    `${dir}i.yaml`,
    "--common_config_path",
    `${dir}r.yaml`,
    "--format",
    "json",
  ]);
  assert.deepEqual(JSON.parse(ja.stdout).per_metric_summary, JSON.parse(jb.stdout).per_metric_summary);
});

Deno.test("request classes mix by weight, each with its own lengths", () => {
  const out = run({
    "c.yaml": common(
      `{load_gen_type: synthetic, num_requests: 20000, arrival: {process: burst},
  classes: [{weight: 3, input_tokens: {dist: fixed, value: 100}, output_tokens: {dist: fixed, value: 2}},
            {weight: 1, input_tokens: {dist: fixed, value: 200}, output_tokens: {dist: fixed, value: 2}}]}`,
    ),
  });
  const share = [...out.result.requests.input].filter((x) => x === 100).length / 20000;
  assert.ok(Math.abs(share - 0.75) < 0.01, `${share}`);
  assert.match(
    describeRun(out),
    /20000 requests of 2 classes \(class0: 100 in \/ 2 out; class1: 200 in \/ 2 out\) at all at t=0,/,
  );
});

Deno.test("prefix caching: N shared blocks give a hit rate of N × (requests − 1) / prompt blocks, and references return to 0", () => {
  // 50 requests of 1,000 tokens share their first 512 (32 blocks of 16); one engine, one at a time.
  const out = run({
    "c.yaml": common(
      "{load_gen_type: synthetic, num_requests: 50, arrival: {process: constant, request_rate: 1}, shared_prefix_tokens: 512, input_tokens: {dist: fixed, value: 1000}, output_tokens: {dist: fixed, value: 8}}",
      ", enable_prefix_caching: true",
    ),
  });
  const c = out.summary.prefixCache!;
  assert.equal(c.promptBlocks, 50 * Math.ceil(1000 / 16));
  assert.equal(c.hitBlocks, 32 * 49);
  assert.ok(Math.abs(c.hitBlocks / c.promptBlocks - (32 * 49) / (50 * 63)) < 1e-12);
  assert.equal(c.hitTokens, 512 * 49);
  assert.equal(out.result.engines[0].cacheReferenced, 0);
});

Deno.test("prefix caching under KV pressure: evictions and preemptions keep every reference count ≥ 0 and end at 0", () => {
  const out = run({
    "c.yaml": common(
      `{load_gen_type: synthetic, num_requests: 300, seed: 4, arrival: {process: burst},
  classes: [{input_tokens: {dist: uniform, min: 300, max: 900}, output_tokens: {dist: uniform, min: 50, max: 400}, shared_prefix_tokens: 256, prefix_groups: 5}]}`,
      ", enable_prefix_caching: true, num_kv_blocks: 300",
    ),
  });
  assert.ok(out.summary.preemptions > 0, "the test needs KV pressure");
  assert.ok(out.summary.prefixCache!.hitBlocks > 0);
  assert.equal(out.result.engines[0].cacheReferenced, 0);
  assert.equal(out.summary.overall.total_requests, 300);
});

Deno.test("the fixed_length example is unchanged by the workload sources (no cache, no classes)", () => {
  const out = run({ "c.yaml": COMMON_OK });
  assert.equal(out.summary.prefixCache, undefined);
});

Deno.test("a 2,000-token shared system prompt: prefix caching cuts the median TTFT to under half", () => {
  const c = new URL("../scenarios/configs/", import.meta.url).pathname;
  const ttft = (common: string) =>
    runFiles([`${c}h100_tp1_x2.yaml`], `${c}${common}.yaml`).summary.perMetric["TTFT(s)"].MEDIAN;
  const on = ttft("llama8b_chat_system_prompt");
  const off = ttft("llama8b_chat_system_prompt_nocache");
  assert.ok(on < 0.5 * off, `with cache ${on} s, without ${off} s`);
});
