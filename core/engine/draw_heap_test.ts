import assert from "node:assert/strict";
import { DrawHeap } from "./draw_heap.ts";

Deno.test("DrawHeap gives drawn requests back by arrival, ties in draw order, for random pushes and pops", () => {
  let seed = 7;
  const rand = (n: number) => (seed = (seed * 48271) % 2147483647) % n;
  for (let round = 0; round < 50; round++) {
    const h = new DrawHeap();
    const held: { arrival: number; input: number }[] = [];
    let id = 0;
    for (let op = 0; op < 200; op++) {
      if (held.length === 0 || rand(3) > 0) {
        const d = { arrival: rand(20), input: id++, output: 1 };
        h.push(d);
        held.push(d);
      } else {
        // The earliest arrival, and of those the first drawn.
        held.sort((a, b) => a.arrival - b.arrival || a.input - b.input);
        assert.equal(h.nextArrival, held[0].arrival);
        assert.equal(h.pop().input, held.shift()!.input);
      }
      assert.equal(h.size, held.length);
    }
  }
  assert.equal(new DrawHeap().nextArrival, Infinity);
});
