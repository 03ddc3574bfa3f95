import assert from "node:assert/strict";
import * as fc from "fast-check";
import { simulate } from "./simulator.ts";
import { input } from "./_fixtures.ts";
import type { SchedulerName } from "../policy/scheduler.ts";
import { SCHEDULER_NAMES } from "../policy/scheduler.ts";

// Random light-load runs with prefix caching on: shared prefixes fill the pool with cache as requests leave.
const lightRun = fc.record({
  requests: fc.integer({ min: 5, max: 60 }),
  input: fc.integer({ min: 16, max: 400 }),
  output: fc.integer({ min: 1, max: 60 }),
  groups: fc.integer({ min: 1, max: 30 }),
  kvBlocks: fc.integer({ min: 200, max: 2000 }),
  rate: fc.double({ min: 1, max: 200, noNaN: true }),
  scheduler: fc.constantFrom<SchedulerName>(...SCHEDULER_NAMES),
  admission: fc.constantFrom("greedy", "guaranteed_no_evict", "conservative" as const),
});

Deno.test("a run with no preemption and mean KV use under 20% never reports a peak of 1.0, prefix caching on", () => {
  fc.assert(
    fc.property(lightRun, (c) => {
      const r = simulate(input(
        {
          numRequests: c.requests,
          arrival: { rate: c.rate, process: "constant", cv: 1 },
          classes: [{
            name: "p",
            weight: 1,
            input: { dist: "fixed", value: c.input },
            output: { dist: "fixed", value: c.output },
            sharedPrefixTokens: Math.min(c.input, 64),
            prefixGroups: c.groups,
          }],
        },
        { prefixCaching: true, kvBlocks: c.kvBlocks, scheduler: c.scheduler, admission: c.admission },
      ));
      const e = r.engines[0];
      const end = Math.max(...r.requests.finish);
      const mean = e.kvTime / (e.kvBlocks * end);
      fc.pre(e.preemptions === 0 && mean < 0.2);
      // Held plus set aside never reaches the whole pool when the mean is this low and no one was preempted
      // (the cached blocks nobody references are counted apart).
      assert.ok(e.peakKvBlocks < e.kvBlocks, `peak ${e.peakKvBlocks} of ${e.kvBlocks}`);
      assert.ok(e.peakKvBlocks <= Math.ceil((c.input + c.output) / 16) * c.requests);
    }),
    { seed: 26, numRuns: 150 },
  );
});

Deno.test("a TensorRT-LLM engine reserves the last token too: a request one token short of fitting is unservable, never stuck", () => {
  // 16 in + 1 out: 16 tokens of KV (1 block of 16) elsewhere, but GUARANTEED_NO_EVICT reserves 17 (2 blocks).
  const run = (scheduler: SchedulerName) =>
    simulate(input(
      { numRequests: 1, inputTokens: 16, outputTokens: 1 },
      { kvBlocks: 1, scheduler, admission: "guaranteed_no_evict" },
    ));
  assert.equal(run("mindie").engines[0].served, 1);
  const trt = run("trtllm_guaranteed_no_evict");
  assert.equal(trt.engines[0].served, 0);
  assert.deepEqual([...trt.unservable.values()], [1]);
  assert.match([...trt.unservable.keys()][0], /exceeds the KV cache of an engine/);
});
