import assert from "node:assert/strict";
import { IntMemo } from "./int_memo.ts";

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
