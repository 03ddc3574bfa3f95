import assert from "node:assert/strict";
import { PrefixCache } from "./prefix_cache.ts";

Deno.test("prefix cache: dead runs released one after another evict as one, keeping their place among keyed blocks", () => {
  const c = new PrefixCache();
  for (const key of [1, 2]) c.insert(key);
  c.release(1); // the oldest unreferenced block
  c.holdOwn(5);
  c.releaseDead([10, 11], 0, 2, true); // 2 dead blocks, then 3 more right behind: one run of 5
  c.releaseDead([12, 13, 14], 0, 3, true);
  c.release(2); // the newest
  assert.equal(c.evictable, 7);
  assert.equal(c.evict(1), 1);
  assert.ok(!c.has(1) && c.has(2), "the keyed block released first goes first");
  assert.equal(c.evict(4), 4); // from the front of the run, the rest staying in front
  assert.ok(c.has(2), "the newest stays behind the run");
  assert.equal(c.evict(2), 2); // the run's last block, then the keyed block behind it
  assert.ok(!c.has(2));
  assert.equal(c.evictable, 0);
  assert.equal(c.evict(1), 0);
});
