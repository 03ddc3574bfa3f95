import assert from "node:assert/strict";
import { EventQueue } from "./event_queue.ts";
import { Deque } from "./deque.ts";
import { BlockPool } from "./kv_cache.ts";

Deno.test("EventQueue orders by time, then priority table, then insertion", () => {
  const q = new EventQueue();
  q.push(5, "ENGINE_WAKE", 1);
  q.push(5, "ARRIVAL");
  q.push(3, "ENGINE_WAKE", 2);
  q.push(5, "STEP_END", 3);
  q.push(5, "STEP_END", 4);
  const order = [];
  for (let e = q.pop(); e; e = q.pop()) order.push(`${e.time}:${e.kind}:${e.target}`);
  assert.deepEqual(order, ["3:ENGINE_WAKE:2", "5:STEP_END:3", "5:STEP_END:4", "5:ARRIVAL:-1", "5:ENGINE_WAKE:1"]);
});

Deno.test("EventQueue pops 10,000 random events in order", () => {
  const q = new EventQueue();
  let x = 1;
  for (let i = 0; i < 10_000; i++) {
    x = (x * 48271) % 2147483647;
    q.push(x % 1000, "ARRIVAL");
  }
  let last = -1;
  for (let e = q.pop(); e; e = q.pop()) {
    assert.ok(e.time >= last);
    last = e.time;
  }
});

Deno.test("Deque takes items at both ends and grows", () => {
  const d = new Deque<number>();
  for (let i = 0; i < 40; i++) d.push(i);
  d.pushFront(-1);
  assert.equal(d.size, 41);
  assert.equal(d.shift(), -1);
  assert.equal(d.shift(), 0);
  assert.equal(d.peek(), 1);
});

Deno.test("BlockPool refuses to go over capacity or under zero", () => {
  const p = new BlockPool(4);
  p.allocate(4);
  assert.equal(p.free, 0);
  assert.throws(() => p.allocate(1), RangeError);
  const q = new BlockPool(4);
  assert.throws(() => q.release(1), RangeError);
});
