/**
 * Invariants of every run (see core/engine/simulator.ts):
 * 1. every request finishes exactly once or is reported unservable;
 * 2. KV blocks in use stay within [0, capacity];
 * 3. the clock never goes back; an engine runs one step at a time;
 * 4. causality: arrival ≤ send ≤ first token ≤ finish;
 * 5. the summary's token totals equal the workload's.
 */
import assert from "node:assert/strict";
import { simulate } from "../core/engine/simulator.ts";
import { summarize } from "../core/metrics/summary.ts";
import { runFiles } from "../core/run.ts";
import { input, linearCost } from "../core/engine/_fixtures.ts";
import type { SimulationInput, StepRecord } from "../core/engine/types.ts";
import { maxLength } from "../core/workload/lengths.ts";
import type { LengthDist } from "../core/workload/lengths.ts";
import { ROOT } from "./_helpers.ts";

function checkRun(inp: SimulationInput, label: string): void {
  const steps: StepRecord[] = [];
  const r = simulate(inp, { onStep: (s) => steps.push(s) });
  const t = r.requests;
  const w = inp.workload;
  let finished = 0;
  for (let i = 0; i < t.count; i++) {
    if (t.engine[i] >= 0) {
      finished++;
      assert.ok(
        t.arrival[i] <= t.send[i] && t.send[i] < t.firstToken[i] && t.firstToken[i] <= t.finish[i],
        `${label}: causality of ${i}`,
      );
    } else {
      assert.equal(t.finish[i], -1, `${label}: an unservable request never finishes`);
    }
  }
  const unservable = [...r.unservable.values()].reduce((a, b) => a + b, 0);
  assert.equal(finished + unservable, w.numRequests, `${label}: conservation`);
  assert.equal(r.engines.reduce((a, e) => a + e.served, 0), finished, `${label}: each finished once`);
  const lastEnd = new Map<number, number>();
  let lastStart = 0;
  for (const s of steps) {
    const cap = inp.engines[s.engine].kvBlocks;
    assert.ok(s.kvBlocks >= 0 && s.kvBlocks <= cap, `${label}: KV ${s.kvBlocks} of ${cap}`);
    assert.ok(s.start >= lastStart, `${label}: clock monotone`);
    assert.ok(s.start >= (lastEnd.get(s.engine) ?? 0), `${label}: one step at a time`);
    assert.ok(s.seqs >= 1 && s.prefillTokens + s.decodeTokens >= 1);
    lastStart = s.start;
    lastEnd.set(s.engine, s.start + s.duration);
  }
  const sum = summarize(r);
  assert.equal(sum.overall.total_requests, finished);
  let inTok = 0, outTok = 0;
  for (let i = 0; i < t.count; i++) {
    assert.ok(t.input[i] >= 1 && t.input[i] <= maxLength(w.input), `${label}: prompt length of ${i}`);
    assert.ok(t.output[i] >= 1 && t.output[i] <= maxLength(w.output), `${label}: output length of ${i}`);
    if (t.engine[i] >= 0) [inTok, outTok] = [inTok + t.input[i], outTok + t.output[i]];
  }
  assert.equal(sum.overall.total_input_tokens, inTok, `${label}: input tokens`);
  assert.equal(sum.overall.total_output_tokens, outTok, `${label}: output tokens`);
  if (w.input.dist === "fixed") assert.equal(inTok, finished * w.input.value);
  if (w.output.dist === "fixed") assert.equal(outTok, finished * w.output.value);
}

Deno.test("invariants hold across 40 seeded random deployments, with and without KV pressure", () => {
  let x = 12345;
  const rand = (n: number) => (x = (x * 48271) % 2147483647) % n;
  for (let k = 0; k < 40; k++) {
    const inputTokens = 1 + rand(3000);
    const outputTokens = 1 + rand(300);
    const blockSize = [1, 16, 128][rand(3)];
    const need = Math.ceil((inputTokens + outputTokens - 1) / blockSize);
    const kvBlocks = rand(4) === 0 ? Math.max(1, need - 1 - rand(5)) : need + rand(need * 6); // sometimes unservable
    const inp = input(
      {
        numRequests: 1 + rand(300),
        inputTokens,
        outputTokens,
        seed: k,
        maxConcurrency: 1 + rand(200),
        arrival: {
          rate: [Infinity, 5, 50][rand(3)],
          process: (["constant", "poisson", "gamma"] as const)[rand(3)],
          cv: 2,
        },
      },
      {
        kvBlocks,
        blockSize,
        maxTokens: 64 + rand(8192),
        maxSeqs: 1 + rand(64),
        chunkedPrefill: rand(4) !== 0,
        cost: linearCost(0.2 + rand(10) / 10, 0.001),
      },
      1 + rand(4),
    );
    const routing = (["least_loaded", "round_robin", "least_kv", "random"] as const)[rand(4)];
    // Every third case draws lengths from a distribution bounded by the fixed ones.
    const dists: LengthDist[] = [
      { dist: "uniform", min: 1, max: inputTokens },
      { dist: "lognormal", mean: inputTokens / 2, std: inputTokens / 2, max: inputTokens },
      { dist: "bins", bins: [{ min_tokens: 1, max_tokens: inputTokens, weight: 1 }] },
    ];
    const workload = k % 3 === 0
      ? { ...inp.workload, input: dists[rand(3)], output: { dist: "uniform" as const, min: 1, max: outputTokens } }
      : inp.workload;
    checkRun({ ...inp, workload, routing }, `case ${k}`);
  }
});

Deno.test("invariants hold for the bundled example and the KV-pressure scenario", () => {
  const out = runFiles([`${ROOT}examples/instances.yaml`], `${ROOT}examples/common.yaml`);
  checkRun(out.plan.input, "bundled example");
  const kv = runFiles(
    [`${ROOT}scenarios/configs/l40s_tp1_x1.yaml`],
    `${ROOT}scenarios/configs/llama8b_kv_pressure.yaml`,
  );
  assert.ok(kv.summary.preemptions > 0);
  checkRun(kv.plan.input, "KV pressure");
});
