import assert from "node:assert/strict";
import { TransferManager } from "./transfer.ts";
import { Request } from "./request.ts";

const req = (id: number) => new Request(id, 100, 10, 0);

Deno.test("TransferManager: one transfer takes latency + bytes / bandwidth", () => {
  const m = new TransferManager([{ out: 1000, in: 1000 }, { out: 1000, in: 1000 }]); // bytes/µs
  const [t] = m.start(req(0), 0, 1, 1_000_000, 50, 0);
  assert.equal(m.finishTime(t, 0), 50 + 1000);
});

Deno.test("TransferManager: two transfers at once on one link each take twice as long", () => {
  const m = new TransferManager([{ out: 1000, in: 1000 }, { out: 1000, in: 1000 }, { out: 1000, in: 1000 }]);
  m.start(req(0), 0, 1, 1_000_000, 0, 0);
  const changed = m.start(req(1), 0, 2, 1_000_000, 0, 0); // same sender: shares its link
  assert.equal(changed.length, 2);
  for (const t of changed) assert.equal(m.finishTime(t, 0), 2000);
});

Deno.test("TransferManager: a finished transfer gives its share back", () => {
  const m = new TransferManager([{ out: 1000, in: 1000 }, { out: 1000, in: 1000 }]);
  const [a] = m.start(req(0), 0, 1, 500_000, 0, 0);
  const both = m.start(req(1), 0, 1, 2_000_000, 0, 0);
  const b = both.find((t) => t.request.id === 1)!;
  // Both at 500 B/µs: a ends at 1000 µs having sent 500,000; b has 1,500,000 left.
  assert.equal(m.finishTime(a, 0), 1000);
  const [b2] = m.finish(a, 1000);
  assert.equal(b2, b);
  assert.equal(m.finishTime(b, 1000), 1000 + 1500);
});

Deno.test("TransferManager: the slower end sets the rate", () => {
  const m = new TransferManager([{ out: 4000, in: 4000 }, { out: 1000, in: 1000 }]);
  const [t] = m.start(req(0), 0, 1, 1_000_000, 0, 0);
  assert.equal(m.finishTime(t, 0), 1000);
});
