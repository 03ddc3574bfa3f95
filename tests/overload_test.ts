/**
 * Overload is never hidden: offered against achieved load, client waits,
 * latencies from arrival, the stderr diagnoses, and the new metrics in every
 * output a user reads (console, JSON, scenario metric names).
 */
import assert from "node:assert/strict";
import { loadScenario, runScenario } from "../core/scenario/mod.ts";
import { resolveMetric, RUN_METRICS } from "../core/scenario/metric_keys.ts";
import { ALL_STATISTICS, EXT_COLUMNS } from "../core/metrics/summary.ts";
import { runFiles } from "../core/assembly/run.ts";
import { memoryFs, ROOT, runCli, writeTemp } from "./_helpers.ts";

const OVERLOAD = `${ROOT}tests/testdata/overload/`;
const overloadArgs = [
  "--instance_config_path",
  `${OVERLOAD}l40s_x4.yaml`,
  "--common_config_path",
  `${OVERLOAD}chat_30rps.yaml`,
];

Deno.test("the 4-instance, 30 req/s deployment fails its TTFT SLO, with the achieved rate and the client wait in the message", () => {
  const r = runScenario(loadScenario(`${OVERLOAD}slo.yaml`));
  const [fromArrival, fromSend] = r.checks;
  assert.equal(fromArrival.pass, false);
  assert.match(
    fromArrival.message,
    /slo\.yaml:6:3: expect\.ttft\.p99: expected TTFT_FROM_ARRIVAL\(s\)\.P99 < 500ms, got 50\d{3}(\.\d+)?ms; the deployment does not keep up with the offered load: achieved 10\.\d req\/s of 29\.\d req\/s offered; clients waited up to 50\.\d s \(p99 50\.\d s\) under max_concurrency 100; p99 TTFT from arrival 50\.\d s \(from send 0\.1\d+ s\)$/,
  );
  // The send-based figure, asserted explicitly, is what a benchmark client reports: it looks fine.
  assert.equal(fromSend.pass, true, fromSend.message);
  assert.ok(fromSend.actual < 0.2);
  const load = r.output.summary.load;
  assert.equal(load.keepsUp, false);
  assert.ok(load.achievedRate < 0.4 * load.offeredRate, `${load.achievedRate} of ${load.offeredRate}`);
});

Deno.test("cli says on stderr, in one line with both rates, when the deployment does not keep up", async () => {
  const run = await runCli(overloadArgs);
  assert.equal(run.code, 0, run.stderr);
  const lines = run.stderr.split("\n").filter((l) => l.includes("does not keep up"));
  assert.equal(lines.length, 1);
  assert.match(
    lines[0],
    /^warning: the deployment does not keep up with the offered load: achieved 10\.\d req\/s of 29\.\d req\/s offered; clients waited up to 50\.\d s \(p99 50\.\d s\) under max_concurrency 100; p99 TTFT from arrival 50\.\d s \(from send 0\.1\d+ s\)$/,
  );
  assert.match(run.stdout, /^keeps_up {23}NO$/m);
  // The bundled example keeps up: no warning.
  const ok = await runCli([]);
  assert.doesNotMatch(ok.stderr, /does not keep up/);
  assert.match(ok.stdout, /^keeps_up {23}yes$/m);
});

Deno.test("the upstream table is unchanged by the ext section, which follows it", async () => {
  const run = await runCli(["--quiet"]);
  const golden = Deno.readTextFileSync(`${ROOT}tests/testdata/example.golden.txt`);
  const upstream = golden.slice(0, golden.indexOf("======== Latency Tails"));
  assert.ok(upstream.endsWith("output_token_throughput(tok/s) 3890.336\n"));
  assert.ok(run.stdout.startsWith(upstream));
});

const KV_STARVED_INSTANCE = `instance_groups:
  - num_instances: 1
    num_devices_per_instance: 2
    device_type: H100_SXM_80G
    pd_role: both
`;
const KV_STARVED_COMMON = `model_config:
  name: Qwen/Qwen2.5-72B-Instruct
  quantize_linear_action: DISABLED
load_gen:
  load_gen_type: synthetic
  num_requests: 300
  seed: 1
  arrival: {process: poisson, request_rate: 2.0}
  input_tokens: {dist: lognormal, mean: 4000, std: 4000, min: 16, max: 30000}
  output_tokens: {dist: uniform, min: 100, max: 1000}
serving_config:
  max_concurrency: 100
  block_size: 16
  max_tokens_budget: 8192
`;

