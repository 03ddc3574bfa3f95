import assert from "node:assert/strict";
import { applyProfile, ENGINES, hostCostsOf, PROFILE_RECORDS, resolveProfile } from "./engine_profiles.ts";
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
  const h200 = { deviceName: "H200_SXM_141G", memoryBytes: 141e9, tp: 8 };
  assert.equal(hostCostsOf(resolveProfile("trtllm", "0.17.0", "pytorch").record, h200)?.stepUs, 40_000);
  assert.equal(resolveProfile("trtllm", "0.17.0").record.backend, undefined); // the TensorRT engine flow
  assert.equal(resolveProfile("trtllm", "0.17.0", "tensorrt").record.label, "TensorRT-LLM (0.12 and later)");
  const v = resolveProfile("vllm", "0.9.1", "pytorch");
  assert.equal(v.record.since, "0.9.0");
  assert.match(v.notice!, /vllm has no 'pytorch' backend profile/);
});

Deno.test("host costs may depend on the device: vLLM V0 and SGLang 0.4 on MI300X (ROCm builds) carry their own", () => {
  const mi = { deviceName: "MI300X_192G", memoryBytes: 192 * 2 ** 30, tp: 8 };
  const h100 = { deviceName: "H100_SXM_80G", memoryBytes: 80 * 2 ** 30, tp: 8 };
  assert.equal(hostCostsOf(resolveProfile("vllm", "0.7.3").record, mi)?.stepUs, 40_030);
  assert.equal(hostCostsOf(resolveProfile("vllm", "0.7.3").record, h100)?.stepUs, 8300);
  assert.equal(hostCostsOf(resolveProfile("sglang", "0.4.2").record, mi)?.seqUs, 499);
  assert.equal(hostCostsOf(resolveProfile("sglang", "0.4.2").record, h100)?.seqUs, 46);
  assert.equal(hostCostsOf(resolveProfile("vllm", "0.10.0").record, mi)?.stepUs, 1970); // V1: one figure
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
