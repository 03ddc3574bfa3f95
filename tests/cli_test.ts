/**
 * The command line as a user meets it: flags, files written, exit codes.
 * Most cases call cli.ts's main in this process (its exact stdout, stderr
 * and exit code); the bundled example, --help and a bad flag also run as
 * `deno task sim` and `deno run cli.ts`, so the real entry point stays covered.
 */
import assert from "node:assert/strict";
import { COMMON_OK, INSTANCE_OK, ROOT, runCli, runTask, writeTemp } from "./_helpers.ts";

Deno.test("deno task sim with no arguments runs the bundled example and says what it simulated", async () => {
  const run = await runTask("sim", []);
  assert.equal(run.code, 0);
  assert.match(run.stdout, /^ {9}E2E_TIME\(s\) {2}TTFT\(s\)/);
  assert.match(run.stdout, /\n======== Overall Summary ========\ntotal_requests|benchmark_duration\(s\)/);
  assert.match(
    run.stderr,
    /^note: no serving_config\.engine: the generic path ignores engine host costs, kernel tables, CUDA-graph sizes and scheduling defaults; name the engine you serve with \(vllm, sglang, trtllm, mindie or lmdeploy, with engine_version\) for engine-aware timings\nSimulated meta-llama\/Llama-3\.1-8B-Instruct \(8\.0B, DISABLED\) on 2 instances of 1 × H100_SXM_80G \(TP1, [\d,]+ KV tokens per engine\): 2 engines, 1000 requests of 1024 in \/ 256 out at 16 req\/s poisson, [\d.]+ s simulated in [\d.]+ s wall\n$/,
  );
});

Deno.test("cli takes --instance_config_path with several files and the = form", async () => {
  const dir = writeTemp({ "a.yaml": INSTANCE_OK, "b.yaml": INSTANCE_OK, "c.yaml": COMMON_OK });
  const spaced = await runCli([
    "--instance_config_path",
    `${dir}a.yaml`,
    `${dir}b.yaml`,
    "--common_config_path",
    `${dir}c.yaml`,
    "--format",
    "json",
  ]);
  assert.equal(spaced.code, 0, spaced.stderr);
  assert.equal(JSON.parse(spaced.stdout).simulation.engines.length, 2, "groups from both files");
  const eq = await runCli([
    `--instance_config_path=${dir}a.yaml`,
    `--common_config_path=${dir}c.yaml`,
    "--format",
    "json",
  ]);
  assert.equal(eq.code, 0, eq.stderr);
  assert.equal(JSON.parse(eq.stdout).simulation.engines.length, 1);
});

Deno.test("cli --output_json writes the contract's two sections with the console's names", async () => {
  const dir = writeTemp({});
  const run = await runCli(["--output_json", `${dir}out.json`, "--quiet"]);
  assert.equal(run.code, 0);
  assert.equal(run.stderr, "");
  const doc = JSON.parse(Deno.readTextFileSync(`${dir}out.json`));
  assert.deepEqual(Object.keys(doc.per_metric_summary), [
    "E2E_TIME(s)",
    "TTFT(s)",
    "TPOT(s)",
    "INPUT_TOKENS",
    "OUTPUT_TOKENS",
    "OUTPUT_TOKEN_THROUGHPUT(tok/s)",
  ]);
  assert.deepEqual(Object.keys(doc.per_metric_summary["TTFT(s)"]), [
    "AVERAGE",
    "MIN",
    "MAX",
    "MEDIAN",
    "P75",
    "P90",
    "P95",
    "P99",
    "P99.9",
  ]);
  assert.equal(doc.overall_summary.total_requests, 1000);
  assert.equal(doc.overall_summary.total_output_tokens, 256000);
});

