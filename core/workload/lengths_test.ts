import assert from "node:assert/strict";
import { drawLength, maxLength, meanLength } from "./lengths.ts";
import type { LengthDist } from "./lengths.ts";
import { Rng } from "./rng.ts";
import { ArrivalClock } from "./arrival.ts";

const draws = (d: LengthDist, n = 100_000) => {
  const rng = new Rng(3, "lengths");
  return Array.from({ length: n }, () => drawLength(d, rng));
};
const mean = (x: number[]) => x.reduce((a, b) => a + b, 0) / x.length;
const std = (x: number[]) => {
  const m = mean(x);
  return Math.sqrt(mean(x.map((v) => (v - m) ** 2)));
};

Deno.test("drawLength() lognormal matches its mean and std within 2%", () => {
  const x = draws({ dist: "lognormal", mean: 1024, std: 512 });
  assert.ok(Math.abs(mean(x) / 1024 - 1) < 0.02, `mean ${mean(x)}`);
  assert.ok(Math.abs(std(x) / 512 - 1) < 0.02, `std ${std(x)}`);
});

Deno.test("drawLength() normal clamps to [min, max] and to at least 1", () => {
  const x = draws({ dist: "normal", mean: 50, std: 100, min: 10, max: 120 }, 10_000);
  assert.equal(Math.min(...x), 10);
  assert.equal(Math.max(...x), 120);
  const y = draws({ dist: "normal", mean: 2, std: 10 }, 10_000);
  assert.equal(Math.min(...y), 1);
});

Deno.test("drawLength() bins respect their weights within 1%", () => {
  const d: LengthDist = {
    dist: "bins",
    bins: [
      { min_tokens: 1, max_tokens: 100, weight: 0.25 },
      { min_tokens: 101, max_tokens: 1000, weight: 0.5 },
      { min_tokens: 1001, max_tokens: 4000, weight: 0.25 },
    ],
  };
  const x = draws(d);
  const share = (lo: number, hi: number) => x.filter((v) => v >= lo && v <= hi).length / x.length;
  assert.ok(Math.abs(share(1, 100) - 0.25) < 0.01);
  assert.ok(Math.abs(share(101, 1000) - 0.5) < 0.01);
  assert.ok(Math.abs(share(1001, 4000) - 0.25) < 0.01);
  assert.equal(maxLength(d), 4000);
  assert.equal(meanLength(d), 0.25 * 50.5 + 0.5 * 550.5 + 0.25 * 2500.5);
});

Deno.test("drawLength() uniform covers [min, max] inclusive", () => {
  const x = draws({ dist: "uniform", min: 5, max: 7 }, 3000);
  assert.deepEqual([...new Set(x)].sort(), [5, 6, 7]);
});

Deno.test("ArrivalClock follows a rate schedule segment by segment", () => {
  const c = new ArrivalClock({
    rate: Infinity,
    process: "poisson",
    cv: 1,
    schedule: [{ duration: 100, rate: 2 }, { duration: 100, rate: 20 }],
  }, new Rng(1, "arrivals"));
  const t = Array.from({ length: 2500 }, () => c.next() / 1e6);
  const inFirst = t.filter((x) => x < 100).length;
  const inSecond = t.filter((x) => x >= 100 && x < 200).length;
  assert.ok(Math.abs(inFirst - 200) < 45, `${inFirst} arrivals in the first 100 s`);
  assert.ok(Math.abs(inSecond - 2000) < 150, `${inSecond} arrivals in the next 100 s`);
  const constant = new ArrivalClock(
    { rate: Infinity, process: "constant", cv: 1, schedule: [{ duration: 1, rate: 2 }, { duration: 1, rate: 4 }] },
    new Rng(1, "arrivals"),
  );
  assert.deepEqual(Array.from({ length: 6 }, () => constant.next()), [
    0,
    500_000,
    1_000_000,
    1_250_000,
    1_500_000,
    1_750_000,
  ]);
});
