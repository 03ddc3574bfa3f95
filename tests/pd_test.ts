/**
 * Prefill/decode disaggregation: KV transfer bytes and times, backpressure,
 * conservation, and routing across unlike engines.
 */
import assert from "node:assert/strict";
import { runFiles } from "../core/assembly/run.ts";
import { memoryFs, ROOT } from "./_helpers.ts";

const pd = (o: { bw?: string; rate?: string; dTp?: number } = {}) =>
  `instance_groups:
  - num_instances: 1
    num_devices_per_instance: 1
    device_type: H100_SXM_80G
    pd_role: prefill
    communication_config: {device2device_bandwidth: ${o.bw ?? "4.0e9"}, device2device_rate: ${o.rate ?? "0.5"}}
  - num_instances: 1
    num_devices_per_instance: ${o.dTp ?? 1}
    device_type: H100_SXM_80G
    pd_role: decode
    communication_config: {device2device_bandwidth: ${o.bw ?? "4.0e9"}, device2device_rate: ${o.rate ?? "0.5"}}
`;
const common = (o: { n?: number; transfer?: boolean; extra?: string; input?: number } = {}) =>
  `model_config:
  name: meta-llama/Llama-3.1-8B-Instruct
  quantize_linear_action: DISABLED
  enable_kv_transfer_modeling: ${o.transfer ?? true}
load_gen: {num_requests: ${o.n ?? 1}, num_input_tokens: ${o.input ?? 1000}, num_output_tokens: 100, request_rate: 1.0}
serving_config: {max_concurrency: 1000, block_size: 16, max_tokens_budget: 8192${o.extra ?? ""}}
`;
const run = (inst: string, com: string) =>
  runFiles(["i.yaml"], "c.yaml", { fs: memoryFs({ "i.yaml": inst, "c.yaml": com }) });
const decodeEngine = (out: ReturnType<typeof run>) => out.result.engines.find((e) => e.role === "decode")!;

Deno.test("PD transfer bytes = prompt tokens × KV bytes per token of the receiving layout", () => {
  const one = decodeEngine(run(pd(), common()));
  assert.equal(one.transfers, 1);
  assert.equal(one.transferBytes, 1000 * 131072); // Llama-3.1-8B BF16: 128 KiB per token
  // TP2 decode: each device holds 4 of the 8 KV heads: the same bytes in all.
  assert.equal(decodeEngine(run(pd({ dTp: 2 }), common())).transferBytes, 1000 * 131072);
});

Deno.test("PD transfer time = bytes / (bandwidth × rate), and scales with both", () => {
  const t = (o: { bw?: string; rate?: string }) => decodeEngine(run(pd(o), common())).transferTime / 1e6;
  const base = t({});
  assert.ok(Math.abs(base - 131_072_000 / 2e9) < 1e-5, `${base} s`);
  assert.ok(Math.abs(t({ bw: "8.0e9" }) / base - 0.5) < 1e-4);
  assert.ok(Math.abs(t({ rate: "0.25" }) / base - 2) < 1e-4);
});

Deno.test("PD with enable_kv_transfer_modeling: false gives the TPOT of free transfers", () => {
  const off = run(pd(), common({ n: 20, transfer: false })).summary;
  const free = run(pd({ bw: "1.0e30" }), common({ n: 20 })).summary;
  const slow = run(pd(), common({ n: 20 })).summary;
  assert.deepEqual(off.perMetric["TPOT(s)"], free.perMetric["TPOT(s)"]);
  assert.ok(slow.perMetric["TPOT(s)"].MEDIAN > off.perMetric["TPOT(s)"].MEDIAN);
  // TTFT does not include the transfer.
  assert.deepEqual(slow.perMetric["TTFT(s)"], off.perMetric["TTFT(s)"]);
});

Deno.test("PD decode-side KV holds the prompt: peak blocks = the whole sequence", () => {
  const d = decodeEngine(run(pd(), common()));
  assert.equal(d.peakKvBlocks, Math.ceil((1000 + 100 - 1) / 16));
});

Deno.test("PD two transfers at once on one link each take twice as long as one alone", () => {
  const alone = decodeEngine(run(pd(), common({ n: 1 })));
  // Two prompts arrive together and are prefilled in one step: their transfers start together.
  const two = decodeEngine(run(pd(), common({ n: 2, extra: "" }).replace("request_rate: 1.0", "request_rate: .inf")));
  assert.equal(two.transfers, 2);
  assert.ok(
    Math.abs(two.transferTime / 2 / alone.transferTime - 2) < 1e-4,
    `${two.transferTime / 2} vs ${alone.transferTime}`,
  );
});

Deno.test("PD conservation: every request prefilled once, transferred once, decoded and finished once", () => {
  const out = run(pd(), common({ n: 300 }).replace("request_rate: 1.0", "request_rate: 8.0"));
  const [p, d] = out.result.engines;
  assert.equal(p.served, 300);
  assert.equal(p.transfers, 300);
  assert.equal(d.transfers, 300);
  assert.equal(d.served, 300);
  assert.equal(out.summary.overall.total_requests, 300);
  assert.equal(out.summary.overall.total_output_tokens, 300 * 100);
});

Deno.test("PD decode pool with too little KV shows backpressure, not lost requests", () => {
  // 200 blocks of 16 tokens: three 1,099-token sequences fit on the decode side at once.
  const out = run(
    pd(),
    common({ n: 60, extra: ", num_kv_blocks: 200" }).replace("request_rate: 1.0", "request_rate: .inf"),
  );
  const d = decodeEngine(out);
  assert.ok(d.kvWaits > 10, `${d.kvWaits} waits`);
  assert.ok(d.kvWaitTime > 0);
  assert.equal(out.summary.overall.total_requests, 60);
  assert.equal(out.summary.unservable.length, 0);
  assert.ok(d.peakKvBlocks <= 200);
});

Deno.test("a mixed-device run routes more requests to the faster engines", () => {
  const mixed = `instance_groups:
  - {name: h100, num_instances: 2, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: both}
  - {name: a100, num_instances: 1, num_devices_per_instance: 1, device_type: A100_SXM_80G, pd_role: both}
`;
  const out = run(mixed, common({ n: 600 }).replace("request_rate: 1.0", "request_rate: 12.0"));
  const served = out.result.engines.map((e) => e.served);
  assert.equal(served.reduce((a, b) => a + b, 0), 600);
  assert.ok(served[0] > served[2] * 1.3 && served[1] > served[2] * 1.3, `served ${served}`);
});

Deno.test("on long prompts 1P:2D beats aggregated TPOT on the same devices, and loses it on a 100× slower link", () => {
  const c = `${ROOT}scenarios/configs/`;
  const tpot = (inst: string) =>
    runFiles([`${c}${inst}.yaml`], `${c}llama8b_long_prompt.yaml`).summary.perMetric["TPOT(s)"].MEDIAN;
  const agg = tpot("h100_agg_x3");
  const disagg = tpot("h100_pd_1p2d");
  const slow = tpot("h100_pd_1p2d_slow_link");
  assert.ok(disagg < 0.9 * agg, `1P:2D ${disagg} vs aggregated ${agg}`);
  assert.ok(slow > agg, `slow link ${slow} vs aggregated ${agg}`);
});