Deno.test("cli --enable_profiling writes a Chrome trace and a per-request CSV", async () => {
  const dir = writeTemp({});
  const run = await runCli(["--enable_profiling", "--profiling_output_path", `${dir}prof`]);
  assert.equal(run.code, 0, run.stderr);
  const [stamp] = [...Deno.readDirSync(`${dir}prof`)].map((e) => e.name);
  assert.match(stamp, /^\d{8}-\d{6}$/);
  const trace = JSON.parse(Deno.readTextFileSync(`${dir}prof/${stamp}/trace.json`));
  const ev = trace.traceEvents as { name: string; ph: string; tid: number; args?: Record<string, number> }[];
  const steps = ev.filter((e) => e.ph === "X" && e.name.startsWith("step"));
  assert.ok(steps.length > 1000);
  assert.deepEqual(new Set(steps.map((e) => e.tid)), new Set([0, 1]), "a track per engine");
  assert.ok(
    steps.every((e) => e.args && e.args.batch_size >= 1 && "prefill_tokens" in e.args && "decode_tokens" in e.args),
  );
  assert.ok(ev.some((e) => e.ph === "C" && e.name.endsWith("kv_blocks_in_use")));
  assert.ok(ev.some((e) => e.ph === "C" && e.name.endsWith("queue")));
  const decodes = ev.filter((e) => e.ph === "b" && e.name === "decode");
  assert.equal(decodes.length, 1000, "a decode slice per request");
  assert.equal(ev.filter((e) => e.ph === "e" && e.name === "decode").length, 1000);
  const csv = Deno.readTextFileSync(`${dir}prof/${stamp}/requests.csv`).trimEnd().split("\n");
  assert.equal(csv[0], "id,arrival_s,send_s,first_token_s,finish_s,input_tokens,output_tokens,preemptions,engine");
  assert.equal(csv.length, 1001);
  assert.match(csv[1], /^0,0\.000000,0\.000000,0\.\d{6},\d+\.\d{6},1024,256,0,[01]$/);
});

Deno.test("cli --help prints the usage and exits 0", async () => {
  const run = await runCli(["--help"]);
  assert.equal(run.code, 0);
  assert.match(run.stdout, /--instance_config_path <paths\.\.\.>/);
  assert.match(run.stdout, /--common_config_path <path>/);
});

