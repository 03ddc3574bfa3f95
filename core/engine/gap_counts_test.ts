import assert from "node:assert/strict";
import fc from "fast-check";
import { GapCounts } from "./gap_counts.ts";

Deno.test("gap counts: the counts a map would hold, whatever the order, through many insertions and large values", () => {
  const entry = fc.tuple(
    fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 2 ** 40 })),
    fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 2 ** 22 })),
  );
  fc.assert(
    fc.property(fc.array(entry, { maxLength: 12_000 }), (entries) => {
      const g = new GapCounts();
      const want = new Map<number, number>();
      for (const [gap, n] of entries) {
        g.add(gap, n);
        want.set(gap, (want.get(gap) ?? 0) + n);
      }
      const got = g.toMap();
      assert.deepEqual([...got].sort((a, b) => a[0] - b[0]), [...want].sort((a, b) => a[0] - b[0]));
      // Asking again changes nothing; counting on after asking goes on from there.
      assert.deepEqual(g.toMap(), got);
      g.add(3, 2);
      assert.equal(g.toMap().get(3), (want.get(3) ?? 0) + 2);
    }),
    { seed: 29, numRuns: 60 },
  );
});

Deno.test("gap counts: a drifting gap, and one far below, come out in ascending gap order", () => {
  const g = new GapCounts();
  for (let i = 0; i < 10_000; i++) g.add(5000 + (i >> 6), 3);
  g.add(12, 1);
  const m = g.toMap();
  assert.equal(m.size, 157 + 1);
  assert.equal(m.get(5000), 64 * 3);
  assert.equal([...m.keys()][0], 12);
  assert.equal([...m.values()].reduce((a, b) => a + b, 0), 30_001);
});
