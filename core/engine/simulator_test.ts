import assert from "node:assert/strict";
import { simulate } from "./simulator.ts";
import { Request } from "./request.ts";
import { engineSpec, input, linearCost, workload } from "./_fixtures.ts";
import type { WorkloadOverrides } from "./_fixtures.ts";
import type { EngineSpec, SimulationInput, StepRecord } from "./types.ts";
import type { RequestDraw } from "../workload/source.ts";

const ms = 1000; // µs

Deno.test("simulate() gives one step for a prompt within the budget, then one step per output token", () => {
  const r = simulate(input({ inputTokens: 100, outputTokens: 10 }));
  assert.equal(r.requests.firstToken[0], 1 * ms);
  assert.equal(r.requests.finish[0], 10 * ms);
  assert.equal(r.engines[0].steps, 10);
});

Deno.test("simulate() chunks a prompt longer than max_tokens_budget over several steps", () => {
  const steps: StepRecord[] = [];
  const r = simulate(input({ inputTokens: 10_000, outputTokens: 3 }, { maxTokens: 4096 }), {
    onStep: (s) => steps.push(s),
  });
  assert.deepEqual(steps.map((s) => s.prefillTokens), [4096, 4096, 1808, 0, 0]);
  assert.equal(r.requests.firstToken[0], 3 * ms);
  assert.equal(r.requests.finish[0], 5 * ms);
});

Deno.test("simulate() with chunked prefill off runs the whole prompt in one step", () => {
  const steps: StepRecord[] = [];
  simulate(input({ numRequests: 2, inputTokens: 3000, outputTokens: 2 }, { maxTokens: 4096, chunkedPrefill: false }), {
    onStep: (s) => steps.push(s),
  });
  // The second prompt does not fit beside the first in 4,096 tokens: it waits a step.
  assert.deepEqual(steps.map((s) => s.prefillTokens), [3000, 3000, 0]);
});

Deno.test("simulate() batches decodes of running requests with new prefills (continuous batching)", () => {
  const steps: StepRecord[] = [];
  simulate(
    input({ numRequests: 2, inputTokens: 100, outputTokens: 5, arrival: { rate: 400, process: "constant", cv: 1 } }),
    {
      onStep: (s) => steps.push(s),
    },
  );
  // Request 1 arrives at 2.5 ms, while request 0 decodes: it joins the step starting at 3 ms.
  const joined = steps.find((s) => s.prefillTokens === 100 && s.decodeTokens === 1);
  assert.ok(joined, JSON.stringify(steps));
  assert.equal(joined.start, 3 * ms);
});

Deno.test("simulate() respects max_num_seqs", () => {
  let peak = 0;
  simulate(input({ numRequests: 20, inputTokens: 10, outputTokens: 20 }, { maxSeqs: 4 }), {
    onStep: (s) => (peak = Math.max(peak, s.seqs)),
  });
  assert.equal(peak, 4);
});

Deno.test("simulate() preempts the newest running request when KV blocks run out, and recomputes it", () => {
  // 10 blocks of 16 tokens; each request needs ⌈(40 + 40 − 1) / 16⌉ = 5 blocks at the end.
  // Three requests start with 3 blocks each (9 of 10) and grow: the newest is preempted.
  let peak = 0;
  const r = simulate(input({ numRequests: 3, inputTokens: 40, outputTokens: 40 }, { kvBlocks: 10 }), {
    onStep: (s) => (peak = Math.max(peak, s.kvBlocks)),
  });
  assert.ok(peak <= 10);
  assert.ok(r.requests.preemptions[2] >= 1, `preemptions ${[...r.requests.preemptions]}`);
  assert.equal(r.requests.preemptions[0], 0, "the oldest request is never the victim");
  for (let i = 0; i < 3; i++) assert.ok(r.requests.finish[i] > 0);
  assert.equal(r.engines[0].preemptions, r.requests.preemptions.reduce((a, b) => a + b, 0));
});

Deno.test("simulate() holds requests at the client beyond max_concurrency (send time after the wait)", () => {
  const r = simulate(input({ numRequests: 3, inputTokens: 10, outputTokens: 2, maxConcurrency: 1 }));
  assert.deepEqual([...r.requests.send], [0, 2 * ms, 4 * ms]);
  assert.deepEqual([...r.requests.arrival], [0, 0, 0]);
});