Deno.test("a KV-starved deployment gets one line naming the cause, and its unservable requests one line", async () => {
  const dir = writeTemp({ "i.yaml": KV_STARVED_INSTANCE, "c.yaml": KV_STARVED_COMMON });
  const run = await runCli(["--instance_config_path", `${dir}i.yaml`, "--common_config_path", `${dir}c.yaml`]);
  assert.equal(run.code, 0, run.stderr);
  const never = run.stderr.split("\n").filter((l) => l.includes("left out of the summary"));
  assert.deepEqual(never, [
    "warning: 9 request(s) can never be served and were left out of the summary: prompt + output exceeds the KV cache of an engine (749 blocks of 16 = 11,984 tokens)",
  ]);
  assert.match(
    run.stderr,
    /^KV cache holds 11,984 tokens per engine \(2 requests of this workload\): 9 unservable, \d+ preemptions; raise kv_cache_memory_fraction, TP, or quantize the KV cache$/m,
  );
  // A roomy deployment says nothing of the kind.
  const ok = await runCli([]);
  assert.doesNotMatch(ok.stderr, /KV cache holds/);
});

Deno.test("batch and KV occupancy show headroom where busy did not: low at 4 req/s, high at saturation", () => {
  const at = (rate: number) =>
    runFiles([`${ROOT}scenarios/configs/h100_tp1_x1.yaml`], "c.yaml", {
      fs: {
        readText: (p) =>
          p === "c.yaml"
            ? Deno.readTextFileSync(`${ROOT}scenarios/configs/llama8b_chat.yaml`)
              .replace("request_rate: 16.0", `request_rate: ${rate}`)
              .replace("num_requests: 1000", "num_requests: 400")
            : Deno.readTextFileSync(p),
        isDirectory: () => false,
      },
    }).summary;
  const low = at(4);
  const high = at(64);
  assert.ok(low.headroom.batchOccupancy < 0.05, `${low.headroom.batchOccupancy}`);
  assert.ok(high.headroom.batchOccupancy > 0.5, `${high.headroom.batchOccupancy}`);
  assert.ok(high.headroom.kvOccupancy > 5 * low.headroom.kvOccupancy);
  assert.ok(low.load.keepsUp && !high.load.keepsUp);
  // Light decode of an 8B BF16 model is bandwidth-bound (MBU above MFU); saturation adds compute (prefill, big batches).
  for (const s of [low, high]) assert.ok(s.headroom.mfu > 0 && s.headroom.mbu < 1, JSON.stringify(s.headroom));
  assert.ok(low.headroom.mfu < low.headroom.mbu);
  assert.ok(high.headroom.mfu > 3 * low.headroom.mfu);
});

Deno.test("every new metric is in --output_json and resolves as a scenario metric name", async () => {
  const dir = writeTemp({});
  const run = await runCli(["--quiet", "--goodput", "ttft:200", "tpot:20", "--output_json", `${dir}o.json`]);
  assert.equal(run.code, 0, run.stderr);
  const doc = JSON.parse(Deno.readTextFileSync(`${dir}o.json`));
  for (const c of ["TTFT(s)", "E2E_TIME(s)"]) {
    assert.deepEqual(Object.keys(doc.per_metric_summary[c]), [...ALL_STATISTICS]);
  }
  for (const c of EXT_COLUMNS) {
    assert.deepEqual(Object.keys(doc.ext_metric_summary[c]), [...ALL_STATISTICS], c);
    for (const st of ALL_STATISTICS) {
      assert.equal(typeof doc.ext_metric_summary[c][st], "number", `${c}.${st}`);
      assert.ok(resolveMetric(`${c}.${st}`), `${c}.${st}`);
    }
  }
  const runLevel: Record<string, number | boolean> = { ...doc.load, ...doc.headroom };
  for (const m of RUN_METRICS) {
    const inJson = m in runLevel || m in doc.simulation || m === "simulated_seconds";
    assert.ok(inJson, `${m} is not in the JSON`);
    assert.ok(resolveMetric(m), m);
  }
  for (const short of ["ttft", "e2e", "tpot", "itl", "client_wait", "ttft_from_send", "e2e_from_send"]) {
    for (const st of ["mean", "p50", "p90", "p95", "p99", "p99.9", "max"]) {
      assert.ok(resolveMetric(`${short}.${st}`), `${short}.${st}`);
    }
  }
  assert.deepEqual(doc.load.goodput_slos, { ttft: 0.2, tpot: 0.02 });
  assert.ok(doc.load.goodput > 0 && doc.load.goodput <= doc.overall_summary["request_throughput(req/s)"]);
});

