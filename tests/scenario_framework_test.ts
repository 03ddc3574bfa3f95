/**
 * The scenario framework as a CI gate: overrides, inline blocks, variants,
 * sweeps, baselines, the JSON Schema, and what a reviewer reads when a
 * config change breaks an SLO.
 */
import assert from "node:assert/strict";
import Ajv2020 from "ajv/dist/2020.js";
import { parse } from "yaml";
import { z } from "zod";
import { InputError } from "../core/config/errors.ts";
import {
  loadScenario,
  METRIC_KEY_NAMES,
  resolveMetric,
  runScenario,
  ScenarioFileSchema,
} from "../core/scenario/mod.ts";
import { scenarioFiles } from "../scenarios/_files.ts";
import { scenarioJsonSchema } from "../scenarios/_schema.ts";
import { COMMON_OK, INSTANCE_OK, ROOT, runCheckTask, runDeno, writeTemp } from "./_helpers.ts";

const indent = (text: string) => text.trimEnd().split("\n").map((l) => `  ${l}`).join("\n");

Deno.test("overrides replace values by key path, and a bad override is reported at its line in the scenario", () => {
  const dir = writeTemp({
    "i.yaml": INSTANCE_OK,
    "c.yaml": COMMON_OK,
    "ok.yaml": `instance_config: i.yaml
common_config: c.yaml
overrides:
  load_gen.num_requests: 20
  instance_groups[0].num_instances: 2
expect:
  total_requests: "== 20"
`,
    "bad.yaml": `instance_config: i.yaml
common_config: c.yaml
overrides:
  serving_config.max_tokens_budget: -5
expect:
  total_requests: "== 20"
`,
  });
  const r = runScenario(loadScenario(`${dir}ok.yaml`));
  assert.ok(r.pass, r.checks.map((c) => c.message).join("\n"));
  assert.equal(r.output.assembled.input.engines.length, 2);
  assert.throws(
    () => runScenario(loadScenario(`${dir}bad.yaml`)),
    (e) =>
      e instanceof InputError &&
      e.message === `${dir}bad.yaml:4:37: serving_config.max_tokens_budget: expected a positive integer, got -5`,
  );
});

Deno.test("inline instances and common blocks run, and their errors point into the scenario file", () => {
  const dir = writeTemp({
    "s.yaml": `name: inline
instances:
${indent(INSTANCE_OK)}
common:
${indent(COMMON_OK)}
expect:
  total_requests: "== 50"
`,
    "bad.yaml": `instances:
${indent(INSTANCE_OK.replace("H100_SXM_80G", "H100_SXM_80GB"))}
common:
${indent(COMMON_OK)}
expect:
  total_requests: "== 50"
`,
  });
  assert.ok(runScenario(loadScenario(`${dir}s.yaml`)).pass);
  assert.throws(
    () => runScenario(loadScenario(`${dir}bad.yaml`)),
    /bad\.yaml:5:20: instance_groups\[0\]\.device_type: unknown device 'H100_SXM_80GB'; did you mean 'H100_SXM_80G'\?/,
  );
});

Deno.test("variant comparisons evaluate expressions over other variants and say both sides when they fail", () => {
  const dir = writeTemp({
    "one.yaml": INSTANCE_OK,
    "two.yaml": INSTANCE_OK.replace("num_instances: 1", "num_instances: 2"),
    "c.yaml": COMMON_OK.replace("request_rate: 10.0", "request_rate: 120.0")
      .replace("num_requests: 50", "num_requests: 2000")
      .replace("max_concurrency: 16", "max_concurrency: 2000"),
    "s.yaml": `common_config: c.yaml
variants:
  small: {instance_config: one.yaml}
  big: {instance_config: two.yaml}
expect:
  big.ttft.p99: "< small.ttft.p99"
  big.request_throughput: ">= 2 * small.request_throughput"
`,
  });
  const r = runScenario(loadScenario(`${dir}s.yaml`));
  assert.equal(r.checks[0].pass, true, r.checks[0].message);
  assert.equal(r.checks[1].pass, false);
  assert.match(
    r.checks[1].message,
    new RegExp(
      `^${dir}s\\.yaml:7:3: expect\\.big\\.request_throughput: expected request_throughput\\(req/s\\) >= 2 \\* small\\.request_throughput \\(= [\\d.]+\\), got [\\d.]+$`,
    ),
  );
});