Deno.test("simulate() reports a request that can never fit instead of retrying it", () => {
  const r = simulate({
    ...input({ numRequests: 2, inputTokens: 1000, outputTokens: 10 }),
    engines: [
      { ...input({}).engines[0], kvBlocks: 10 },
    ],
  });
  assert.deepEqual([...r.unservable], [[
    "prompt + output exceeds the KV cache of an engine (10 blocks of 16 = 160 tokens)",
    2,
  ]]);
  assert.deepEqual([...r.requests.engine], [-1, -1]);
});

Deno.test("simulate() routes to the least-loaded engine", () => {
  const r = simulate(input({ numRequests: 4, inputTokens: 100, outputTokens: 50 }, {}, 2));
  assert.deepEqual([...r.requests.engine], [0, 1, 0, 1]);
});

Deno.test("simulate() keeps slow and fast engines apart: steps take the cost model's time", () => {
  const base = input({ numRequests: 1, inputTokens: 1000, outputTokens: 2 });
  const r = simulate({ ...base, engines: [{ ...base.engines[0], cost: linearCost(0.5, 0.01) }] });
  assert.equal(r.requests.firstToken[0], 10_500);
  assert.equal(r.requests.finish[0], 10_500 + 510);
});

Deno.test("simulate() with one MTP draft always accepted produces two tokens per decode step", () => {
  const r = simulate(input({ inputTokens: 100, outputTokens: 11 }, { draftTokens: 1, draftAcceptance: 1 }));
  // Step 1: prefill → token 1; steps 2–6: two tokens each → 11.
  assert.equal(r.engines[0].steps, 6);
  assert.equal(r.requests.finish[0], 6 * ms);
});

Deno.test("simulate() with MTP credits the expected accepted drafts: 1 + a + a² tokens per step", () => {
  // Two drafts at a = 0.5: 1.75 tokens per decode step on average.
  const r = simulate(input({ inputTokens: 10, outputTokens: 701 }, { draftTokens: 2, draftAcceptance: 0.5 }));
  const decodeSteps = r.engines[0].steps - 1;
  assert.ok(Math.abs(700 / decodeSteps - 1.75) < 0.01, `${700 / decodeSteps} tokens per step`);
});

Deno.test("simulate() never drafts past the last output token", () => {
  const r = simulate(
    input({ numRequests: 3, inputTokens: 10, outputTokens: 4 }, { draftTokens: 5, draftAcceptance: 1 }),
  );
  for (let i = 0; i < 3; i++) assert.ok(r.requests.finish[i] > 0);
  assert.equal(r.engines[0].steps, 2); // prefill (token 1), then tokens 2–4 in one step
});

Deno.test("simulate() counts one inter-token gap per token after the first: the decode step time", () => {
  // 2 ms steps, alone: 9 gaps of 2 ms after the first token.
  const r = simulate(input({ inputTokens: 100, outputTokens: 10 }, { cost: linearCost(2) }));
  assert.deepEqual([...r.itl], [[2 * ms, 9]]);
  // Two requests, the second joining a step later: its prefill step delays nobody's gap but its own.
  const two = simulate(
    input({ numRequests: 2, inputTokens: 100, outputTokens: 5, arrival: { rate: 400, process: "constant", cv: 1 } }),
  );
  const gaps = [...two.itl].reduce((n, [, c]) => n + c, 0);
  assert.equal(gaps, 2 * 4);
});

Deno.test("simulate() integrates batch and KV occupancy over step time", () => {
  // One request alone: 1 sequence for 10 steps of 1 ms; its blocks grow from 7 (100 tokens) to 7.
  const r = simulate(input({ inputTokens: 100, outputTokens: 10 }));
  assert.equal(r.engines[0].seqTime, 10 * ms);
  assert.equal(r.engines[0].kvTime, 7 * 10 * ms);
});

/** A prefill engine and a decode engine, both of `e`, with `prefill` and `decode` overriding each. */
function pdInput(
  w: WorkloadOverrides,
  e: Partial<EngineSpec> = {},
  prefill: Partial<EngineSpec> = {},
  decode: Partial<EngineSpec> = {},
): SimulationInput {
  return {
    engines: [
      engineSpec({ ...e, ...prefill, role: "prefill" }),
      engineSpec({ ...e, ...decode, role: "decode", instance: 1 }),
    ],
    workload: workload(w),
    routing: "least_loaded",
  };
}

/** Runs `inp`, checking every step's KV and reserved blocks; returns the result. */
function runChecked(inp: SimulationInput) {
  const r = simulate(inp, {
    onStep: (s) => {
      const cap = inp.engines[s.engine].kvBlocks;
      assert.ok(s.reservedBlocks >= 0, `engine ${s.engine}: ${s.reservedBlocks} blocks reserved`);
      assert.ok(
        s.kvBlocks + s.reservedBlocks <= cap,
        `engine ${s.engine}: ${s.kvBlocks} + ${s.reservedBlocks} > ${cap}`,
      );
    },
  });
  for (let i = 0; i < r.requests.count; i++) assert.ok(r.requests.finish[i] > 0, `request ${i} finished`);
  return r;
}

