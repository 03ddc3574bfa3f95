/**
 * Engine profiles end to end: a profile's defaults reach the engines and the
 * JSON, an explicit key wins, and long prompts under KV pressure behave as
 * the real engines do (vLLM recomputes a preempted request from its own
 * cached prompt blocks; TensorRT-LLM's GUARANTEED_NO_EVICT never preempts).
 */
import assert from "node:assert/strict";
import { runFiles } from "../core/assembly/run.ts";
import { runJson } from "../core/report/run_json.ts";
import { InputError } from "../core/config/errors.ts";
import { memoryFs } from "./_helpers.ts";
import { calibration } from "../core/config/engine_profiles.ts";

/** A calibrated constant as runs read it (core/config/data/calibrated.json, or its prior when no source pins it). */
const constant = (name: string) => calibration().get(name);

const TP2 = `instance_groups:
  - {num_instances: 1, num_devices_per_instance: 2, device_type: H100_SXM_80G, pd_role: both}
`;
/** 100 prompts of 20,000 tokens (2,000 out), all at once, on an engine whose KV holds `holds` of them. */
const longPrompts = (holds: number, serving: string) =>
  `model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
load_gen: {num_requests: 100, num_input_tokens: 20000, num_output_tokens: 2000, request_rate: .inf}
serving_config: {max_concurrency: 1000, block_size: 16, max_tokens_budget: 8192, num_kv_blocks: ${
    Math.round((holds * 22000) / 16)
  }${serving}}
`;
const run = (common: string) => runFiles(["i.yaml"], "c.yaml", { fs: memoryFs({ "i.yaml": TP2, "c.yaml": common }) });
const throughput = (o: ReturnType<typeof run>) => o.summary.overall["output_token_throughput(tok/s)"];

Deno.test("20k-token prompts on an engine holding 18: vLLM preempts at most twice per request, TensorRT-LLM never, both near the doubled-KV throughput", () => {
  for (const engine of ["vllm", "trtllm"]) {
    // TensorRT-LLM's chunked context is off by default; serving 20k prompts with an 8k token budget needs it on.
    const serving = `, engine: ${engine}, enable_chunked_prefill: true`;
    const tight = run(longPrompts(18, serving));
    const roomy = run(longPrompts(36, serving));
    const perRequest = tight.summary.preemptions / 100;
    if (engine === "vllm") assert.ok(perRequest <= 2, `vllm: ${perRequest} preemptions per request`);
    else assert.equal(tight.summary.preemptions, 0);
    assert.ok(throughput(tight) >= 0.8 * throughput(roomy), `${engine}: ${throughput(tight)} vs ${throughput(roomy)}`);
  }
  // Without a profile (upstream defaults: no prefix caching) every preemption recomputes 20k tokens: the collapse.
  const upstream = run(longPrompts(18, ""));
  assert.ok(upstream.summary.preemptions / 100 > 10, `${upstream.summary.preemptions}`);
  assert.ok(throughput(upstream) < 0.5 * throughput(run(longPrompts(18, ", engine: vllm"))));
});

const SMALL = (serving: string) =>
  `model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
load_gen: {num_requests: 20, num_input_tokens: 512, num_output_tokens: 32, request_rate: 10.0}
serving_config: {max_concurrency: 64, block_size: 16${serving}}
`;

Deno.test("a profile's defaults reach the engines and the JSON deployment section; an explicit key wins", () => {
  const out = run(SMALL(", engine: sglang, engine_version: 0.4.3, max_num_seqs: 48"));
  const e = out.assembled.input.engines[0];
  assert.equal(e.mixPrefillDecode, false); // SGLang: prefill-first
  assert.equal(e.prefixCaching, true); // radix cache
  assert.equal(e.maxSeqs, 48); // written
  const doc = JSON.parse(runJson(out));
  const p = doc.deployment[0].engine_profile;
  assert.equal(p.engine, "sglang");
  assert.equal(p.version, "0.4.3");
  assert.equal(p.record, "SGLang (0.4)");
  assert.equal(p.supplied.kv_cache_memory_fraction, 0.87); // TP2
  assert.ok(!("max_num_seqs" in p.supplied));
  assert.match(p.source, /ServerArgs/);
  // Without an engine nothing is supplied and the JSON has no profile.
  const plain = run(SMALL(""));
  assert.equal(JSON.parse(runJson(plain)).deployment[0].engine_profile, undefined);
  assert.equal(plain.assembled.input.engines[0].prefixCaching, false);
});

