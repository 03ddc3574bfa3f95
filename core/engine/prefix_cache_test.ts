import assert from "node:assert/strict";
import * as fc from "fast-check";
import { HostTier, PrefixCache } from "./prefix_cache.ts";

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

Deno.test("the host tier conserves blocks: every evicted block is held or dropped, never in both tiers (property-based)", () => {
  let offloads = 0, loads = 0;
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 6 }),
      // Operations: insert a fresh key, release one, take back (acquire) one, evict some, load a key from the host.
      fc.array(fc.tuple(fc.constantFrom("insert", "release", "acquire", "evict", "load"), fc.nat(12)), {
        minLength: 50,
        maxLength: 300,
      }),
      (capacity, ops) => {
        const host = new HostTier(capacity);
        const cache = new PrefixCache(host);
        const refs = new Map<number, number>(); // the device cache's keys and their references, as the test sees them
        let taken = 0;
        for (const [op, k] of ops) {
          if (op === "insert" && !refs.has(k) && !cache.has(k)) {
            if (host.has(k)) taken++;
            cache.insert(k);
            refs.set(k, 1);
          } else if (op === "release" && (refs.get(k) ?? 0) > 0) {
            cache.release(k);
            refs.set(k, refs.get(k)! - 1);
          } else if (op === "acquire" && refs.get(k) === 0) {
            cache.acquire(k);
            refs.set(k, 1);
          } else if (op === "evict") {
            const before = cache.evictable;
            const n = cache.evict(k % 4);
            assert.equal(cache.evictable, before - n);
            for (const [key, r] of refs) if (r === 0 && !cache.has(key)) refs.delete(key);
          } else if (op === "load" && host.has(k)) {
            // A prompt finds k in the host tier: it joins the device cache, referenced by the prompt.
            taken++;
            cache.insert(k);
            refs.set(k, 1);
          }
          assert.ok(host.size <= capacity, `host ${host.size} of ${capacity}`);
          for (let key = 0; key <= 12; key++) {
            assert.ok(!(cache.has(key) && host.has(key)), `block ${key} in both tiers`);
          }
          // Every block put in the host tier is still there, was dropped when it was full, or was loaded back.
          assert.equal(host.size, host.offloaded - host.dropped - taken);
        }
        offloads += host.offloaded;
        loads += taken;
      },
    ),
    { seed: 30, numRuns: 300 },
  );
  // The cases exercise both moves (a property over cases that never offload would hold vacuously).
  assert.ok(offloads > 500 && loads > 200, `${offloads} offloads, ${loads} loads`);
});
