import assert from "node:assert/strict";
import { RoundRobinRouter } from "./round_robin.ts";
import { load } from "./_fixtures.ts";
import type { EngineLoad } from "./router.ts";

const engines = (indices: number[]): EngineLoad[] => indices.map((index) => load(index));

Deno.test("round robin cycles through the candidates in index order, from the engine after the last pick", () => {
  const r = new RoundRobinRouter();
  const all = engines([0, 1, 2, 3]);
  assert.deepEqual(Array.from({ length: 6 }, () => r.choose(all).index), [0, 1, 2, 3, 0, 1]);
  // A subset (engines that can serve a longer request): the first at or after the cursor (2), then wrapping.
  const some = engines([1, 3]);
  assert.deepEqual([r.choose(some).index, r.choose(some).index, r.choose(all).index], [3, 1, 2]);
  // A single candidate is always the pick.
  assert.equal(r.choose(engines([0])).index, 0);
});
