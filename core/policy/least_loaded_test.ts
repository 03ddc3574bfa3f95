import assert from "node:assert/strict";
import { LeastLoadedRouter } from "./least_loaded.ts";
import { load as engine } from "./_fixtures.ts";
import type { EngineLoad } from "./router.ts";

const load = (index: number, active: number, routed: number, weight = 1e-4): EngineLoad =>
  engine(index, { active, routed, weight });

Deno.test("least_loaded: the fewest requests in flight win, however recently chosen", () => {
  const r = new LeastLoadedRouter();
  assert.equal(r.choose([load(0, 5, 1), load(1, 4, 99), load(2, 6, 0)]).index, 1);
});

Deno.test("least_loaded: engines with as many in flight take turns (the one chosen longest ago, never chosen first)", () => {
  const r = new LeastLoadedRouter();
  assert.equal(r.choose([load(0, 3, 7), load(1, 3, 2), load(2, 3, 5)]).index, 1);
  assert.equal(r.choose([load(0, 3, 7), load(1, 3, 2), load(2, 3, 0)]).index, 2);
  // Round robin over a pool kept level: choosing and marking in turn visits every engine once per round.
  const pool = [0, 1, 2, 3].map((i) => ({ ...load(i, 0, 0) }));
  const order: number[] = [];
  for (let k = 1; k <= 8; k++) {
    const e = r.choose(pool);
    order.push(e.index);
    (e as { routed: number }).routed = k;
  }
  assert.deepEqual(order, [0, 1, 2, 3, 0, 1, 2, 3]);
});

Deno.test("least_loaded: an engine twice as fast holds twice as many requests before a slower one is chosen", () => {
  const r = new LeastLoadedRouter();
  // Fast engine: 0.5e-4 s per token with 5 in flight -> 6 × 0.5 = 3; slow: 1e-4 with 2 -> 3 × 1 = 3, and the slow
  // one was chosen longer ago.
  assert.equal(r.choose([load(0, 5, 9, 0.5e-4), load(1, 2, 1, 1e-4)]).index, 1);
  assert.equal(r.choose([load(0, 4, 9, 0.5e-4), load(1, 2, 1, 1e-4)]).index, 0);
});

Deno.test("least_loaded: the turn never outweighs one request, up to 2^20 in flight and 2^32 choices", () => {
  const r = new LeastLoadedRouter();
  for (const a of [0, 1, 1000, 2 ** 20 - 2]) {
    for (const w of [1e-6, 3.7e-4, 0.02]) {
      assert.ok(r.key(load(0, a, 2 ** 32 - 1, w)) < r.key(load(1, a + 1, 0, w)), `${a} ${w}`);
      assert.ok(r.key(load(0, a, 1, w)) < r.key(load(1, a, 2, w)), `${a} ${w}`);
    }
  }
});