Deno.test("baseline round trip: deno task baseline, then deno task check passes; a 10% throughput change fails with the table", async () => {
  const dir = writeTemp({
    "i.yaml": INSTANCE_OK,
    "c.yaml": COMMON_OK.replace("num_requests: 50", "num_requests: 300"),
    "s.yaml": `name: gate\ninstance_config: i.yaml\ncommon_config: c.yaml\nbaseline: {tolerance: 0.05}\n`,
  });
  const before = await runCheckTask([`${dir}s.yaml`]);
  assert.equal(before.code, 1);
  assert.match(before.stderr, /no baseline at .*__baselines__\/gate\.json: run `deno task baseline /);
  // `deno task baseline` may write only under scenarios/ (its permission set): outside it, as here, the
  // script runs with that set and write access to the folder it is given.
  const b = await runDeno([
    "run",
    "--quiet",
    "-P=baseline",
    `--allow-write=${dir}`,
    "scenarios/baseline.ts",
    `${dir}s.yaml`,
  ]);
  assert.equal(b.code, 0, b.stderr);
  const stored = Object.keys(JSON.parse(Deno.readTextFileSync(`${dir}__baselines__/gate.json`)));
  assert.match(b.stdout, new RegExp(`wrote .*__baselines__/gate\\.json \\(${stored.length} metrics\\)`));
  // Every per-request statistic of every column (ext ones, P95 and P99.9 included), the overall summary
  // and the run-level figures; goodput is undefined without SLOs and left out.
  for (const k of ["TTFT(s).P99", "ITL(s).P99.9", "CLIENT_WAIT(s).P95", "E2E_FROM_ARRIVAL(s).MAX", "total_requests"]) {
    assert.ok(stored.includes(k), k);
  }
  for (const k of ["offered_rate", "achieved_rate", "keeps_up", "kv_occupancy_peak", "preemptions"]) {
    assert.ok(stored.includes(k), k);
  }
  assert.ok(!stored.includes("goodput"));
  // MIN and MAX are stored but not compared.
  const compared = stored.filter((k) => !/\.(MIN|MAX)$/.test(k)).length;
  const ok = await runCheckTask([`${dir}s.yaml`]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /^PASS {2}gate {2}ttft\.p99=/);
  // 10% fewer requests per second: throughput drops 10%, beyond the 5% tolerance.
  Deno.writeTextFileSync(
    `${dir}c.yaml`,
    Deno.readTextFileSync(`${dir}c.yaml`).replace("request_rate: 10.0", "request_rate: 9.0"),
  );
  const bad = await runCheckTask([`${dir}s.yaml`]);
  assert.equal(bad.code, 1);
  assert.match(bad.stdout, /^FAIL {2}gate/);
  assert.match(
    bad.stderr,
    new RegExp(`s\\.yaml:4:1: baseline: \\d+ of ${compared} metrics moved beyond their tolerance`),
  );
  assert.match(bad.stderr, /\n {2}metric +baseline +now +change +tolerance\n/);
  // Throughputs are checked for a fall, the offered rate (no better direction) both ways.
  assert.match(bad.stderr, /\n {2}output_token_throughput\(tok\/s\) +[\d.]+ +[\d.]+ +-\d+\.\d% +-5\.0% min\n/);
  assert.match(bad.stderr, /\n {2}request_throughput\(req\/s\) +[\d.]+ +[\d.]+ +-\d+\.\d% +-5\.0% min\n/);
  assert.match(bad.stderr, /\n {2}offered_rate +[\d.]+ +[\d.]+ +-\d+\.\d% +±5\.0%\n/);
});

Deno.test("halving the instance count of a bundled config fails its scenario with a readable message; restoring passes", async () => {
  const dir = writeTemp({});
  Deno.mkdirSync(`${dir}configs`);
  for (const f of ["h100_tp1_x2.yaml", "llama8b_chat.yaml"]) {
    Deno.copyFileSync(`${ROOT}scenarios/configs/${f}`, `${dir}configs/${f}`);
  }
  Deno.copyFileSync(`${ROOT}scenarios/llama8b_h100_chat.yaml`, `${dir}s.yaml`);
  const original = Deno.readTextFileSync(`${dir}configs/h100_tp1_x2.yaml`);
  Deno.writeTextFileSync(`${dir}configs/h100_tp1_x2.yaml`, original.replace("num_instances: 2", "num_instances: 1"));
  const broken = await runCheckTask([`${dir}s.yaml`]);
  assert.equal(broken.code, 1);
  assert.match(broken.stdout, /^FAIL {2}llama8b-h100-chat /);
  assert.match(
    broken.stderr,
    new RegExp(
      `${dir}s\\.yaml:\\d+:3: expect\\.ttft\\.p99: expected TTFT_FROM_ARRIVAL\\(s\\)\\.P99 < 0\\.06, got [\\d.]+`,
    ),
  );
  Deno.writeTextFileSync(`${dir}configs/h100_tp1_x2.yaml`, original);
  const fixed = await runCheckTask([`${dir}s.yaml`]);
  assert.equal(fixed.code, 0, fixed.stderr);
  assert.match(fixed.stdout, /^PASS {2}llama8b-h100-chat /);
});

Deno.test("the JSON Schema is current, validates every bundled scenario and rejects a misspelled key", () => {
  const text = Deno.readTextFileSync(`${ROOT}scenarios/scenario.schema.json`);
  assert.equal(text, scenarioJsonSchema(), "stale: run `deno task schema`");
  // deno-lint-ignore no-explicit-any
  const ajv = new (Ajv2020 as any)({ strict: false });
  const validate = ajv.compile(JSON.parse(text));
  for (const f of scenarioFiles()) {
    const doc = parse(Deno.readTextFileSync(f));
    assert.ok(validate(doc), `${f}: ${JSON.stringify(validate.errors)}`);
  }
  assert.equal(validate({ instance_config: "i.yaml", common_config: "c.yaml", expct: { "ttft.p99": "< 1" } }), false);
  assert.equal(validate.errors[0].params.additionalProperty, "expct");
});

Deno.test("the JSON Schema names the metrics of every assertion block, baseline tolerance and measurement", () => {
  // deno-lint-ignore no-explicit-any
  const ajv = new (Ajv2020 as any)({ strict: false });
  const schema = JSON.parse(scenarioJsonSchema());
  const validate = ajv.compile(schema);
  const base = { instance_config: "i.yaml", common_config: "c.yaml" };
  const ok = (doc: Record<string, unknown>) => validate({ ...base, ...doc });
  const good = [
    "goodput",
    "itl.p99.9",
    "client_wait.p95",
    "TTFT_FROM_ARRIVAL(s).P99",
    "kv_occupancy_peak",
    "mfu",
    "TPOT.Mean",
    "request_throughput(req/s)",
    "Request_Throughput",
  ];
  for (const m of [...good, "agg.tpot.median", "disagg.TTFT(s).p99.9", "max_rate_meeting"]) {
    assert.ok(ok({ expect: { [m]: "< 1" } }), `expect.${m}: ${JSON.stringify(validate.errors)}`);
  }
  for (const block of ["expect_per_point", "max_rate_meeting"]) {
    for (const m of good) assert.ok(ok({ [block]: { [m]: "< 1" } }), `${block}.${m}`);
    // No variants and no derived metrics there.
    for (const m of ["agg.tpot.median", "max_rate_meeting"]) {
      assert.ok(!ok({ [block]: { [m]: "< 1" } }), `${block}.${m}`);
    }
  }
  for (const m of ["ttft.p98", "ttfx.p99", "agg.ttft.p98", "ttft", "goodput.p99", "ttft.p99.99"]) {
    assert.ok(!ok({ expect: { [m]: "< 1" } }), `expect.${m} accepted`);
    assert.ok(!ok({ baseline: { tolerances: { [m]: 0.1 } } }), `baseline.tolerances.${m} accepted`);
    assert.ok(!ok({ measured: [{ metric: m, value: 1, max_error: 0.1, source: "x" }] }), `measured ${m} accepted`);
  }
  assert.ok(ok({ baseline: { tolerances: { "ttft.p99": 0.1, "itl.p99.9": 0.2, max_rate_meeting: 0.02 } } }));
  assert.ok(!ok({ baseline: { tolerances: { "ttft.p99": -1 } } }), "a tolerance is still a positive number");
  assert.ok(ok({ baseline: { strict: true, min_max: true } }));
  assert.ok(ok({ measured: [{ metric: "ttft_from_send.median", value: 1, max_error: 0.1, source: "x" }] }));

  // The pattern accepts exactly what resolveMetric reads, in any case, over a grid of plausible spellings.
  const names = new RegExp(schema.$defs.MetricName.pattern, "u");
  const columns = [...new Set(METRIC_KEY_NAMES.filter((n) => n.includes(".")).map((n) => n.split(".")[0]))];
  const stats = ["average", "mean", "avg", "median", "p50", "min", "max", "std", "p999", "p99.9", "p99.99", "p9"];
  for (let q = 1; q <= 100; q++) stats.push(`p${q}`);
  const words = [...METRIC_KEY_NAMES.filter((n) => !n.includes(".")), ...columns, "requests", "ttft(ms)", "busy"];
  const upper = (n: string) => n.replace(/[a-z]/g, (c, i) => (i % 2 ? c.toUpperCase() : c));
  for (const n of [...columns.flatMap((c) => stats.map((st) => `${c}.${st}`)), ...words]) {
    for (const spelled of [n, n.toUpperCase(), upper(n)]) {
      assert.equal(names.test(spelled), resolveMetric(spelled) !== undefined, spelled);
    }
  }
  // Editors complete every metric, once, by its short name, with its unit.
  const props: Record<string, { description: string }> = schema.$defs.MetricProperties.properties;
  const canonical = new Set(METRIC_KEY_NAMES.map((n) => resolveMetric(n)!.name));
  assert.equal(Object.keys(props).length, canonical.size);
  assert.deepEqual(new Set(Object.keys(props).map((n) => resolveMetric(n)!.name)), canonical);
  assert.match(
    props["ttft.p99"].description,
    /^TTFT from the request's arrival.*99th percentile\. In seconds.*lower is better/,
  );
  assert.match(props["goodput"].description, /In req\/s, higher is better/);
  for (const [n, p] of Object.entries(props)) assert.ok(!p.description.startsWith(resolveMetric(n)!.name), n);
  for (const block of ["expect", "expect_per_point", "max_rate_meeting"]) {
    assert.deepEqual(schema.properties[block].allOf, [{ $ref: "#/$defs/MetricProperties" }], block);
  }
});

Deno.test("the JSON Schema names metrics in assertion blocks added later, found by their key", () => {
  const extended = ScenarioFileSchema.extend({
    min_value_meeting: z.record(z.string(), z.unknown()).optional().describe("SLOs of a downward search"),
    seeds: z.array(z.number()).optional(),
  });
  const schema = JSON.parse(scenarioJsonSchema(extended));
  // deno-lint-ignore no-explicit-any
  const validate = new (Ajv2020 as any)({ strict: false }).compile(schema);
  const ok = (doc: Record<string, unknown>) => validate({ instance_config: "i.yaml", common_config: "c.yaml", ...doc });
  assert.ok(ok({ min_value_meeting: { "ttft.p99": "< 1" }, seeds: [1, 2] }), JSON.stringify(validate.errors));
  assert.ok(!ok({ min_value_meeting: { "ttft.p98": "< 1" } }));
  assert.ok(ok({ expect: { min_value_meeting: "<= 4", max_rate_meeting: ">= 8" } }), JSON.stringify(validate.errors));
  assert.ok(ok({ baseline: { tolerances: { min_value_meeting: 0.02 } } }));
  assert.ok(!ok({ expect: { other_meeting: "<= 4" } }));
});

Deno.test("deno task check --tag selects scenarios and --json-dir writes each run's JSON", async () => {
  const dir = writeTemp({});
  const r = await runCheckTask(["--tag", "comparison", "--json-dir", `${dir}json`]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.trimEnd().split("\n").map((l) => l.split("  ")[1]), ["pd-vs-aggregated-long-prompts"]);
  const files = [...Deno.readDirSync(`${dir}json`)].map((e) => e.name).sort();
  assert.deepEqual(files, [
    "pd-vs-aggregated-long-prompts.agg.json",
    "pd-vs-aggregated-long-prompts.disagg.json",
    "pd-vs-aggregated-long-prompts.disagg_slow_link.json",
  ]);
  const doc = JSON.parse(Deno.readTextFileSync(`${dir}json/${files[1]}`));
  assert.equal(doc.groups.length, 2);
});

Deno.test("baseline per-metric tolerances apply to every run of a scenario, variants included", () => {
  const dir = writeTemp({
    "i.yaml": INSTANCE_OK,
    "c.yaml": COMMON_OK,
    "s.yaml": `name: tol
common_config: c.yaml
variants:
  one: {instance_config: i.yaml}
baseline: {tolerance: 0.01, tolerances: {ttft_from_send.p99: 0.5}}
`,
  });
  const s = loadScenario(`${dir}s.yaml`);
  const snap = runScenario({ ...s, baseline: undefined }).snapshot;
  // The TTFT p99 of variant "one" rose 43% over the stored one: within its own 50%, beyond the default 1%.
  const stored: Record<string, number> = { ...snap, "one.TTFT(s).P99": snap["one.TTFT(s).P99"] * 0.7 };
  Deno.mkdirSync(`${dir}__baselines__`);
  Deno.writeTextFileSync(`${dir}__baselines__/tol.json`, JSON.stringify(stored));
  const ok = runScenario(s).checks.at(-1)!;
  assert.equal(ok.pass, true, ok.message);
  stored["one.TTFT(s).MEDIAN"] = snap["one.TTFT(s).MEDIAN"] * 0.7;
  Deno.writeTextFileSync(`${dir}__baselines__/tol.json`, JSON.stringify(stored));
  const bad = runScenario(s).checks.at(-1)!;
  assert.equal(bad.pass, false);
  assert.match(bad.message, /\n {2}one\.TTFT\(s\)\.MEDIAN +[\d.]+ +[\d.]+ +\+42\.9% +\+1\.0% max$/);
});

/**
 * A scenario with `baseline` set to `spec`, and its baseline check against a
 * stored snapshot that `doctor` makes from the run's own.
 */
function baselineCheck(spec: string, doctor: (snap: Record<string, number>) => Record<string, number>) {
  const dir = writeTemp({
    "i.yaml": INSTANCE_OK,
    "c.yaml": COMMON_OK,
    "s.yaml": `name: gate\ninstance_config: i.yaml\ncommon_config: c.yaml\nbaseline: ${spec}\n`,
  });
  const s = loadScenario(`${dir}s.yaml`);
  const snap = runScenario({ ...s, baseline: undefined }).snapshot;
  Deno.mkdirSync(`${dir}__baselines__`);
  Deno.writeTextFileSync(`${dir}__baselines__/gate.json`, JSON.stringify(doctor(snap)));
  return runScenario(s).checks.at(-1)!;
}

/** The stored snapshot a run improved on: latencies 20% lower now, throughputs 20% higher. */
function beforeImprovement(snap: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(snap).map(([k, v]) => {
      const m = resolveMetric(k)!;
      const throughput = m.better === "higher" && (m.unit === "req/s" || m.unit === "tok/s");
      return [k, m.unit === "s" && m.better === "lower" ? v / 0.8 : throughput ? v / 1.2 : v];
    }),
  );
}

Deno.test("a baseline passes an improvement (latency -20%, throughput +20%) and fails it with strict: true", () => {
  const ok = baselineCheck("{tolerance: 0.05}", beforeImprovement);
  assert.equal(ok.pass, true, ok.message);
  assert.match(ok.message, /: \d+ metrics within tolerance; \d+ improved beyond it \(/);
  const strict = baselineCheck("{tolerance: 0.05, strict: true}", beforeImprovement);
  assert.equal(strict.pass, false);
  assert.match(strict.message, /\n {2}TTFT_FROM_ARRIVAL\(s\)\.P99 +[\d.]+ +[\d.]+ +-20\.0% +±5\.0%\n/);
  assert.match(strict.message, /\n {2}request_throughput\(req\/s\) +[\d.]+ +[\d.]+ +\+20\.0% +±5\.0%(\n|$)/);
});

Deno.test("a baseline fails a regression beyond its tolerance with a table that says which way is checked", () => {
  const bad = baselineCheck("{tolerance: 0.05}", (snap) => ({
    ...snap,
    "TPOT(s).P90": snap["TPOT(s).P90"] / 1.1, // now 10% slower
    "TTFT(s).MEDIAN": snap["TTFT(s).MEDIAN"] / 1.04, // 4% slower: within 5%
    "output_token_throughput(tok/s)": snap["output_token_throughput(tok/s)"] / 0.9, // now 10% less
    "total_output_tokens": snap["total_output_tokens"] / 0.9, // fewer tokens: no better direction
  }));
  assert.equal(bad.pass, false);
  const lines = bad.message.split("\n");
  assert.match(lines[0], /s\.yaml:4:1: baseline: 3 of \d+ metrics moved beyond their tolerance \(.*gate\.json; /);
  assert.match(lines[1], /^ {2}metric +baseline +now +change +tolerance$/);
  assert.equal(lines.length, 5);
  assert.match(bad.message, /\n {2}TPOT\(s\)\.P90 +[\d.]+ +[\d.]+ +\+10\.0% +\+5\.0% max\n/);
  assert.match(bad.message, /\n {2}output_token_throughput\(tok\/s\) +[\d.]+ +[\d.]+ +-10\.0% +-5\.0% min\n/);
  assert.match(bad.message, /\n {2}total_output_tokens +[\d.]+ +[\d.]+ +-10\.0% +±5\.0%$/);
});

Deno.test("a baseline ignores MIN and MAX moves by default and checks them with min_max: true", () => {
  const moved = (snap: Record<string, number>) => ({
    ...snap,
    "TTFT(s).MAX": snap["TTFT(s).MAX"] / 2, // the slowest request now twice as slow
    "E2E_FROM_ARRIVAL(s).MIN": snap["E2E_FROM_ARRIVAL(s).MIN"] / 2,
    "TTFT(s).P99": snap["TTFT(s).P99"] / 2, // a percentile: compared either way
  });
  const def = baselineCheck("{tolerance: 0.05}", moved);
  assert.equal(def.pass, false);
  assert.deepEqual(def.message.split("\n").slice(2).map((l) => l.trim().split(/ +/)[0]), ["TTFT(s).P99"]);
  const all = baselineCheck("{tolerance: 0.05, min_max: true}", moved);
  assert.deepEqual(all.message.split("\n").slice(2).map((l) => l.trim().split(/ +/)[0]), [
    "E2E_FROM_ARRIVAL(s).MIN",
    "TTFT(s).MAX",
    "TTFT(s).P99",
  ]);
  assert.match(all.message, /\n {2}TTFT\(s\)\.MAX +[\d.]+ +[\d.]+ +\+100\.0% +\+5\.0% max\n/);
  // Without the percentile's move, the MIN and MAX moves alone pass by default.
  const minMaxOnly = (snap: Record<string, number>) => ({ ...moved(snap), "TTFT(s).P99": snap["TTFT(s).P99"] });
  const quiet = baselineCheck("{tolerance: 0.05}", minMaxOnly);
  assert.equal(quiet.pass, true, quiet.message);
  assert.equal(baselineCheck("{tolerance: 0.05, min_max: true}", minMaxOnly).pass, false);
});

Deno.test("a sweep's baseline checks each point's metrics by their direction, and max_rate_meeting as a capacity", () => {
  const dir = writeTemp({
    "i.yaml": INSTANCE_OK,
    "c.yaml": COMMON_OK,
    "s.yaml": `name: sweep
instance_config: i.yaml
common_config: c.yaml
sweep:
  load_gen.request_rate: [2.5, 40]
max_rate_meeting:
  e2e.p99: "< 1.5"
baseline: {tolerance: 0.05}
`,
  });
  const s = loadScenario(`${dir}s.yaml`);
  const snap = runScenario({ ...s, baseline: undefined }).snapshot;
  const p = "load_gen.request_rate=2.5";
  assert.ok(`${p}.TPOT(s).P90` in snap && snap.max_rate_meeting > 2.5, JSON.stringify(Object.keys(snap).slice(0, 3)));
  Deno.mkdirSync(`${dir}__baselines__`);
  const check = (stored: Record<string, number>) => {
    Deno.writeTextFileSync(`${dir}__baselines__/sweep.json`, JSON.stringify(stored));
    return runScenario(s).checks.at(-1)!;
  };
  const better = check({
    ...snap,
    [`${p}.TPOT(s).P90`]: snap[`${p}.TPOT(s).P90`] * 1.5,
    max_rate_meeting: snap.max_rate_meeting * 0.5,
  });
  assert.equal(better.pass, true, better.message);
  const worse = check({
    ...snap,
    [`${p}.TPOT(s).P90`]: snap[`${p}.TPOT(s).P90`] * 0.5,
    max_rate_meeting: snap.max_rate_meeting * 1.5,
  });
  assert.equal(worse.pass, false);
  assert.match(
    worse.message,
    /\n {2}load_gen\.request_rate=2\.5\.TPOT\(s\)\.P90 +[\d.]+ +[\d.]+ +\+100\.0% +\+5\.0% max\n/,
  );
  assert.match(worse.message, /\n {2}max_rate_meeting +[\d.]+ +[\d.]+ +-33\.3% +-5\.0% min$/);
  // max_rate_meeting may have a tolerance of its own.
  Deno.writeTextFileSync(
    `${dir}s.yaml`,
    Deno.readTextFileSync(`${dir}s.yaml`).replace(
      "{tolerance: 0.05}",
      "{tolerance: 0.05, tolerances: {max_rate_meeting: 0.4}}",
    ),
  );
  const loose = runScenario(loadScenario(`${dir}s.yaml`)).checks.at(-1)!;
  assert.doesNotMatch(loose.message, /max_rate_meeting/);
  assert.match(loose.message, /: 1 of \d+ metrics moved beyond their tolerance/);
});

Deno.test("a corrupt baseline snapshot is bad input naming the file, not a crash", async () => {
  const dir = writeTemp({
    "i.yaml": INSTANCE_OK,
    "c.yaml": COMMON_OK,
    "s.yaml": `name: gate\ninstance_config: i.yaml\ncommon_config: c.yaml\nbaseline: true\n`,
  });
  Deno.mkdirSync(`${dir}__baselines__`);
  for (
    const [text, why] of [["{not json", /not a baseline snapshot: .*JSON/], ['{"ttft": "fast"}', /metric → number/]]
  ) {
    Deno.writeTextFileSync(`${dir}__baselines__/gate.json`, text as string);
    const r = await runCheckTask([`${dir}s.yaml`]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stdout, /^FAIL {2}.*s\.yaml {2}\(bad input\)$/m);
    assert.match(r.stderr, new RegExp(`^${dir}__baselines__/gate\\.json: `, "m"));
    assert.match(r.stderr, why as RegExp);
  }
});

Deno.test("a bare deno test scenarios/ is refused in one line that names -P, before any scenario runs", async () => {
  // deno.json declares the test permission set, so Deno itself refuses a run without -P (instead of a NotCapable stack
  // trace from each scenario module). RUST_BACKTRACE off, as a user's shell has it: with it on, Deno adds its own
  // backtrace to any error.
  const out = await runDeno(["test", "scenarios/"], ROOT, { RUST_BACKTRACE: "0" });
  assert.notEqual(out.code, 0);
  assert.equal(out.stdout, "");
  assert.match(
    out.stderr,
    /^error: Test permissions were found in the config file\. Did you mean to run with `-P` or a permission flag\?\n/,
  );
  assert.doesNotMatch(out.stderr, /Uncaught|NotCapable|scenario /);
});

Deno.test("an expect whose percentile's 95% interval straddles its bound is not decided: a failure unless undecided: pass", () => {
  const dir = writeTemp({});
  const base =
    `instance_config: ${ROOT}scenarios/configs/h100_tp1_x2.yaml\ncommon_config: ${ROOT}scenarios/configs/llama8b_chat.yaml\n` +
    "overrides:\n  load_gen.num_requests: 300\n";
  // The run's p99 and its interval, then a bound inside that interval, above the value.
  Deno.writeTextFileSync(`${dir}probe.yaml`, `${base}expect:\n  total_requests: "== 300"\n`);
  const summary = runScenario(loadScenario(`${dir}probe.yaml`)).output.summary;
  const p99 = summary.extMetric["TTFT_FROM_ARRIVAL(s)"].P99;
  const [lo, hi] = summary.percentileCi["TTFT_FROM_ARRIVAL(s)"]!.P99;
  assert.ok(lo <= p99 && p99 < hi, `${lo} ${p99} ${hi}`);
  const bound = Number(((p99 + hi) / 2).toPrecision(4));
  const check = (policy: string) => {
    Deno.writeTextFileSync(`${dir}s.yaml`, `${base}${policy}expect:\n  ttft.p99: "< ${bound}"\n`);
    return runScenario(loadScenario(`${dir}s.yaml`)).checks[0];
  };
  const strict = check("");
  assert.equal(strict.pass, false);
  assert.match(
    strict.message,
    /: expect\.ttft\.p99: expected TTFT_FROM_ARRIVAL\(s\)\.P99 < [\d.]+, got [\d.]+; not decided: its 95% interval [\d.]+–[\d.]+ straddles the bound; run more requests \(or set undecided: pass\)$/,
  );
  const loose = check("undecided: pass\n");
  assert.equal(loose.pass, true);
  assert.match(loose.message, /; not decided: .* \(undecided: pass\)$/);
});
