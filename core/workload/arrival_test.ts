import assert from "node:assert/strict";
import { ArrivalClock } from "./arrival.ts";
import { Rng } from "./rng.ts";

function gaps(process: "constant" | "poisson" | "gamma", rate: number, n: number, cv = 1, seed = 7): number[] {
  const c = new ArrivalClock({ rate, process, cv }, new Rng(seed, "arrivals"));
  const t = Array.from({ length: n }, () => c.next() / 1e6);
  return t.slice(1).map((x, i) => x - t[i]);
}

const mean = (x: number[]) => x.reduce((a, b) => a + b, 0) / x.length;
const cvOf = (x: number[]) => {
  const m = mean(x);
  return Math.sqrt(mean(x.map((v) => (v - m) ** 2))) / m;
};

Deno.test("ArrivalClock starts at t = 0 and spaces constant arrivals by 1/rate", () => {
  const c = new ArrivalClock({ rate: 4, process: "constant", cv: 1 }, new Rng(0, "arrivals"));
  assert.deepEqual([c.next(), c.next(), c.next()], [0, 250_000, 500_000]);
});

Deno.test("ArrivalClock puts every request at t = 0 for an infinite rate", () => {
  const c = new ArrivalClock({ rate: Infinity, process: "poisson", cv: 1 }, new Rng(0, "arrivals"));
  assert.deepEqual([c.next(), c.next()], [0, 0]);
});

Deno.test("ArrivalClock poisson gaps have mean 1/rate and cv 1", () => {
  const g = gaps("poisson", 10, 100_000);
  assert.ok(Math.abs(mean(g) / 0.1 - 1) < 0.01, `mean ${mean(g)}`);
  assert.ok(Math.abs(cvOf(g) - 1) < 0.02, `cv ${cvOf(g)}`);
});

Deno.test("ArrivalClock gamma gaps have the requested cv", () => {
  const g = gaps("gamma", 10, 100_000, 3);
  assert.ok(Math.abs(mean(g) / 0.1 - 1) < 0.03, `mean ${mean(g)}`);
  assert.ok(Math.abs(cvOf(g) / 3 - 1) < 0.05, `cv ${cvOf(g)}`);
});

Deno.test("Rng streams are reproducible per seed and independent per subsystem", () => {
  const a = new Rng(42, "arrivals");
  const b = new Rng(42, "arrivals");
  const r = new Rng(42, "routing");
  const xs = [a.uniform(), a.uniform()];
  assert.deepEqual([b.uniform(), b.uniform()], xs);
  assert.notDeepEqual([r.uniform(), r.uniform()], xs);
  assert.notDeepEqual(gaps("poisson", 1, 10, 1, 1), gaps("poisson", 1, 10, 1, 2));
});