Deno.test("PD with guaranteed_no_evict: a prefill engine reserves only the prompt, a decode engine the rest", () => {
  // 100 in / 50 out, 16-token blocks: the prompt takes 7 blocks, the whole sequence 10.
  // A 7-block prefill engine holds every prompt; the 30-block decode engine, three whole sequences.
  const r = runChecked(
    pdInput(
      { numRequests: 20, inputTokens: 100, outputTokens: 50 },
      { admission: "guaranteed_no_evict", kvBlocks: 30 },
      { kvBlocks: 7 },
    ),
  );
  assert.deepEqual(r.engines.map((e) => [e.served, e.preemptions]), [[20, 0], [20, 0]]);
  assert.ok(r.engines[1].kvWaits > 0, "decode-side backpressure, not preemption");
  assert.equal(r.engines[1].peakKvBlocks, 30);
  // Equal pools: the decode engine never takes a block it did not reserve (reserved never below 0).
  const same = runChecked(
    pdInput({ numRequests: 20, inputTokens: 100, outputTokens: 50 }, {
      admission: "guaranteed_no_evict",
      kvBlocks: 30,
    }),
  );
  assert.deepEqual(same.engines.map((e) => [e.served, e.preemptions]), [[20, 0], [20, 0]]);
});

/** One class of 64-token prompts that are all shared prefix (4 blocks of 16), from `groups` distinct prefixes. */
const prefixed = (groups: number, output = 16): WorkloadOverrides => ({
  classes: [{
    name: "p",
    weight: 1,
    input: { dist: "fixed", value: 64 },
    output: { dist: "fixed", value: output },
    sharedPrefixTokens: 64,
    prefixGroups: groups,
  }],
});

Deno.test("guaranteed_no_evict with prefix caching evicts unreferenced cached blocks to admit", () => {
  // One request at a time, each of a new prefix: finished prompts stay cached
  // (4 blocks each) until the 20-block pool is all cache; the next admission
  // must evict some to reserve its 5 blocks.
  const r = runChecked(
    input(
      { numRequests: 10, arrival: { rate: 10, process: "constant", cv: 1 }, ...prefixed(1000) },
      { admission: "guaranteed_no_evict", prefixCaching: true, kvBlocks: 20 },
    ),
  );
  assert.equal(r.engines[0].served, 10);
  assert.equal(r.engines[0].preemptions, 0);
  // Held or set aside: one request's 5 blocks at most; the rest of the pool was cache, reclaimable.
  assert.equal(r.engines[0].peakKvBlocks, 5);
  assert.ok(r.engines[0].kvCachedTime > 0);
  assert.equal(r.engines[0].cacheReferenced, 0);
});

Deno.test("PD with prefix caching: a decode engine evicts unreferenced cached blocks to take an incoming prompt", () => {
  // The decode engine caches each landed prompt's full blocks (4 of 16 tokens)
  // and keeps them once the request leaves; with a new prefix per request its
  // 20-block pool fills with cache, and the next transfer needs room.
  for (const admission of ["greedy", "guaranteed_no_evict"] as const) {
    const r = runChecked(
      pdInput(
        { numRequests: 10, arrival: { rate: 10, process: "constant", cv: 1 }, ...prefixed(1000) },
        { admission, prefixCaching: true, kvBlocks: 20 },
      ),
    );
    assert.deepEqual(r.engines.map((e) => [e.served, e.preemptions]), [[10, 0], [10, 0]], admission);
    // Held or set aside at a step: one request's blocks; the cache (reclaimable) is counted apart.
    assert.equal(r.engines[1].peakKvBlocks, 5, admission);
    assert.ok(r.engines[1].kvCachedTime > 0, admission);
  }
});

Deno.test("least_kv routing under guaranteed_no_evict counts blocks set aside for admitted requests as taken", () => {
  // A: 16 in / 1000 out on engine 0 (1 block in use, 62 reserved); B: 160 in / 2 out
  // on engine 1 (11 blocks, none reserved). C goes where a new request has more room: engine 1.
  const draws = [
    { arrival: 0, input: 16, output: 1000 },
    { arrival: 500, input: 160, output: 2 },
    { arrival: 1500, input: 16, output: 2 },
  ];
  const base = input({ numRequests: 3 }, { admission: "guaranteed_no_evict", kvBlocks: 100 }, 2);
  const r = simulate({
    ...base,
    routing: "least_kv",
    workload: { ...base.workload, source: () => ({ count: 3, next: () => draws.shift()! }) },
  });
  assert.deepEqual([...r.requests.engine], [0, 1, 1]);
});