Deno.test("goodput counts the requests that meet every per-request SLO, from arrival", () => {
  const fs = memoryFs({
    "i.yaml": Deno.readTextFileSync(`${OVERLOAD}l40s_x4.yaml`),
    "c.yaml": Deno.readTextFileSync(`${OVERLOAD}chat_30rps.yaml`).replace("num_requests: 1000", "num_requests: 300"),
  });
  const run = (goodput: { ttft?: number; tpot?: number }) => runFiles(["i.yaml"], "c.yaml", { fs, goodput }).summary;
  const loose = run({ ttft: 1e6, tpot: 1e6 });
  assert.equal(loose.goodput!.attainment, 1);
  assert.ok(Math.abs(loose.goodput!.rate - loose.overall["request_throughput(req/s)"]) < 1e-9);
  // Overloaded: TTFT from send stays under 0.5 s, yet few requests see their first token within 0.5 s of arrival.
  const tight = run({ ttft: 0.5 });
  assert.ok(loose.perMetric["TTFT(s)"].P99 < 0.5);
  assert.ok(tight.goodput!.attainment < 0.5, `${tight.goodput!.attainment}`);
  assert.equal(run({ tpot: 1e-6 }).goodput!.met, 0);
});

Deno.test("cli --goodput rejects a malformed SLO with exit 2", async () => {
  const run = await runCli(["--goodput", "ttft=500"]);
  assert.equal(run.code, 2);
  assert.match(run.stderr, /--goodput: expected KEY:VALUE with KEY one of ttft, tpot, e2el/);
});

/** One H100 with Llama-3.1-8B chat (the bundled capacity scenario's files). */
const CHAT = [
  "--instance_config_path",
  `${ROOT}scenarios/configs/h100_tp1_x1.yaml`,
  "--common_config_path",
  `${ROOT}scenarios/configs/llama8b_chat.yaml`,
];

Deno.test("--saturation_probe: the same deployment at doubled rates until it falls behind, serving at its service rate", async () => {
  // One H100, Llama-3.1-8B chat (1,024 + 256 tokens) at the file's 16 req/s: the probe keeps the file's 1,000 Poisson
  // requests and doubles their rate; at 32 req/s the deployment falls behind (the bundled capacity sweep's achieved
  // rate flattens at 21-22.5 req/s from 32 to 128 req/s offered).
  const dir = writeTemp({});
  const args = [...CHAT, "--saturation_probe", "--output_json", `${dir}o.json`];
  const run = await runCli(args);
  assert.equal(run.code, 0, run.stderr);
  const probe = JSON.parse(Deno.readTextFileSync(`${dir}o.json`)).load.saturation_probe_rate;
  // The service rate of a 20,000-request run at 32 req/s.
  const long = writeTemp({
    "c.yaml": Deno.readTextFileSync(`${ROOT}scenarios/configs/llama8b_chat.yaml`)
      .replace(/num_requests: \d+/, "num_requests: 20000").replace(/request_rate: [\d.]+/, "request_rate: 32"),
  });
  const service = runFiles([`${ROOT}scenarios/configs/h100_tp1_x1.yaml`], `${long}c.yaml`).summary.load.achievedRate;
  assert.ok(service > 21 && service < 22.5, `service ${service}`);
  // Over 1,000 requests the probe sees 30 s of overload: within 8% (20 s windows of the long run range over 21-23.5).
  assert.ok(Math.abs(probe / service - 1) < 0.08, `probe ${probe}, long run ${service}`);
  // 16 req/s kept up and the probe fell behind at 32: the probe's estimate, and the bracket the two runs give.
  assert.match(
    run.stdout,
    new RegExp(
      `^max_sustainable_rate\\(req/s\\) +≈ ${
        Number(probe.toPrecision(4))
      } \\(overload probe; between 1[56]\\.\\d+ and 3[12]\\.\\d+\\)$`,
      "m",
    ),
  );
  // Without the flag, no probe runs and the JSON has no probe rate.
  const plain = await runCli(args.slice(0, 4).concat(["--output_json", `${dir}p.json`]));
  assert.equal(JSON.parse(Deno.readTextFileSync(`${dir}p.json`)).load.saturation_probe_rate, undefined);
  assert.match(plain.stdout, /^max_sustainable_rate\(req\/s\) +≥ 1[56]\.\d+$/m);
});

Deno.test("--exact_up_to: a longer run says its percentiles are sketched (stderr and JSON); a bad count exits 2", async () => {
  const dir = writeTemp({});
  const args = CHAT;
  const run = await runCli([...args, "--exact_up_to", "300", "--output_json", `${dir}o.json`]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(
    run.stderr,
    /^note: percentiles over 1000 requests come from quantile sketches, each within 0\.5% of the exact value \(MIN, MAX and AVERAGE exact\); --exact_up_to 1000 keeps them exact$/m,
  );
  assert.deepEqual(JSON.parse(Deno.readTextFileSync(`${dir}o.json`)).simulation.percentiles_sketched, {
    requests: 1000,
    exact_up_to: 300,
    relative_accuracy: 0.005,
  });
  // Within the default count nothing is said.
  const plain = await runCli(args);
  assert.doesNotMatch(plain.stderr, /sketch/);
  const bad = await runCli([...args, "--exact_up_to", "0"]);
  assert.equal(bad.code, 2);
  assert.equal(bad.stderr, "servingcast: --exact_up_to: expected a positive integer, got '0'\n");
});
