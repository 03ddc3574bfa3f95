import assert from "node:assert/strict";
import { EVENT_PRIORITY, EventQueue } from "./event_queue.ts";
import type { EventKind } from "./event_queue.ts";
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
  while (q.pop()) order.push(`${q.time}:${q.kind}:${q.target}`);
  assert.deepEqual(order, ["3:ENGINE_WAKE:2", "5:STEP_END:3", "5:STEP_END:4", "5:ARRIVAL:-1", "5:ENGINE_WAKE:1"]);
});

Deno.test("EventQueue pops 10,000 random events, pushed between pops, as a linear scan by (time, priority, push) does; nextTime is the earliest waiting time", () => {
  // From 0 and from past 2^32 µs (a run of 50 simulated days), where times differ in their high bits.
  for (const start of [0, 2 ** 40 + 12_345]) randomEvents(start);
});

/** The fuzz test above, its clock starting at `start` µs. */
function randomEvents(start: number): void {
  const q = new EventQueue();
  const kinds = Object.keys(EVENT_PRIORITY) as EventKind[];
  let x = 1;
  const rand = (n: number) => (x = (x * 48271) % 2147483647) % n;
  // The reference: the pending events in a list, the earliest found by a scan.
  type Ev = { time: number; kind: EventKind; target: number; version: number; seq: number };
  const pending: Ev[] = [];
  const before = (a: Ev, b: Ev) =>
    a.time !== b.time
      ? a.time < b.time
      : EVENT_PRIORITY[a.kind] !== EVENT_PRIORITY[b.kind]
      ? EVENT_PRIORITY[a.kind] < EVENT_PRIORITY[b.kind]
      : a.seq < b.seq;
  let seq = 0;
  let now = start;
  let pops = 0;
  const popBoth = () => {
    let m = 0;
    for (let i = 1; i < pending.length; i++) if (before(pending[i], pending[m])) m = i;
    const want = pending.splice(m, 1)[0];
    assert.equal(q.nextTime, want.time, `pop ${pops}: the earliest waiting time`);
    assert.ok(q.pop(), `pop ${pops}: the queue is empty`);
    assert.deepEqual(
      [q.time, q.kind, q.target, q.version],
      [want.time, want.kind, want.target, want.version],
      `pop ${pops}`,
    );
    now = q.time;
    pops++;
  };
  for (let i = 0; i < 10_000; i++) {
    // Never before the current time, as in a simulation; often at it; now and then far beyond it.
    const e = {
      time: now + (rand(10) === 0 ? rand(1_000_000) : rand(3) * rand(20)),
      kind: kinds[rand(kinds.length)],
      target: rand(8),
      version: rand(3),
      seq: seq++,
    };
    pending.push(e);
    q.push(e.time, e.kind, e.target, e.version);
    if (rand(3) !== 0) popBoth();
  }
  while (pending.length > 0) popBoth();
  assert.equal(q.pop(), false);
  assert.equal(q.size, 0);
  assert.equal(q.nextTime, Infinity);
  assert.equal(pops, 10_000);
}

Deno.test("Deque takes items at both ends and grows", () => {
  const d = new Deque<number>();
  for (let i = 0; i < 40; i++) d.push(i);
  d.pushFront(-1);
  assert.equal(d.size, 41);
  assert.equal(d.shift(), -1);
  assert.equal(d.shift(), 0);
  assert.equal(d.peek(), 1);
  // Indexed from the front, across the ring's wrap (the front was taken from its end).
  d.pushFront(-5);
  assert.deepEqual([d.at(0), d.at(1), d.at(39), d.at(40), d.at(-1)], [-5, 1, 39, undefined, undefined]);
});

Deno.test("BlockPool refuses to go over capacity or under zero", () => {
  const p = new BlockPool(4);
  p.allocate(4);
  assert.equal(p.free, 0);
  assert.throws(() => p.allocate(1), RangeError);
  const q = new BlockPool(4);
  assert.throws(() => q.release(1), RangeError);
});
