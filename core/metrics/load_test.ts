import assert from "node:assert/strict";
import { GROWTH_SHARE, growthInterval, isBacklog, KEEP_UP_TOLERANCE, loadStats, middleRate } from "./load.ts";
import type { RequestTable } from "../engine/types.ts";

/** A table of `n` requests arriving every `gap` µs, sent and finished as the functions say. */
function table(
  n: number,
  gap: number,
  send: (a: number, i: number) => number,
  finish: (s: number, i: number) => number,
) {
  const arrival = Float64Array.from({ length: n }, (_, i) => i * gap);
  const sendT = arrival.map((a, i) => send(a, i));
  const fin = sendT.map((s, i) => finish(s, i));
  return {
    count: n,
    arrival,
    send: sendT,
    firstToken: sendT.map((s) => s + 1),
    finish: fin,
    input: new Int32Array(n).fill(10),
    output: new Int32Array(n).fill(10),
    preemptions: new Int32Array(n),
    engine: new Int32Array(n),
  } satisfies RequestTable;
}

Deno.test("middleRate() counts events per second over the middle 80%, and Infinity when all happen at once", () => {
  assert.equal(middleRate(Float64Array.from({ length: 101 }, (_, i) => i * 1e5)), 10);
  assert.equal(middleRate([0, 0, 0]), Infinity);
  assert.equal(middleRate([5]), Infinity);
});

Deno.test("loadStats() sees a deployment that keeps up: achieved = offered whatever the latency", () => {
  // 10 req/s, every request takes 3 s: completions lag by a constant and the rates match.
  const l = loadStats(table(200, 1e5, (a) => a, (s) => s + 3e6));
  assert.ok(Math.abs(l.offeredRate - 10) < 1e-9);
  assert.ok(Math.abs(l.achievedRate - 10) < 1e-9);
  assert.equal(l.queueGrowth, 0);
  assert.equal(l.keepsUp, true);
  // Kept up: it sustains at least the offered rate, no upper end known.
  assert.deepEqual(l.sustainable, { low: l.offeredRate, high: Infinity });
});

Deno.test("loadStats() sees a client queue that grows: achieved 6 of 10 req/s, the queue growing 2/3 s per s", () => {
  // The deployment serves one request every 1/6 s; the client holds the rest back.
  const l = loadStats(table(300, 1e5, (a, i) => Math.max(a, i * 1e6 / 6), (s) => s + 1e6));
  assert.ok(Math.abs(l.achievedRate - 6) < 1e-6, `${l.achievedRate}`);
  assert.ok(Math.abs(l.queueGrowth - 2 / 3) < 1e-6, `${l.queueGrowth}`);
  assert.equal(l.keepsUp, false);
  // The highest sustained rate lies between what it achieved under this overload and what was offered.
  assert.ok(Math.abs(l.sustainable.low - 6) < 1e-6 && Math.abs(l.sustainable.high - 10) < 1e-6, `${l.sustainable}`);
});

Deno.test("loadStats(): a deployment that finishes requests slower than they come does not keep up, once it shows", () => {
  // The first token at once, the last ever later (a batch taking requests in faster than it finishes them).
  const at = (ratio: number, n = 400) => loadStats(table(n, 1e5, (a) => a, (_s, i) => 1e6 + i * 1e5 / ratio));
  // 2.5% short over 400 requests: the time to the last token grows by 0.026 s per s, well above the floor.
  const short = at(1 - 0.025);
  assert.equal(short.keepsUp, false);
  assert.ok(short.queueGrowthCi !== undefined);
  // 0.2% short: within the floor of 0.005 s per s.
  assert.equal(at(1 - 0.002).keepsUp, true);
  // Too few requests for the test (fewer than 40 in the later half): the rates decide, with their 5% tolerance.
  assert.equal(at(1 - KEEP_UP_TOLERANCE / 2, 60).keepsUp, true);
  assert.equal(at(1 - 2 * KEEP_UP_TOLERANCE, 60).keepsUp, false);
  assert.equal(at(1 - 0.025, 60).queueGrowthCi, undefined);
});

