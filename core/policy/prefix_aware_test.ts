import assert from "node:assert/strict";
import { Rng } from "../workload/rng.ts";
import { load } from "./_fixtures.ts";
import { LLM_D_WEIGHTS, PrefixAwareRouter } from "./prefix_aware.ts";
import { SessionAffinityRouter } from "./session_affinity.ts";

const request = { input: 1000 };

Deno.test("prefix-aware routing sums llm-d's scorers: 3 × prefix hit + 2 × normalized queue + 2 × free KV", () => {
  const r = new PrefixAwareRouter(new Rng(1, "routing"));
  assert.deepEqual(LLM_D_WEIGHTS, { prefix: 3, queue: 2, kv: 2 });
  // Engine 1 holds half the prompt: 1.5 + 2 + 2 = 5.5 against engine 0's 0 + 2 + 2 = 4.
  assert.equal(r.choose([load(0), load(1, { hit: 0.5 })], request).index, 1);
  // Its queue is the longest: (max − q) / (max − min) = 0, so 1.5 + 0 + 2 = 3.5 loses to 4.
  assert.equal(r.choose([load(0, { queued: 1 }), load(1, { hit: 0.5, queued: 3 })], request).index, 0);
  // A fuller KV cache costs 2 × its use: 3 × 0.2 = 0.6 of prefix against 2 × 0.4 = 0.8 of KV.
  assert.equal(r.choose([load(0), load(1, { hit: 0.2, kvUsage: 0.4 })], request).index, 0);
  assert.equal(r.choose([load(0), load(1, { hit: 0.3, kvUsage: 0.4 })], request).index, 1);
  // Without the request, no prefix term: the emptier KV cache wins.
  assert.equal(r.choose([load(0), load(1, { hit: 1, kvUsage: 0.1 })]).index, 0);
});

Deno.test("prefix-aware routing draws among tied engines from the routing stream (seeded), and weights can be set", () => {
  const picks = (seed: number) => {
    const r = new PrefixAwareRouter(new Rng(seed, "routing"));
    return Array.from({ length: 40 }, () => r.choose([load(0), load(1), load(2)], request).index);
  };
  assert.deepEqual(picks(5), picks(5));
  assert.deepEqual(new Set(picks(5)), new Set([0, 1, 2]), "every tied engine is drawn");
  const queueOnly = new PrefixAwareRouter(new Rng(1, "routing"), { prefix: 0, queue: 1, kv: 0 });
  assert.equal(queueOnly.choose([load(0, { queued: 2, hit: 1 }), load(1, { queued: 1 })], request).index, 1);
});

Deno.test("session affinity sends a turn to its session's engine while it is a candidate, else least-loaded", () => {
  const r = new SessionAffinityRouter();
  const pool = [load(0, { active: 5 }), load(1, { active: 1 }), load(2, { active: 9 })];
  assert.equal(r.choose(pool, { input: 10, session: { engine: 2 } }).index, 2);
  assert.equal(r.choose(pool, { input: 10, session: { engine: -1 } }).index, 1, "a first turn goes least-loaded");
  assert.equal(
    r.choose(pool.slice(0, 2), { input: 10, session: { engine: 2 } }).index,
    1,
    "its engine cannot serve it",
  );
  assert.equal(r.choose(pool, { input: 10 }).index, 1, "no session");
});
