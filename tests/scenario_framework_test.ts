/**
 * The scenario framework as a CI gate: overrides, inline blocks, variants,
 * sweeps, baselines, the JSON Schema, and what a reviewer reads when a
 * config change breaks an SLO.
 */
import assert from "node:assert/strict";
import Ajv2020 from "ajv/dist/2020.js";
import { parse } from "yaml";
import { InputError } from "../core/config/errors.ts";
import { loadScenario, runScenario } from "../core/scenario/mod.ts";
import { scenarioFiles } from "../scenarios/_files.ts";
import { scenarioJsonSchema } from "../scenarios/_schema.ts";
import { COMMON_OK, INSTANCE_OK, ROOT, runTask, writeTemp } from "./_helpers.ts";

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
  assert.equal(r.output.plan.input.engines.length, 2);
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
  const before = await runTask("check", [`${dir}s.yaml`]);
  assert.equal(before.code, 1);
  assert.match(before.stderr, /no baseline at .*__baselines__\/gate\.json: run `deno task baseline /);
  const b = await runTask("baseline", [`${dir}s.yaml`]);
  assert.equal(b.code, 0, b.stderr);
  assert.match(b.stdout, /wrote .*__baselines__\/gate\.json \(49 metrics\)/);
  const ok = await runTask("check", [`${dir}s.yaml`]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /^PASS {2}gate {2}ttft\.p99=/);
  // 10% fewer requests per second: throughput drops 10%, beyond the 5% tolerance.
  Deno.writeTextFileSync(
    `${dir}c.yaml`,
    Deno.readTextFileSync(`${dir}c.yaml`).replace("request_rate: 10.0", "request_rate: 9.0"),
  );
  const bad = await runTask("check", [`${dir}s.yaml`]);
  assert.equal(bad.code, 1);
  assert.match(bad.stdout, /^FAIL {2}gate/);
  assert.match(bad.stderr, /s\.yaml:4:1: baseline: \d+ of 49 metrics moved beyond their tolerance/);
  assert.match(bad.stderr, /\n {2}metric +baseline +now +change +tolerance\n/);
  assert.match(bad.stderr, /\n {2}output_token_throughput\(tok\/s\) +[\d.]+ +[\d.]+ +-\d+\.\d% +±5\.0%\n/);
  assert.match(bad.stderr, /\n {2}request_throughput\(req\/s\) +[\d.]+ +[\d.]+ +-\d+\.\d% +±5\.0%\n/);
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
  const broken = await runTask("check", [`${dir}s.yaml`]);
  assert.equal(broken.code, 1);
  assert.match(broken.stdout, /^FAIL {2}llama8b-h100-chat /);
  assert.match(
    broken.stderr,
    new RegExp(
      `${dir}s\\.yaml:\\d+:3: expect\\.ttft\\.p99: expected TTFT_FROM_ARRIVAL\\(s\\)\\.P99 < 0\\.06, got [\\d.]+`,
    ),
  );
  Deno.writeTextFileSync(`${dir}configs/h100_tp1_x2.yaml`, original);
  const fixed = await runTask("check", [`${dir}s.yaml`]);
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

Deno.test("deno task check --tag selects scenarios and --json-dir writes each run's JSON", async () => {
  const dir = writeTemp({});
  const r = await runTask("check", ["--tag", "comparison", "--json-dir", `${dir}json`]);
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
  // The stored TTFT p99 of variant "one" is 30% off: within its own 50%, beyond the default 1%.
  const stored: Record<string, number> = { ...snap, "one.TTFT(s).P99": snap["one.TTFT(s).P99"] * 1.3 };
  Deno.mkdirSync(`${dir}__baselines__`);
  Deno.writeTextFileSync(`${dir}__baselines__/tol.json`, JSON.stringify(stored));
  const ok = runScenario(s).checks.at(-1)!;
  assert.equal(ok.pass, true, ok.message);
  stored["one.TTFT(s).MEDIAN"] = snap["one.TTFT(s).MEDIAN"] * 1.3;
  Deno.writeTextFileSync(`${dir}__baselines__/tol.json`, JSON.stringify(stored));
  const bad = runScenario(s).checks.at(-1)!;
  assert.equal(bad.pass, false);
  assert.match(bad.message, /\n {2}one\.TTFT\(s\)\.MEDIAN +[\d.]+ +[\d.]+ +-23\.1% +±1\.0%$/);
});
