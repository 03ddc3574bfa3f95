/**
 * The scenario framework: what a failing assertion tells a reviewer, and
 * what a bad scenario file is told.
 */
import assert from "node:assert/strict";
import { LoadedConfigs, loadScenario, runScenario } from "../core/scenario/mod.ts";
import { InputError } from "../core/config/errors.ts";
import { COMMON_OK, INSTANCE_OK, ROOT, writeTemp } from "./_helpers.ts";

const scenario = (expect: string) => `name: tiny\ninstance_config: i.yaml\ncommon_config: c.yaml\nexpect:\n${expect}`;

Deno.test("runScenario() reports a failed assertion with file:line, the bound and the actual value", () => {
  const dir = writeTemp({
    "i.yaml": INSTANCE_OK,
    "c.yaml": COMMON_OK,
    "s.yaml": scenario('  total_requests: "== 50"\n  ttft.p99: "< 0.000001"\n'),
  });
  const run = runScenario(loadScenario(`${dir}s.yaml`));
  assert.equal(run.pass, false);
  assert.equal(run.checks[0].pass, true);
  const failed = run.checks[1];
  assert.equal(failed.pass, false);
  assert.match(
    failed.message,
    new RegExp(
      `^${dir}s\\.yaml:6:3: expect\\.ttft\\.p99: expected TTFT_FROM_ARRIVAL\\(s\\)\\.P99 < 0\\.000001, got 0\\.0\\d+$`,
    ),
  );
});

Deno.test("loadScenario() resolves config paths against the scenario file and accepts every metric spelling", () => {
  const dir = writeTemp({
    "i.yaml": INSTANCE_OK,
    "c.yaml": COMMON_OK,
    "s.yaml": scenario(
      '  TTFT(s).P99: "< 1"\n  tpot.median: "< 1"\n  e2e.mean: "< 100"\n  output_token_throughput.p90: "> 0"\n' +
        '  output_token_throughput: "> 0"\n  request_throughput(req/s): ">= 0.1"\n  benchmark_duration: "< 1e9"\n' +
        "  total_requests: 50\n",
    ),
  });
  const s = loadScenario(`${dir}s.yaml`);
  assert.deepEqual(s.instancePaths, [`${dir}i.yaml`]);
  assert.deepEqual(s.assertions.map((a) => a.metric.name), [
    "TTFT(s).P99",
    "TPOT(s).MEDIAN",
    "E2E_FROM_ARRIVAL(s).AVERAGE",
    "OUTPUT_TOKEN_THROUGHPUT(tok/s).P90",
    "output_token_throughput(tok/s)",
    "request_throughput(req/s)",
    "benchmark_duration(s)",
    "total_requests",
  ]);
  assert.deepEqual(s.assertions[6].bound, { op: "<", rhs: { kind: "num", value: 1e9 }, text: "< 1e9" });
  // A bare value on a count means equality.
  assert.deepEqual(s.assertions[7].bound, { op: "==", rhs: { kind: "num", value: 50 }, text: "== 50", bare: true });
});

Deno.test("loadScenario(): a bare value on a latency or a duration asks for an operator, at its key", () => {
  for (const [written, shown] of [["0.5", "0.5"], ['"500ms"', "500ms"], ['"0.5"', "0.5"]]) {
    const dir = writeTemp({
      "i.yaml": INSTANCE_OK,
      "c.yaml": COMMON_OK,
      "s.yaml": scenario(`  ttft.p99: ${written}\n`),
    });
    assert.throws(
      () => loadScenario(`${dir}s.yaml`),
      (e) =>
        e instanceof InputError &&
        e.message ===
          `${dir}s.yaml:5:13: expect.ttft.p99: a bound on a time needs an operator: write "< ${shown}" or "<= ${shown}" (or "== ${shown}" for exact equality)`,
    );
  }
});

Deno.test("loadScenario() rejects an unknown metric with a suggestion", () => {
  const dir = writeTemp({ "s.yaml": scenario('  tpot.medain: "< 1"\n') });
  assert.throws(
    () => loadScenario(`${dir}s.yaml`),
    (e) =>
      e instanceof InputError &&
      e.message === `${dir}s.yaml:5:3: expect.tpot.medain: unknown metric 'tpot.medain'; did you mean 'tpot.median'?`,
  );
});

Deno.test("P99.9 is named with its dot, in either spelling and any case, and reads that quantile", () => {
  const dir = writeTemp({
    "i.yaml": INSTANCE_OK,
    "c.yaml": COMMON_OK,
    "s.yaml": scenario('  ttft.p99.9: "< 100"\n  TTFT(s).P99.9: "< 100"\n  itl.p999: "< 100"\n'),
  });
  const s = loadScenario(`${dir}s.yaml`);
  assert.deepEqual(s.assertions.map((a) => a.metric.name), [
    "TTFT_FROM_ARRIVAL(s).P99.9",
    "TTFT(s).P99.9",
    "ITL(s).P99.9",
  ]);
  const r = runScenario(s);
  assert.equal(r.checks[1].actual, r.output.summary.perMetric["TTFT(s)"]["P99.9"]);
  assert.ok(r.checks[1].actual >= r.output.summary.perMetric["TTFT(s)"].P99);
});

Deno.test("loadScenario() rejects a bound that is not '<op> <number>'", () => {
  const dir = writeTemp({ "s.yaml": scenario('  ttft.p99: "fast"\n') });
  assert.throws(
    () => loadScenario(`${dir}s.yaml`),
    /s\.yaml:5:13: expect\.ttft\.p99: expected "<op> <expression>" with op one of/,
  );
});

Deno.test("every bundled scenario loads and names existing config files", () => {
  const dir = `${ROOT}scenarios/`;
  const files = [...Deno.readDirSync(dir)].filter((e) => e.name.endsWith(".yaml"));
  assert.ok(files.length >= 5, `${files.length} scenarios`);
  for (const f of files) {
    const s = loadScenario(dir + f.name);
    const checks = s.assertions.length + s.perPoint.length + s.slos.length + s.measured.length + (s.baseline ? 1 : 0);
    assert.ok(checks >= 1, `${f.name} checks something`);
    for (const p of [...s.instancePaths, s.commonPath ?? s.file]) assert.ok(Deno.statSync(p).isFile, p);
  }
});

Deno.test("runScenario() with LoadedConfigs reuses each point's loaded configuration and gives the same runs, seed by seed", () => {
  const dir = writeTemp({
    "i.yaml": INSTANCE_OK,
    "c.yaml": COMMON_OK,
    "s.yaml": "name: sweep\ninstance_config: i.yaml\ncommon_config: c.yaml\nseeds: 2\n" +
      "overrides: {load_gen.arrival_process: poisson}\n" +
      'sweep: {load_gen.request_rate: [2, 40]}\nexpect_per_point: {total_requests: "== 50"}\n',
  });
  const s = loadScenario(`${dir}s.yaml`);
  const figures = (r: ReturnType<typeof runScenario>) =>
    r.points.map((p) => p.outputs.map((o) => [p.values[0], o.assembled.input.workload.seed, o.result.endTime]));
  const fresh = figures(runScenario(s));
  const loaded = new LoadedConfigs();
  assert.deepEqual(figures(runScenario(s, undefined, { loaded })), fresh);
  assert.deepEqual(figures(runScenario(s, undefined, { loaded })), fresh, "from the kept configurations");
  // The two points and two seeds differ: a configuration kept for the wrong point or seed would show.
  assert.equal(new Set(fresh.flat().map((f) => f[2])).size, 4);
});