Deno.test("a vLLM profile times the engine with vLLM's kernel tables and its version's host costs; a device file keeps its own", () => {
  const v1 = run(SMALL(", engine: vllm, engine_version: 0.10.0"));
  const doc = JSON.parse(runJson(v1)).deployment[0];
  assert.match(doc.engine_profile.kernel_tables, /AIConfigurator vllm 0\.24\.0/);
  // vLLM 0.10's step and per-sequence costs are the constants fitted to the vllm-0.10 pin's sources.
  assert.equal(doc.engine_profile.host.pin, "vllm-0.10");
  assert.equal(doc.overheads_us.step, constant("host.vllm-0.10.step_us"));
  assert.equal(doc.overheads_us.per_sequence, constant("host.vllm-0.10.seq_us"));
  assert.equal(doc.engine_profile.host.launch, "graphs");
  // V0 (0.6.x) has a pin of its own, several times V1's step cost (V0's scheduler and Python-side prepare).
  const v0 = JSON.parse(runJson(run(SMALL(", engine: vllm, engine_version: 0.6.3")))).deployment[0];
  assert.equal(v0.engine_profile.host.pin, "vllm-0.6");
  assert.equal(v0.overheads_us.step, constant("host.vllm-0.6.step_us"));
  assert.ok(v0.overheads_us.step > 2 * doc.overheads_us.step, `${v0.overheads_us.step} vs ${doc.overheads_us.step}`);
  // TensorRT-LLM: no public run pins a release, so its family prior (400 µs a step, a compiled engine) applies.
  const trt = JSON.parse(runJson(run(SMALL(", engine: trtllm")))).deployment[0];
  assert.match(trt.engine_profile.kernel_tables, /trtllm/);
  assert.equal(trt.engine_profile.host.pin, undefined);
  assert.equal(Math.round(trt.overheads_us.step), 400);
  assert.match(trt.engine_profile.host.source, /family prior/);
  // A device file is the user's own measurement: its step cost wins over the profile's.
  const fs = memoryFs({
    "i.yaml": `instance_groups:
  - {num_instances: 1, num_devices_per_instance: 2, device_type: mine.yaml, pd_role: both}
`,
    "mine.yaml": Deno.readTextFileSync(new URL("./testdata/device_h100_like.yaml", import.meta.url)),
    "c.yaml": SMALL(", engine: vllm, engine_version: 0.10.0"),
  });
  const own = JSON.parse(runJson(runFiles(["i.yaml"], "c.yaml", { fs }))).deployment[0];
  assert.equal(own.overheads_us.step, 700);
  assert.equal(own.engine_profile.kernel_tables, null); // not a GPU the tables name
});

Deno.test("an unknown engine is a located error naming the choices", () => {
  assert.throws(
    () => run(SMALL(", engine: tgi")),
    (e) =>
      e instanceof InputError &&
      /c\.yaml:3:\d+: serving_config\.engine: expected one of vllm, sglang, trtllm, mindie, lmdeploy, got "tgi"/.test(
        e.message,
      ),
  );
});

Deno.test("multi-step scheduling (num_scheduler_steps) pays the step's host cost once per window and makes arrivals wait for it", () => {
  const common = (steps: number) =>
    `model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
load_gen: {num_requests: 200, num_input_tokens: 256, num_output_tokens: 128, request_rate: 4.0}
serving_config: {max_concurrency: 200, block_size: 16, engine: vllm, engine_version: 0.6.3, num_scheduler_steps: ${steps}}
`;
  const one = run(common(1));
  const ten = run(common(10));
  const tpot = (o: ReturnType<typeof run>) => o.summary.perMetric["TPOT(s)"].MEDIAN;
  const ttft = (o: ReturnType<typeof run>) => o.summary.perMetric["TTFT(s)"].MEDIAN;
  // vLLM V0's step cost: every decode step pays it at 1 step per pass, one step in ten at 10.
  const step = constant("host.vllm-0.6.step_us") / 1e6;
  const saved = tpot(one) - tpot(ten);
  assert.ok(saved > 0.8 * 0.9 * step && saved < 1.1 * step, `TPOT saved ${saved}, step ${step}`);
  // A request arriving mid-window waits for the window to end before its prefill.
  assert.ok(ttft(ten) > ttft(one) + 0.01, `TTFT ${ttft(one)} -> ${ttft(ten)}`);
  assert.equal(ten.summary.overall.total_requests, one.summary.overall.total_requests);
});