Deno.test("loadStats() of a closed loop (all requests at t = 0) has an infinite offered rate and keeps up", () => {
  const l = loadStats(table(50, 0, (_a, i) => i * 1e5, (s) => s + 1e6));
  assert.equal(l.offeredRate, Infinity);
  assert.ok(Math.abs(l.achievedRate - 10) < 1e-9);
  assert.equal(l.keepsUp, true);
});

Deno.test("loadStats() sees a backlog in a run too short for a steady state, though completions bunch up at the end", () => {
  // 200 requests in 3 s: the first token comes later and later (the queue builds), then all finish together.
  const t = table(200, 15_000, (a) => a, () => 10e6);
  const first = t.arrival.map((a, i) => a + 50_000 + i * 12_000);
  const l = loadStats({ ...t, firstToken: first });
  assert.ok(Math.abs(l.queueGrowth - 0.8) < 1e-9, `${l.queueGrowth}`);
  // All 200 are done at 10 s: 20 req/s over the run, below the 66.7 / 1.8 = 37 req/s the queue growth implies.
  assert.ok(Math.abs(l.achievedRate - 20) < 1e-9, `${l.achievedRate} of ${l.offeredRate}`);
  assert.equal(l.keepsUp, false);
  // Finishing as they arrive, but with the same growing queue: the queue growth bounds the achieved rate.
  const g = loadStats({ ...t, firstToken: first, finish: first.map((f) => f + 1e6) });
  assert.ok(Math.abs(g.achievedRate - g.offeredRate / 1.8) < 1e-9, `${g.achievedRate} of ${g.offeredRate}`);
  assert.equal(g.keepsUp, false);
});

Deno.test("loadStats(): a wait drifting by less than one arrival gap and one decode step is a sawtooth, not a backlog", () => {
  // Evenly spaced arrivals (4 req/s) beat against the engine's step cadence: the time to the first token drifts
  // from 22 to 28 ms over the run (then would wrap), a perfect line a fit finds with a zero-width interval.
  const n = 3000;
  const t = table(n, 250_000, (a) => a, (s) => s);
  const first = t.arrival.map((a, i) => a + 22_000 + i * 2);
  const l = loadStats({
    ...t,
    firstToken: first,
    finish: first.map((f) => f + 127 * 7_000),
    output: new Int32Array(n).fill(128),
  });
  const fit = growthInterval({ ...t, firstToken: first, finish: first.map((f) => f + 127 * 7_000) }, n / 2)!;
  // 6 µs of wait per 750 ms of arrivals rises by ~2.9 ms over the window: more than a tenth of the 25 ms wait …
  assert.ok(fit.ci[0] > 0 && fit.ci[0] * fit.span > GROWTH_SHARE * fit.level);
  assert.equal(isBacklog(fit), true);
  // … but far less than the 250 ms between arrivals plus a 7 ms step: the queue has not grown by a request.
  assert.equal(l.keepsUp, true);
  assert.equal(l.decided, true);
});

Deno.test("growthInterval() leaves out the drain: requests whose first token came within a mean decode time of the last", () => {
  // 10 req/s; each request decodes for 20 s, and its time to the last token grows by 0.05 s per s (a batch
  // that grows). Once arrivals stop the batch empties, and the last 20 s of requests finish sooner.
  const n = 6000;
  const grow = (i: number) => 20e6 + i * 1e5 * 0.05;
  const steady = table(n, 1e5, (a) => a, (s, i) => s + 1 + grow(i));
  const drained = steady.finish.map((f, i) => (i >= n - 200 ? f - (i - (n - 200)) * 1e5 : f));
  const a = growthInterval(steady, n / 2, "finish")!;
  const b = growthInterval({ ...steady, finish: drained }, n / 2, "finish")!;
  assert.ok(Math.abs(a.ci[0] - 0.05) < 1e-9 && Math.abs(a.ci[1] - 0.05) < 1e-9, `${a.ci}`);
  // The drained requests shorten the mean decode time a little, so the window ends a little later: the same line.
  assert.ok(Math.abs(b.ci[0] - 0.05) < 1e-9 && Math.abs(b.ci[1] - 0.05) < 1e-9, `${b.ci}`);
  assert.equal(loadStats({ ...steady, finish: drained }).keepsUp, false);
});
