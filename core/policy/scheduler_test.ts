import assert from "node:assert/strict";
import { SCHEDULER_NAMES, withParts } from "./scheduler.ts";
import { SCHEDULERS } from "./schedulers.ts";
import { ADMISSION_POLICY } from "./mod.ts";
import { mixedBatching } from "./mixed_batching.ts";

const ROOT = new URL("./schedulers/", import.meta.url);

Deno.test("SCHEDULERS holds one scheduler per name, each in its own file citing the engine source it follows", () => {
  assert.deepEqual(Object.keys(SCHEDULERS).sort(), [...SCHEDULER_NAMES].sort());
  assert.ok(SCHEDULER_NAMES.length >= 7);
  const files = [...Deno.readDirSync(ROOT)].map((e) => e.name).filter((n) => n.endsWith(".ts")).sort();
  // One file per engine family (TensorRT-LLM's two capacity policies share one).
  assert.deepEqual(files, [
    "generic.ts",
    "lmdeploy.ts",
    "mindie.ts",
    "sglang.ts",
    "trtllm.ts",
    "vllm_v0.ts",
    "vllm_v1.ts",
  ]);
  for (const [name, s] of Object.entries(SCHEDULERS)) {
    assert.equal(s.name, name);
    assert.ok(s.follows.length > 20, `${name}: follows says which source`);
    assert.ok(Object.values(ADMISSION_POLICY).includes(s.admission), `${name}: a registered admission policy`);
  }
  for (const file of files) {
    const header = Deno.readTextFileSync(new URL(file, ROOT)).split("@module")[0];
    assert.match(header, /Follows/, `${file}: its header cites what it follows`);
  }
});

Deno.test("SCHEDULERS: each engine family's documented decisions", () => {
  const parts = (n: keyof typeof SCHEDULERS) => [SCHEDULERS[n].batching.name, SCHEDULERS[n].admission.name];
  assert.deepEqual(parts("vllm_v1"), ["mixed", "greedy"]);
  assert.deepEqual(parts("vllm_v0"), ["mixed", "greedy"]);
  assert.deepEqual(parts("sglang"), ["prefill_first", "conservative"]);
  assert.deepEqual(parts("trtllm_guaranteed_no_evict"), ["mixed", "guaranteed_no_evict"]);
  assert.deepEqual(parts("trtllm_max_utilization"), ["mixed", "greedy"]);
  // MindIE admits on the prompt's blocks and preempts by recomputation (maxPreemptCount 0): not guaranteed-no-evict.
  assert.deepEqual(parts("mindie"), ["prefill_first", "greedy"]);
  assert.deepEqual(parts("lmdeploy"), ["mixed", "greedy"]);
  assert.deepEqual(parts("generic"), ["mixed", "greedy"]);
  // Only a policy that preempts may admit on less than a request's lifetime.
  for (const s of Object.values(SCHEDULERS)) {
    assert.equal(s.admission.preempts, s.admission.admitBlocks(1, 10) < 10, s.name);
  }
});

Deno.test("vLLM V0's block rules belong to its scheduler alone, and leave with a configuration's no-evict admission", () => {
  const v0 = SCHEDULERS.vllm_v0;
  assert.deepEqual(
    [v0.admitsWholePrompt, v0.watermark, v0.countsTouchedBlocks, v0.admitsAfterPreemption],
    [true, 0.01, true, true],
  );
  for (const s of Object.values(SCHEDULERS)) {
    if (s.name === "vllm_v0") continue;
    assert.deepEqual([s.watermark, s.countsTouchedBlocks, s.admitsAfterPreemption], [0, false, false], s.name);
  }
  // With every block set aside at admission nothing waits for a free one.
  assert.equal(withParts(v0, ADMISSION_POLICY.guaranteed_no_evict, v0.batching).countsTouchedBlocks, false);
  assert.equal(withParts(v0, ADMISSION_POLICY.greedy, mixedBatching).countsTouchedBlocks, true);
});

Deno.test("withParts() keeps a scheduler whose parts are unchanged and replaces only what a configuration overrides", () => {
  const s = SCHEDULERS.sglang;
  assert.equal(withParts(s, s.admission, s.batching), s);
  const mixed = withParts(s, s.admission, mixedBatching);
  assert.equal(mixed.name, "sglang");
  assert.equal(mixed.batching, mixedBatching);
  assert.equal(mixed.admission, s.admission);
});