Deno.test("a multi-step window ends with its batch: a request that lands later on a PD decode engine is scheduled afresh and pays the host cost", () => {
  const inst = `instance_groups:
  - {name: p, num_instances: 1, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: prefill}
  - {name: d, num_instances: 1, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: decode}
`;
  const common = (steps: number) =>
    `model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
load_gen: {num_requests: 2, num_input_tokens: 256, num_output_tokens: 4, request_rate: 1.0, arrival_process: constant}
serving_config: {max_concurrency: 10, block_size: 16, engine: vllm, engine_version: 0.6.3, num_scheduler_steps: ${steps}}
`;
  // The second request's time from arrival to its last token, seconds.
  const e2e = (steps: number) => {
    const r = runFiles(["i.yaml"], "c.yaml", { fs: memoryFs({ "i.yaml": inst, "c.yaml": common(steps) }) }).result
      .requests;
    return (r.finish[1] - r.arrival[1]) / 1e6;
  };
  // The first request's window (3 decode steps, one host cost) ends when it finishes. The second
  // request, a second later, opens a window of its own and pays V0's step cost once: its three
  // decode steps cost two step costs less in all than at one step per pass, not three.
  const step = constant("host.vllm-0.6.step_us") / 1e6;
  const saved = e2e(1) - e2e(10);
  assert.ok(saved > 1.5 * step && saved < 2.5 * step, `saved ${saved}, step ${step}`);
});

Deno.test("a per-request latency (request_overhead_us, SGLang 0.4's profile) delays each request before the engine sees it", () => {
  const inst = `instance_groups:
  - {num_instances: 1, num_devices_per_instance: 1, device_type: mine.yaml, pd_role: both}
`;
  const common = `model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
load_gen: {num_requests: 5, num_input_tokens: 256, num_output_tokens: 8, request_rate: 0.2, arrival_process: constant}
serving_config: {max_concurrency: 10, block_size: 16}
`;
  const device = Deno.readTextFileSync(new URL("./testdata/device_h100_like.yaml", import.meta.url));
  const ttft = (extra: string) =>
    runFiles(["i.yaml"], "c.yaml", { fs: memoryFs({ "i.yaml": inst, "c.yaml": common, "mine.yaml": device + extra }) })
      .summary.perMetric["TTFT(s)"].MEDIAN;
  // Requests 5 s apart never queue: the latency adds to TTFT exactly.
  assert.ok(Math.abs(ttft("request_overhead_us: 30000\n") - ttft("") - 0.03) < 1e-6);
  // The SGLang 0.4.0 pin carries the per-request latency fitted to its calibration set.
  const sg = JSON.parse(runJson(run(SMALL(", engine: sglang, engine_version: 0.4.0")))).deployment[0];
  assert.equal(sg.overheads_us.per_request, constant("host.sglang-0.4.0.request_us"));
});

Deno.test("a run without an engine says once that the generic path ignores engine costs; naming one silences it", () => {
  const notices = (serving: string) => run(SMALL(serving)).assembled.notices.filter((n) => /generic path/.test(n));
  assert.deepEqual(notices(""), [
    "note: no serving_config.engine: the generic path ignores engine host costs, kernel tables, CUDA-graph sizes " +
    "and scheduling defaults; name the engine you serve with (vllm, sglang, trtllm, mindie or lmdeploy, with " +
    "engine_version) for engine-aware timings",
  ]);
  assert.deepEqual(notices(", engine: vllm"), []);
});

Deno.test("serving_config.api_server: false (an in-process benchmark) drops the API server's per-request latency", () => {
  const ttft = (serving: string) => run(SMALL(serving)).summary.perMetric["TTFT(s)"].MEDIAN;
  const e = run(SMALL(", engine: sglang, engine_version: 0.4.0")).assembled.input.engines[0];
  // Engine time is integer microseconds.
  assert.equal(e.requestDelay, Math.round(constant("host.sglang-0.4.0.request_us")));
  const off = run(SMALL(", engine: sglang, engine_version: 0.4.0, api_server: false")).assembled.input.engines[0];
  assert.equal(off.requestDelay ?? 0, 0);
  // 20 requests at 10 req/s: TTFT falls by about the latency.
  const d = ttft(", engine: sglang, engine_version: 0.4.0") -
    ttft(", engine: sglang, engine_version: 0.4.0, api_server: false");
  const delay = e.requestDelay! / 1e6;
  assert.ok(Math.abs(d - delay) < 0.3 * delay, `${d} s vs ${delay} s`);
});
