import assert from "node:assert/strict";
import {
  applyProfile,
  CALIBRATED_CONSTANTS,
  calibration,
  ENGINES,
  hostOf,
  hostPinOf,
  PROFILE_RECORDS,
  resolveProfile,
} from "./engine_profiles.ts";
import type { ServingConfig } from "./types.ts";

const H100 = { deviceName: "H100_SXM_80G", memoryBytes: 80 * 2 ** 30, tp: 1 };
const A100 = { deviceName: "A100_SXM_80G", memoryBytes: 80 * 2 ** 30, tp: 1 };
const SC: ServingConfig = {
  max_concurrency: 100,
  block_size: 128,
  max_tokens_budget: 8192,
  max_num_seqs: 256,
  enable_chunked_prefill: true,
  mix_prefill_decode: true,
  enable_prefix_caching: false,
  kv_cache_memory_fraction: 0.9,
  num_kv_blocks: null,
  routing_policy: "least_loaded",
  admission_policy: "greedy",
  num_scheduler_steps: 1,
  api_server: true,
};

Deno.test("every engine has a profile record, each naming its source", () => {
  for (const e of ENGINES) assert.ok(PROFILE_RECORDS.some((r) => r.engine === e), e);
  for (const r of PROFILE_RECORDS) assert.ok(r.source.length > 40, r.label);
});

Deno.test("resolveProfile() takes the record covering the version, the latest without one, the nearest with a notice", () => {
  assert.equal(resolveProfile("vllm").record.since, "0.9.0");
  assert.equal(resolveProfile("vllm", "0.8.5").record.since, "0.8.0");
  assert.equal(resolveProfile("vllm", "v0.10.1").record.since, "0.9.0");
  assert.equal(resolveProfile("vllm", "0.7.3").record.since, "0.6.0");
  assert.equal(resolveProfile("vllm", "0.8.5").notice, undefined);
  const old = resolveProfile("vllm", "0.4.2");
  assert.equal(old.record.since, "0.6.0");
  assert.equal(old.notice, "note: vllm 0.4.2 is older than every profile: using the nearest, vLLM V0 engine (0.6–0.7)");
  const bad = resolveProfile("sglang", "nightly");
  assert.equal(bad.record.label, "SGLang (0.4.7 and later)");
  assert.match(
    bad.notice!,
    /^note: sglang version 'nightly' is not a version number: using the SGLang \(0\.4\.7 and later\) profile$/,
  );
  assert.equal(resolveProfile("mindie", "1.0.RC3").record.engine, "mindie");
});

Deno.test("resolveProfile() picks the records of the backend asked for; an engine without it falls back with a notice", () => {
  assert.equal(resolveProfile("trtllm", "0.17.0", "pytorch").record.backend, "pytorch");
  assert.equal(resolveProfile("trtllm", "0.17.0", "pytorch").record.launch, "eager"); // use_cuda_graph False
  assert.equal(resolveProfile("trtllm", "1.0.0", "pytorch").record.launch, "graphs");
  assert.equal(resolveProfile("trtllm", "0.17.0").record.backend, undefined); // the TensorRT engine flow
  assert.equal(resolveProfile("trtllm", "0.17.0", "tensorrt").record.label, "TensorRT-LLM (0.12 and later)");
  const v = resolveProfile("vllm", "0.9.1", "pytorch");
  assert.equal(v.record.since, "0.9.0");
  assert.match(v.notice!, /vllm has no 'pytorch' backend profile/);
});

Deno.test("hostPinOf() covers only the releases a source measured: other versions take the family prior", () => {
  assert.equal(hostPinOf("vllm", "0.6.3")?.id, "vllm-0.6");
  assert.equal(hostPinOf("vllm", "v0.10.1")?.id, "vllm-0.10");
  assert.equal(hostPinOf("vllm", "0.9.2"), undefined);
  assert.equal(hostPinOf("vllm"), undefined); // no version: the latest, which no source pins
  assert.equal(hostPinOf("sglang", "0.4.1")?.id, "sglang-0.4.0");
  assert.equal(hostPinOf("sglang", "0.4.3"), undefined);
  assert.equal(hostPinOf("sglang", "0.4.2")?.id, "sglang-0.4.2");
  assert.equal(hostPinOf("trtllm", "0.17.0", "pytorch"), undefined); // its eager launches are launch_us.cuda
});

Deno.test("hostOf() takes a pin's fitted values, else the family prior, and the launch cost of the device's platform", () => {
  const pinned = calibration({ "host.vllm-0.10.step_us": 1500, "launch_us.rocm": 20 });
  const v10 = hostOf(resolveProfile("vllm", "0.10.0"), "MI300X_192G", pinned);
  assert.equal(v10.stepUs, 1500);
  assert.equal(v10.seqUs, 40); // not pinned in this calibration: V1's prior
  assert.equal(v10.launchUs, 20); // ROCm
  assert.equal(v10.pin, "vllm-0.10");
  const v9 = hostOf(resolveProfile("vllm", "0.9.2"), "H100_SXM_80G", pinned);
  assert.deepEqual([v9.stepUs, v9.launchUs, v9.pin], [1000, 10, undefined]); // V1 prior, CUDA prior
  assert.match(v9.source, /vllm-v1 family prior/);
  const sglang = hostOf(resolveProfile("sglang", "0.4.6"), "H200_SXM_141G", pinned);
  assert.deepEqual([sglang.overlap, sglang.launch], [true, "graphs"]);
  assert.equal(hostOf(resolveProfile("trtllm", "0.17.0"), "H100_SXM_80G", pinned).launch, "compiled");
});

Deno.test("every calibrated constant has a meaning, a range, and a prior inside it", () => {
  const names = new Set<string>();
  for (const c of CALIBRATED_CONSTANTS) {
    assert.ok(!names.has(c.name), `${c.name} twice`);
    names.add(c.name);
    assert.ok(c.meaning.length > 20 && c.priorSource.length > 20, c.name);
    assert.ok(c.min < c.max && c.min <= c.prior && c.prior <= c.max, `${c.name}: ${c.min} <= ${c.prior} <= ${c.max}`);
    if (c.unit === "fraction") assert.ok(c.min > 0 && c.max <= 1, c.name);
  }
});

Deno.test("applyProfile() fills only the keys the file leaves out, and nothing without an engine", () => {
  assert.deepEqual(applyProfile(SC, new Set(), H100), { serving: SC });
  const v = applyProfile({ ...SC, engine: "vllm" }, new Set(["max_tokens_budget"]), H100);
  assert.equal(v.serving.max_tokens_budget, 8192); // written: kept
  assert.equal(v.serving.max_num_seqs, 1024); // vLLM on H100
  assert.equal(v.serving.enable_prefix_caching, true);
  assert.ok(!("max_tokens_budget" in v.profile!.supplied));
  // vLLM's larger defaults skip A100 (PR #17885).
  const a = applyProfile({ ...SC, engine: "vllm" }, new Set(), A100).serving;
  assert.deepEqual([a.max_tokens_budget, a.max_num_seqs], [2048, 256]);
  const t = applyProfile({ ...SC, engine: "trtllm" }, new Set(["admission_policy"]), H100).serving;
  assert.equal(t.admission_policy, "greedy"); // explicit wins
  assert.equal(t.enable_chunked_prefill, false);
  const s = applyProfile({ ...SC, engine: "sglang" }, new Set(), { ...H100, tp: 4 }).serving;
  assert.deepEqual([s.mix_prefill_decode, s.kv_cache_memory_fraction, s.max_tokens_budget], [false, 0.85, 8192]);
});