Deno.test("chunked prefill off: a preempted request whose recomputation exceeds the token budget runs alone", () => {
  // 4 blocks of 16 tokens, 20 tokens a step: two 10-token prompts fit, then grow
  // until the newer is preempted with some 22 tokens generated. Recomputing 32 tokens
  // in one step exceeds the budget: it waits for an otherwise empty step.
  const steps: StepRecord[] = [];
  const r = simulate(
    input({ numRequests: 2, inputTokens: 10, outputTokens: 40 }, { kvBlocks: 4, maxTokens: 20, chunkedPrefill: false }),
    { onStep: (s) => steps.push(s) },
  );
  assert.deepEqual([...r.requests.preemptions], [0, 1]);
  const alone = steps.filter((s) => s.prefillTokens > 20);
  assert.equal(alone.length, 1);
  assert.equal(alone[0].seqs, 1);
  assert.ok(alone[0].start >= r.requests.finish[0], "after the other request left");
});

/** A workload of these requests, in order. */
const drawn = (draws: RequestDraw[]): WorkloadOverrides => ({
  numRequests: draws.length,
  source: () => {
    let i = 0;
    return { count: draws.length, next: () => draws[i++] };
  },
});

Deno.test("a decode engine whose only running request preempts itself lets a landed request take the seat", () => {
  // Decode side: 2 blocks of 16 tokens, one seat. Both prompts (10 tokens, 1 block each)
  // land together: one runs, one waits ready. At 16 tokens the runner needs a second
  // block and none is free: it preempts itself, and the ready request must take the seat.
  const r = runChecked(
    pdInput(
      drawn([{ arrival: 0, input: 10, output: 20 }, { arrival: 0, input: 10, output: 20 }]),
      { linkBandwidth: Infinity },
      {},
      { kvBlocks: 2, maxSeqs: 1 },
    ),
  );
  assert.equal(r.engines[1].served, 2);
  assert.equal(r.engines[1].preemptions, 1);
});

Deno.test("greedy preemption with prefix caching frees a victim's cached blocks before preempting more", () => {
  // 4 blocks of 16 tokens, 17 tokens a step. R (13-token prompt) decodes; V (64 tokens,
  // all shared prefix) prefills 16 tokens a step beside it, each block cached as it is
  // done. When R crosses into its second block the pool is full: V is preempted, its 3
  // cached blocks become unreferenced, and evicting them makes room for R, which must
  // not be preempted too (it was, and then nothing was left to run: a stall).
  const prefix = { ids: [11, 12, 13, 14], blockTokens: 16 };
  const r = runChecked(
    input(
      drawn([{ arrival: 0, input: 13, output: 20 }, { arrival: 500, input: 64, output: 1, prefix }]),
      { kvBlocks: 4, maxTokens: 17, prefixCaching: true },
    ),
  );
  assert.equal(r.requests.preemptions[0], 0, "R is never the victim");
  assert.ok(r.requests.preemptions[1] >= 1);
});

Deno.test("least_loaded routing: idle engines take turns; prompt tokens a prefix-cache hit skips are not left as work", () => {
  // Three requests of one 64-token shared prefix, each alone (100 ms apart): both engines are idle at each, and the
  // engine chosen longest ago takes it (0, 1, 0). Hit tokens once stayed counted as outstanding work: the run's end
  // check (no work left counted against an engine) throws then.
  const r = simulate(
    input(
      {
        numRequests: 3,
        arrival: { rate: 10, process: "constant", cv: 1 },
        ...prefixed(1, 4),
      },
      { prefixCaching: true },
      2,
    ),
  );
  assert.deepEqual([...r.requests.engine], [0, 1, 0]);
  // The third finds the first's prompt cached on engine 0: 3 of its 4 blocks (the last is computed for its logits).
  assert.deepEqual(r.engines.map((e) => e.cacheHitBlocks), [3, 0]);
});

