import assert from "node:assert/strict";
import { MonotoneCurve, MonotoneSurface } from "./monotone.ts";

Deno.test("MonotoneCurve: a slow glitch is lowered to the next larger size's time, not carried upward", () => {
  // 1, 2, 4, 8 tokens: 10, 30 (a glitch), 12, 20 µs.
  const c = new MonotoneCurve([1, 2, 4, 8], [10, 30, 12, 20]);
  assert.deepEqual(c.ys, [10, 12, 12, 20]);
  // Measured points that already rise are kept exactly.
  assert.equal(c.at(8), 20);
  // Between points: log-linear (4 → 8 tokens, 12 → 20 µs: at 5.657 tokens, √(12·20)).
  assert.ok(Math.abs(c.at(Math.SQRT2 * 4)! - Math.sqrt(12 * 20)) < 1e-9);
  // Beyond the last point: the edge's efficiency (time ∝ size); below the first: the same, or flat.
  assert.equal(c.at(16), 40);
  assert.equal(c.at(0.5), 5);
  assert.equal(new MonotoneCurve([1, 2], [10, 12], "flat").at(0.5), 10);
  // Unmeasured points are skipped; nothing measured is an empty curve.
  assert.deepEqual(new MonotoneCurve([1, 2, 4], [undefined, 5, NaN]).xs, [2]);
  assert.equal(new MonotoneCurve([1], [undefined]).at(1), undefined);
});

Deno.test("MonotoneSurface: every cell at most any larger cell's time, measured cells kept where they rise", () => {
  // rows: context 1k, 2k; cols: batch 1, 2, 4. The (1k, 2) cell is a 5× glitch.
  const s = new MonotoneSurface([1024, 2048], [1, 2, 4], [[10, 50, 14], [12, 16, 20]]);
  assert.equal(s.at(1024, 1), 10);
  assert.equal(s.at(1024, 2), 14); // lowered to (1k, 4)
  assert.equal(s.at(2048, 4), 20);
  // An unmeasured cell takes its row's nearest measured cell, in proportion to the batch.
  const gap = new MonotoneSurface([1024], [1, 2, 4], [[10, undefined, 30]]);
  assert.equal(gap.at(1024, 2), 20);
  // Property: nondecreasing along both axes, also between and beyond the grid.
  const sizes = [512, 800, 1024, 1500, 2048, 4096];
  const batches = [0.5, 1, 1.5, 2, 3, 4, 8];
  for (const r of sizes) {
    for (let j = 1; j < batches.length; j++) assert.ok(s.at(r, batches[j]) >= s.at(r, batches[j - 1]), `${r}`);
  }
  for (const b of batches) {
    for (let i = 1; i < sizes.length; i++) assert.ok(s.at(sizes[i], b) >= s.at(sizes[i - 1], b), `${b}`);
  }
});