Deno.test("cli exits 2 on an unknown flag or a lone config path", async () => {
  const bad = await runCli(["--bogus"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unknown option '--bogus'/);
  const lone = await runCli(["--instance_config_path", `${ROOT}examples/instances.yaml`]);
  assert.equal(lone.code, 2);
  assert.equal(lone.stderr, "servingcast: error: --common_config_path is required when the other is given\n");
});

Deno.test("cli prints one notice for upstream estimator knobs", async () => {
  const dir = writeTemp({
    "i.yaml": INSTANCE_OK,
    "c.yaml": COMMON_OK.replace("model_config:\n", "model_config:\n  do_compile: False\n  predict_steps: 20\n"),
  });
  const run = await runCli(["--instance_config_path", `${dir}i.yaml`, "--common_config_path", `${dir}c.yaml`]);
  assert.equal(run.code, 0);
  const notes = run.stderr.split("\n").filter((l) => l.startsWith("note:"));
  assert.deepEqual(notes, [
    `note: ${dir}c.yaml: upstream estimator settings have no effect here and are ignored: do_compile, predict_steps`,
    "note: no serving_config.engine: the generic path ignores engine host costs, kernel tables, CUDA-graph sizes " +
    "and scheduling defaults; name the engine you serve with (vllm, sglang, trtllm, mindie or lmdeploy, with " +
    "engine_version) for engine-aware timings",
  ]);
});

Deno.test("cli --format csv prints one row per request", async () => {
  const run = await runCli(["--format", "csv", "--quiet"]);
  assert.equal(run.code, 0);
  assert.equal(run.stdout.trimEnd().split("\n").length, 1001);
});

Deno.test("cli reads a local Hugging Face config.json and a device file named by path", async () => {
  const config = {
    model_type: "llama",
    hidden_size: 2048,
    num_hidden_layers: 16,
    num_attention_heads: 32,
    num_key_value_heads: 8,
    intermediate_size: 8192,
    vocab_size: 128256,
    tie_word_embeddings: true,
  };
  const dir = writeTemp({
    "chip.yaml": "memory_gib: 24\nhbm_bandwidth_tb_s: 1.0\ntflops: {bf16: 200}\n",
    "i.yaml": INSTANCE_OK.replace("H100_SXM_80G", "./chip.yaml"),
    "c.yaml": COMMON_OK.replace("meta-llama/Llama-3.1-8B-Instruct", "./tiny"),
  });
  Deno.mkdirSync(`${dir}tiny`);
  Deno.writeTextFileSync(`${dir}tiny/config.json`, JSON.stringify(config));
  const run = await runCli(["--instance_config_path", `${dir}i.yaml`, "--common_config_path", `${dir}c.yaml`]);
  assert.equal(run.code, 0, run.stderr);
  // Llama-3.2-1B's shape: 1.24 B parameters with tied embeddings.
  assert.match(run.stderr, /Simulated \.\/tiny \(1\.2B, DISABLED\) on 1 instance of 1 × chip \(TP1, /);
  assert.match(run.stdout, /\ntotal_requests {17}50\.000\n/);
});

Deno.test("cli --output_json has a deployment section with the memory sizing and the device's provenance", async () => {
  const run = await runCli(["--format", "json", "--quiet"]);
  const [g] = JSON.parse(run.stdout).deployment;
  assert.equal(g.device.name, "H100_SXM_80G");
  assert.equal(g.device.extrapolated, true);
  assert.match(g.device.provenance, /measured on H100\/H800/);
  assert.equal(g.kv_cache.bytes_per_token_per_device, 131072);
  assert.equal(g.kv_cache.tokens_per_engine, g.kv_cache.blocks_per_engine * 16);
  assert.ok(Math.abs(g.memory_gib_per_device.weights - 14.96) < 0.01);
  const m = g.memory_gib_per_device;
  assert.ok(m.weights + m.activation_reserve + m.runtime_reserve + m.kv_cache <= m.usable);
  assert.deepEqual(Object.keys(g.efficiency), [
    "matmul",
    "matmul_low_precision",
    "attention",
    "memory",
    "link",
    "gemm_overlap",
  ]);
});

Deno.test("cli --enable_profiling on a PD run draws KV transfers between the engines", async () => {
  const dir = writeTemp({
    "i.yaml": `instance_groups:
  - {num_instances: 1, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: prefill}
  - {num_instances: 1, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: decode}
`,
    "c.yaml": COMMON_OK.replace(
      "quantize_linear_action: DISABLED",
      "quantize_linear_action: DISABLED\n  enable_kv_transfer_modeling: true",
    ),
  });
  const run = await runCli([
    "--instance_config_path",
    `${dir}i.yaml`,
    "--common_config_path",
    `${dir}c.yaml`,
    "--enable_profiling",
    "--profiling_output_path",
    `${dir}prof`,
  ]);
  assert.equal(run.code, 0, run.stderr);
  const [stamp] = [...Deno.readDirSync(`${dir}prof`)].map((e) => e.name);
  const ev = JSON.parse(Deno.readTextFileSync(`${dir}prof/${stamp}/trace.json`)).traceEvents as {
    name: string;
    ph: string;
    tid?: number;
    args?: Record<string, unknown>;
  }[];
  const spans = ev.filter((e) => e.ph === "b" && e.name.startsWith("KV "));
  assert.equal(spans.length, 50);
  assert.equal(spans[0].name, "KV group0/0/dp0 → group1/0/dp0");
  assert.equal(spans[0].args?.bytes, 512 * 131072);
  assert.equal(ev.filter((e) => e.ph === "s" && e.tid === 0).length, 50, "flow arrows leave the prefill engine");
  assert.equal(ev.filter((e) => e.ph === "f" && e.tid === 1).length, 50, "and reach the decode engine");
});