Deno.test("a request that does not fit changes nothing: no cached block is evicted for it (vLLM's allocate_slots)", () => {
  // 6 blocks of 16 tokens. A (33 tokens, 2 blocks of shared prefix) finishes in its first step and leaves those 2
  // blocks cached and unreferenced; B (20 + 40 tokens) decodes; C (70 tokens: 5 blocks) arrives then and fits in
  // neither the 2 free blocks nor those plus the 2 cached ones, so it waits for B. Waiting must not evict the
  // cached blocks: vLLM counts evictable blocks as free, returns before touching the cache when a request does
  // not fit, and evicts only to allocate. (It evicted them at C's first attempt, as if C were admitted.)
  const prefix = { ids: [7, 8], blockTokens: 16 };
  const kv: number[] = [];
  const r = simulate(
    input(
      drawn([
        { arrival: 0, input: 33, output: 1, prefix },
        { arrival: 0, input: 20, output: 40 },
        { arrival: 1500, input: 70, output: 1 },
      ]),
      { kvBlocks: 6, maxTokens: 1000, prefixCaching: true },
    ),
    { onStep: (s) => void kv.push(s.kvBlocks + s.cachedBlocks) },
  );
  const t = r.requests;
  assert.ok(t.firstToken[2] > t.finish[1], "C waits for B");
  // B's own blocks (2, then 3 and 4 as it grows) and the 2 cached ones, at every step B runs alone.
  const alone = kv.slice(1, kv.length - 1);
  assert.ok(alone.length > 30);
  for (const [i, used] of alone.entries()) assert.ok(used >= 4, `step ${i + 1}: ${used} blocks in use`);
});

Deno.test("a reused request object is a new request: every field as the constructor leaves it", () => {
  const fresh = new Request(7, 100, 20, 5_000);
  const used = new Request(1, 3, 4, 9);
  // Every field set to something else, as a run leaves a finished request.
  for (const k of Object.keys(used) as (keyof Request)[]) {
    const v = used[k];
    (used as unknown as Record<string, unknown>)[k] = typeof v === "boolean"
      ? !v
      : typeof v === "number"
      ? v + 13
      : [1];
  }
  assert.notDeepEqual(used, fresh);
  assert.deepEqual(used.reuse(7, 100, 20, 5_000), fresh);
});

Deno.test("vLLM V0 with chunked prompts in prefill-only steps: a prefill pass that preempts admits no prompt (no livelock)", () => {
  // 4 blocks of 128 tokens, 8 tokens a step, three 200-token prompts at t = 0 (2 blocks each). The first two are
  // admitted; the second's later chunks want a free block beside its own (V0's touched blocks) and preempt it. When
  // that pass then admitted the third in its place, the two took turns at the freed blocks step after step, and the
  // first one's decode, which prefill-only steps hold back, never ran (found by the property test, seed 6).
  let steps = 0;
  const r = simulate(
    input(
      { numRequests: 3, inputTokens: 200, outputTokens: 2 },
      { scheduler: "vllm_v0", kvBlocks: 4, blockSize: 128, maxTokens: 8, mixPrefillDecode: false },
    ),
    { onStep: () => void (++steps > 100_000 && assert.fail("still stepping after 100,000 steps")) },
  );
  assert.deepEqual([...r.requests.finish].map((t) => t > 0), [true, true, true]);
  assert.equal(r.engines[0].served, 3);
  assert.equal(r.engines[0].preemptions, 2);
  assert.equal(steps, 80);
});

Deno.test("in lockstep an engine steps on past its instant's other events only when none can bring it a request", () => {
  // 1 ms steps and a request every 2 ms: every arrival shares its instant with the step ends of the busy engines.
  // Without hooks, an engine whose step ends steps on at once when nothing at the instant can reach it
  // (Simulation's #alone); with a step hook it steps in the queue's order. The results must be the same: an arrival
  // at the instant joins the engine's next step, a request on its way (a per-request latency) reaches it first, a
  // finish elsewhere sends a waiting request (a client limit that binds) to it first.
  const cases: [string, WorkloadOverrides, Partial<EngineSpec>][] = [
    ["arrivals at step ends", {}, {}],
    ["a per-request latency of 2 ms", {}, { requestDelay: 2 * ms }],
    ["a client limit that binds", { maxConcurrency: 6 }, {}],
  ];
  for (const [label, w, e] of cases) {
    const inp: SimulationInput = {
      ...input({ numRequests: 400, outputTokens: 20, arrival: { rate: 500, process: "constant", cv: 1 }, ...w }, e, 4),
    };
    const free = simulate(inp);
    const ordered = simulate(inp, { onStep: () => {} });
    assert.deepEqual(free.requests, ordered.requests, `${label}: request table`);
    assert.deepEqual(free.engines, ordered.engines, `${label}: engine counters`);
    assert.equal(free.endTime, ordered.endTime, `${label}: end time`);
    // Every request finished (the comparison covers whole runs).
    assert.equal(free.requests.finish.filter((t) => t > 0).length, 400, label);
  }
});
