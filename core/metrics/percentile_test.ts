import assert from "node:assert/strict";
import { quantileSorted } from "./percentile.ts";

Deno.test("quantileSorted() interpolates linearly between ranks, as numpy.percentile", () => {
  const a = [1, 2, 3, 4];
  // numpy.percentile([1, 2, 3, 4], [50, 75, 90, 99]) = [2.5, 3.25, 3.7, 3.97]
  assert.equal(quantileSorted(a, 0.5), 2.5);
  assert.equal(quantileSorted(a, 0.75), 3.25);
  assert.ok(Math.abs(quantileSorted(a, 0.9) - 3.7) < 1e-12);
  assert.ok(Math.abs(quantileSorted(a, 0.99) - 3.97) < 1e-12);
  assert.equal(quantileSorted([7], 0.99), 7);
  assert.ok(Number.isNaN(quantileSorted([], 0.5)));
});
