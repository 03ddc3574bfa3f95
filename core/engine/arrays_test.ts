import assert from "node:assert/strict";
import { dropFront, empty } from "./arrays.ts";

Deno.test("empty() and dropFront() edit the array in place: what remains, in order", () => {
  const a = [1, 2, 3, 4, 5];
  dropFront(a, 2);
  assert.deepEqual(a, [3, 4, 5]);
  dropFront(a, 0);
  assert.deepEqual(a, [3, 4, 5]);
  dropFront(a, 3);
  assert.deepEqual(a, []);
  const b = ["x", "y"];
  const same = b;
  empty(b);
  assert.equal(b.length, 0);
  b.push("z");
  assert.equal(same, b);
  assert.deepEqual(same, ["z"]);
});
