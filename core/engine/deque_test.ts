import assert from "node:assert/strict";
import fc from "fast-check";
import { Deque } from "./deque.ts";

Deno.test("a deque holds what an array model holds, in order, through any mix of pushes and shifts at both ends and replacements (property-based)", () => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant("push" as const), x: fc.integer() }),
    fc.record({ kind: fc.constant("pushFront" as const), x: fc.integer() }),
    fc.record({ kind: fc.constant("shift" as const), x: fc.constant(0) }),
    fc.record({ kind: fc.constant("set" as const), x: fc.integer() }),
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
      const d = new Deque<number>();
      const model: number[] = [];
      for (const { kind, x } of ops) {
        if (kind === "push") [d.push(x), model.push(x)];
        else if (kind === "pushFront") [d.pushFront(x), model.unshift(x)];
        else if (kind === "set") {
          // Replaces the item at x mod size (a miss throws, and changes nothing).
          if (model.length === 0) assert.throws(() => d.set(0, x), RangeError);
          else {
            const i = Math.abs(x) % model.length;
            d.set(i, x);
            model[i] = x;
          }
        } else assert.equal(d.shift(), model.shift());
        assert.equal(d.size, model.length);
        assert.equal(d.peek(), model[0]);
        for (let i = -1; i <= model.length; i++) assert.equal(d.at(i), model[i]);
      }
    }),
  );
});
