/**
 * Same inputs and seed, same bytes; another seed, other numbers.
 */
import assert from "node:assert/strict";
import { runCli } from "./_helpers.ts";

Deno.test("the same seed twice gives byte-identical stdout and JSON", async () => {
  const [a, b] = await Promise.all([
    runCli(["--seed", "5", "--format", "json"]),
    runCli(["--seed", "5", "--format", "json"]),
  ]);
  assert.equal(a.code, 0);
  assert.equal(a.stdout, b.stdout);
  const [c, d] = await Promise.all([runCli(["--seed", "5"]), runCli(["--seed", "5"])]);
  assert.equal(c.stdout, d.stdout);
});

Deno.test("poisson arrivals with a different seed give different numbers", async () => {
  const [a, b] = await Promise.all([
    runCli(["--seed", "1", "--format", "json"]),
    runCli(["--seed", "2", "--format", "json"]),
  ]);
  const ja = JSON.parse(a.stdout);
  const jb = JSON.parse(b.stdout);
  assert.notEqual(ja.per_metric_summary["TTFT(s)"].P99, jb.per_metric_summary["TTFT(s)"].P99);
  assert.notEqual(ja.overall_summary["benchmark_duration(s)"], jb.overall_summary["benchmark_duration(s)"]);
  // The workload itself is the same: only timing differs.
  assert.equal(ja.overall_summary.total_output_tokens, jb.overall_summary.total_output_tokens);
});
