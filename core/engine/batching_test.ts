/**
 * The conformance suite of batch-formation policies: every request finishes
 * once within the budget and seat limits, and each policy keeps its own
 * promise about what a step may hold.
 */
import assert from "node:assert/strict";
import { mixedBatching } from "../policy/mixed_batching.ts";
import { prefillFirstBatching } from "../policy/prefill_first_batching.ts";
import { simulate } from "./simulator.ts";
import { input } from "./_fixtures.ts";
import type { StepRecord } from "./types.ts";

const run = (mix: boolean) => {
  const steps: StepRecord[] = [];
  const r = simulate(
    input(
      { numRequests: 30, inputTokens: 700, outputTokens: 40, arrival: { rate: 300, process: "poisson", cv: 1 } },
      { mixPrefillDecode: mix, maxTokens: 1024, maxSeqs: 8 },
    ),
    { onStep: (s) => steps.push(s) },
  );
  return { r, steps };
};

for (const [policy, mix] of [[mixedBatching, true], [prefillFirstBatching, false]] as const) {
  Deno.test(`${policy.name}: every request finishes once, no step exceeds the token budget or the seats`, () => {
    const { r, steps } = run(mix);
    for (let i = 0; i < 30; i++) assert.ok(r.requests.finish[i] > r.requests.firstToken[i], `request ${i}`);
    assert.equal(r.engines[0].served, 30);
    for (const s of steps) {
      assert.ok(s.prefillTokens + s.decodeTokens <= 1024 && s.seqs <= 8, JSON.stringify(s));
    }
  });
}

Deno.test("prefill_first never puts a prefill chunk and a decode in one step; mixed does", () => {
  const both = (steps: StepRecord[]) => steps.filter((s) => s.prefillTokens > 0 && s.decodeTokens > 0).length;
  assert.equal(both(run(false).steps), 0);
  assert.ok(both(run(true).steps) > 0);
});
