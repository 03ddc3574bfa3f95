import assert from "node:assert/strict";
import fc from "fast-check";
import { DDSketch } from "@datadog/sketches-js";
import { LatencyDistribution, SKETCH_RELATIVE_ACCURACY } from "./sketch.ts";

/** The ⌈q·n⌉-th smallest of `xs`. */
const rank = (xs: readonly number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
};

Deno.test("a distribution is exact up to its count, then within 0.5% of every exact quantile (property-based)", () => {
  fc.assert(
    fc.property(
      // Latencies from 1 ms to 100 s, log-uniform, and a share of identical values (a floor many requests hit).
      fc.array(fc.oneof(fc.double({ min: -3, max: 2, noNaN: true }).map((e) => 10 ** e), fc.constant(0.05)), {
        minLength: 1,
        maxLength: 3000,
      }),
      fc.integer({ min: 1, max: 500 }),
      (xs, exactUpTo) => {
        const d = new LatencyDistribution(exactUpTo);
        for (const x of xs) d.add(x);
        assert.equal(d.count, xs.length);
        assert.equal(d.exact, xs.length <= exactUpTo);
        for (const q of [0.5, 0.9, 0.95, 0.99, 0.999]) {
          const want = rank(xs, q), got = d.quantile(q);
          if (d.exact) assert.equal(got, want);
          else {
            // The guarantee, with room for the rounding of a bucket's bounds (1e-9 of it).
            assert.ok(Math.abs(got / want - 1) <= SKETCH_RELATIVE_ACCURACY * (1 + 1e-9), `q ${q}: ${got} vs ${want}`);
          }
        }
      },
    ),
    { numRuns: 200, seed: 29 },
  );
});

Deno.test("shards' distributions merged hold every value: the merged quantiles are the unsharded run's, within 0.5%", () => {
  let x = 12345;
  const next = () => (x = (x * 48271) % 2147483647) / 2147483647;
  const all = new LatencyDistribution(1000);
  const shards = Array.from({ length: 4 }, () => new LatencyDistribution(1000));
  const values: number[] = [];
  for (let i = 0; i < 20_000; i++) {
    const v = Math.exp(6 * next()) / 100;
    values.push(v);
    all.add(v);
    shards[i % 4].add(v);
  }
  const merged = new LatencyDistribution(1000);
  for (const s of shards) merged.merge(s);
  assert.equal(merged.count, 20_000);
  assert.equal(merged.exact, false);
  for (const q of [0.5, 0.99]) {
    // Both are sketches of the same values: the same buckets, the same estimate.
    assert.equal(merged.quantile(q), all.quantile(q));
    assert.ok(Math.abs(merged.quantile(q) / rank(values, q) - 1) <= SKETCH_RELATIVE_ACCURACY);
  }
});

Deno.test("runs of equal values go into the sketch weighted: the same buckets, count and extremes as one by one (property-based)", () => {
  fc.assert(
    fc.property(
      // Runs of a repeated value (fixed lengths, zero waits) among others: 9 runs or more, past the exact count of 8.
      fc.array(
        fc.tuple(
          fc.oneof(fc.constant(0), fc.constant(1024), fc.double({ min: 1e-3, max: 100, noNaN: true })),
          fc.integer({ min: 1, max: 5 }),
        ),
        {
          minLength: 9,
          maxLength: 60,
        },
      ),
      fc.integer({ min: 1, max: 50 }),
      (runs, cut) => {
        const values = runs.flatMap(([v, n]) => Array.from({ length: n }, () => v));
        const d = new LatencyDistribution(8);
        // Read part way (a read puts the pending run in), then go on adding.
        values.forEach((v, i) => {
          d.add(v);
          if (i === cut) assert.equal(d.count, i + 1);
        });
        const one = new DDSketch({ relativeAccuracy: SKETCH_RELATIVE_ACCURACY });
        for (const v of values) one.accept(v);
        const j = d.toJSON();
        const bins: [number, number][] = [];
        one.store.bins.forEach((c, i) => c > 0 && bins.push([i + one.store.offset, c]));
        assert.deepEqual(j.sketch, { bins, zeros: one.zeroCount });
        assert.equal(d.count, values.length);
        assert.equal(j.min, one.min);
        assert.equal(j.max, one.max);
      },
    ),
    { seed: 29, numRuns: 200 },
  );
});
