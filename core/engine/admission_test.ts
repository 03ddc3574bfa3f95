/**
 * The conformance suite every admission policy passes, and how the three
 * compare under KV pressure.
 */
import assert from "node:assert/strict";
import { ADMISSION_POLICY } from "../policy/mod.ts";
import { NEW_TOKEN_RATIO } from "../policy/conservative_admission.ts";
import { simulate } from "./simulator.ts";
import { input } from "./_fixtures.ts";

const POLICIES = Object.values(ADMISSION_POLICY);

for (const p of POLICIES) {
  Deno.test(`${p.name}: admitBlocks() lies between the chunk and the lifetime, grows with the lifetime, and a policy that never preempts sets aside the lifetime`, () => {
    for (let need = 1; need <= 40; need += 3) {
      let last = -1;
      for (let lifetime = need; lifetime <= 200; lifetime += 7) {
        const b = p.admitBlocks(need, lifetime);
        assert.ok(Number.isInteger(b) && b >= need && b <= lifetime, `${need}, ${lifetime}: ${b}`);
        assert.ok(b >= last, "monotone in the lifetime");
        last = b;
        if (!p.preempts) assert.equal(b, lifetime);
      }
    }
  });

  Deno.test(`${p.name}: under KV pressure every request finishes once, nothing leaks, and preemption only where allowed`, () => {
    // 40 requests of 300 + 200 tokens on 120 blocks of 16: at most 3-4 fit whole.
    const r = simulate(
      input({ numRequests: 40, inputTokens: 300, outputTokens: 200 }, { kvBlocks: 120, admission: p.name }),
    );
    for (let i = 0; i < 40; i++) assert.ok(r.requests.finish[i] > 0, `request ${i}`);
    assert.equal(r.engines[0].served, 40);
    if (!p.preempts) assert.equal(r.engines[0].preemptions, 0);
  });
}

Deno.test("under KV pressure conservative admission preempts less than greedy and batches more than guaranteed_no_evict", () => {
  const run = (admission: "greedy" | "conservative" | "guaranteed_no_evict") =>
    simulate(input({ numRequests: 60, inputTokens: 200, outputTokens: 400 }, { kvBlocks: 200, admission })).engines[0];
  const greedy = run("greedy");
  const conservative = run("conservative");
  const noEvict = run("guaranteed_no_evict");
  assert.ok(greedy.preemptions > 0);
  assert.ok(conservative.preemptions < greedy.preemptions, `${conservative.preemptions} vs ${greedy.preemptions}`);
  assert.equal(noEvict.preemptions, 0);
  assert.ok(conservative.peakBatch > noEvict.peakBatch, `${conservative.peakBatch} vs ${noEvict.peakBatch}`);
  // SGLang's initial new-token ratio.
  assert.equal(NEW_TOKEN_RATIO, 0.7);
  assert.equal(ADMISSION_POLICY.conservative.admitBlocks(10, 110), 10 + 70);
});
