import assert from "node:assert/strict";
import { IntMemo, PairMemo } from "./int_memo.ts";

Deno.test("IntMemo holds values by count, below and beyond its array, and fractional or negative keys too", () => {
  const m = new IntMemo<string>();
  assert.equal(m.get(3), undefined);
  m.set(3, "three");
  m.set(100_000, "large");
  m.set(2.5, "half");
  m.set(-1, "negative");
  assert.deepEqual([m.get(3), m.get(2), m.get(100_000), m.get(2.5), m.get(-1)], [
    "three",
    undefined,
    "large",
    "half",
    "negative",
  ]);
  assert.equal(m.size, 4);
  m.set(3, "again");
  assert.equal(m.size, 4);
  assert.equal(m.get(3), "again");
  m.clear();
  assert.equal(m.size, 0);
  assert.equal(m.get(3), undefined);
  assert.equal(m.get(100_000), undefined);
});

Deno.test("PairMemo holds numbers by two counts, in pages made as touched, ignores what it cannot hold, starts afresh past 512 pages", () => {
  const m = new PairMemo();
  assert.ok(Number.isNaN(m.get(3, 4000)));
  m.set(3, 4000, 1.5);
  m.set(3, 4001, 0);
  m.set(4, 4000, 2.5);
  assert.deepEqual([m.get(3, 4000), m.get(3, 4001), m.get(4, 4000)], [1.5, 0, 2.5]);
  assert.ok(Number.isNaN(m.get(3, 3999)), "a neighbour in the same page is not held");
  assert.equal(m.pages, 2);
  // Out of range or fractional keys, and NaN values, are not held.
  for (const [a, b] of [[-1, 5], [1024, 5], [2.5, 5], [5, 2.5], [5, -1], [5, 1 << 24]]) {
    m.set(a, b, 7);
    assert.ok(Number.isNaN(m.get(a, b)), `${a}, ${b}`);
  }
  m.set(6, 6, NaN);
  assert.equal(m.pages, 2);
  // Pages 2 … 511, then one more starts afresh with it alone.
  for (let p = 0; p < 510; p++) m.set(7, p * 4096, p);
  assert.equal(m.pages, 512);
  assert.equal(m.get(7, 509 * 4096), 509);
  m.set(8, 0, 9);
  assert.equal(m.pages, 1);
  assert.equal(m.get(8, 0), 9);
  assert.ok(Number.isNaN(m.get(3, 4000)));
});
