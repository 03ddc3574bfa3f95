/**
 * Issue 25 (hardening, round 2), the simulator's and `check`'s classes:
 * each reproducer of the issue kept as a regression case. `plan --merge`,
 * `calibrate`, `compare` and `baseline` have their own files
 * (tests/hardening_plan_test.ts, hardening_calibrate_test.ts,
 * hardening_compare_test.ts); symlinked scenarios in a consumer repository
 * are in tests/consumer_test.ts and scenarios/testing_test.ts.
 */
import assert from "node:assert/strict";
import { COMMON_OK, INSTANCE_OK, runCheckTask, runCli, writeTemp } from "./_helpers.ts";
import { memoryFs } from "./_helpers.ts";
import { runFiles } from "../core/assembly/run.ts";
import { InputError } from "../core/config/errors.ts";
import { TASK_LIMITS } from "../core/config/limits.ts";

const md5 = (path: string) => Deno.readTextFileSync(path);

/** A scenario folder: configs and one scenario file with `body` after its config lines. */
function scenarioDir(body: string, name = "s.yaml"): string {
  return writeTemp({
    "i.yaml": INSTANCE_OK,
    "c.yaml": COMMON_OK,
    [name]: `name: x\ninstance_config: i.yaml\ncommon_config: c.yaml\n${body}`,
  });
}

// ---- Class 2: an output path that is an input is refused before anything is touched ----

Deno.test("--dump_requests, --output_json or --report naming an input is refused, the input untouched", async () => {
  const dir = writeTemp({ "i.yaml": INSTANCE_OK, "c.yaml": COMMON_OK });
  const before = md5(`${dir}c.yaml`);
  for (const flag of ["--dump_requests", "--output_json", "--report"]) {
    const out = await runCli([
      "--instance_config_path",
      `${dir}i.yaml`,
      "--common_config_path",
      `${dir}c.yaml`,
      flag,
      `${dir}c.yaml`,
    ]);
    assert.equal(out.code, 2, out.stderr);
    assert.equal(out.stderr, `servingcast: ${flag}: ${dir}c.yaml is an input of this run; refusing to overwrite it\n`);
    assert.equal(out.stdout, "");
    assert.equal(md5(`${dir}c.yaml`), before);
  }
});

Deno.test("--dump_requests naming the trace being replayed is refused, the trace untouched", async () => {
  const trace =
    Array.from({ length: 5 }, (_, i) => JSON.stringify({ timestamp: i * 100, input_length: 64, output_length: 8 }))
      .join("\n") + "\n";
  const dir = writeTemp({
    "i.yaml": INSTANCE_OK,
    "c.yaml":
      `model_config:\n  name: meta-llama/Llama-3.1-8B-Instruct\nload_gen:\n  load_gen_type: trace\n  trace_path: t.jsonl\n`,
    "t.jsonl": trace,
  });
  const out = await runCli([
    "--instance_config_path",
    `${dir}i.yaml`,
    "--common_config_path",
    `${dir}c.yaml`,
    "--dump_requests",
    `${dir}t.jsonl`,
  ]);
  assert.equal(out.code, 2, out.stderr);
  assert.match(out.stderr, /--dump_requests: .*t\.jsonl is an input of this run; refusing to overwrite it\n$/);
  assert.equal(Deno.readTextFileSync(`${dir}t.jsonl`), trace);
});

// ---- Class 14 (sim): bad values are refused ----

Deno.test("--seed '' and --report out/ are exit 2 naming the flag; nothing written", async () => {
  const seed = await runCli(["--seed", ""]);
  assert.equal(seed.code, 2);
  assert.equal(seed.stderr, "servingcast: --seed: expected a non-negative integer, got ''\n");
  const dir = writeTemp({});
  const report = await runCli(["--report", `${dir}out/`]);
  assert.equal(report.code, 2);
  assert.equal(report.stderr, `servingcast: --report: ${dir}out/ names a folder; expected a file path\n`);
  assert.deepEqual([...Deno.readDirSync(dir)], []);
});

// ---- Class 7: a model that passes the schema never yields NaN ----

Deno.test("more experts per token than experts is refused at num_experts_per_tok, at TP1 and TP2", async () => {
  const cfg = JSON.stringify({
    model_type: "mixtral",
    hidden_size: 4096,
    num_hidden_layers: 32,
    num_attention_heads: 32,
    num_key_value_heads: 8,
    intermediate_size: 14336,
    vocab_size: 32000,
    num_local_experts: 4,
    num_experts_per_tok: 5,
  });
  const dir = writeTemp({ "c.yaml": "model_config:\n  name: ./mix\nload_gen:\n  num_requests: 5\n" });
  Deno.mkdirSync(`${dir}mix`);
  Deno.writeTextFileSync(`${dir}mix/config.json`, cfg);
  for (const tp of [1, 2]) {
    Deno.writeTextFileSync(
      `${dir}i.yaml`,
      `instance_groups:\n  - {num_instances: 1, num_devices_per_instance: ${tp}, device_type: H100_SXM_80G, pd_role: both, parallel_config: {tp_size: ${tp}}}\n`,
    );
    const out = await runCli(["--instance_config_path", `${dir}i.yaml`, "--common_config_path", `${dir}c.yaml`]);
    assert.equal(out.code, 2);
    assert.equal(
      out.stderr,
      `${dir}mix/config.json:1:205: num_experts_per_tok: must be at most the number of experts (4), got 5\n`,
    );
  }
});

Deno.test("a KV link slower than 1 MB/s (device2device_rate 5e-324, found by the fuzzer) is refused where it is set", () => {
  const fs = memoryFs({
    "i.yaml": `instance_groups:
  - {num_instances: 1, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: prefill, communication_config: {device2device_bandwidth: 50000000000, device2device_rate: 5e-324}}
  - {num_instances: 1, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: decode}
`,
    "c.yaml": `${COMMON_OK}`.replace("model_config:", "model_config:\n  enable_kv_transfer_modeling: true"),
  });
  assert.throws(
    () => runFiles(["i.yaml"], "c.yaml", { fs }),
    (e: unknown) =>
      e instanceof InputError &&
      e.message.startsWith("i.yaml:2:") &&
      e.message.includes("instance_groups[0].communication_config.device2device_rate: the KV link's usable bandwidth"),
  );
});

// ---- Class 4: --json-dir problems are exit 2 naming the flag, before the run ----

Deno.test("a folder or a symbolic link where --json-dir writes is exit 2 before the run; the link's target untouched", async () => {
  const dir = scenarioDir("expect:\n  total_requests: '>= 1'\n");
  Deno.mkdirSync(`${dir}jd/x.json`, { recursive: true });
  const folder = await runCheckTask([`${dir}s.yaml`, "--json-dir", `${dir}jd`]);
  assert.equal(folder.code, 2);
  assert.equal(folder.stdout, `FAIL  ${dir}s.yaml  (output not written)\n`);
  assert.equal(folder.stderr, `check: --json-dir: ${dir}jd/x.json is a directory; expected a file path\n`);

  Deno.mkdirSync(`${dir}outside`);
  Deno.writeTextFileSync(`${dir}outside/precious.txt`, "precious\n");
  Deno.removeSync(`${dir}jd/x.json`);
  Deno.symlinkSync("../outside/precious.txt", `${dir}jd/x.json`);
  const link = await runCheckTask([`${dir}s.yaml`, "--json-dir", `${dir}jd`]);
  assert.equal(link.code, 2);
  assert.equal(
    link.stderr,
    `check: --json-dir: ${dir}jd/x.json is a symbolic link; outputs are never written through one (remove it)\n`,
  );
  assert.equal(Deno.readTextFileSync(`${dir}outside/precious.txt`), "precious\n");
});

Deno.test("a 250-character variant name is refused where it is written, not when its file is", async () => {
  const long = "v".repeat(250);
  const dir = scenarioDir(
    `variants:\n  ${long}:\n    overrides: {load_gen.num_requests: 5}\nexpect:\n  ${long}.total_requests: '== 5'\n`,
  );
  const out = await runCheckTask([`${dir}s.yaml`, "--json-dir", `${dir}jd`]);
  assert.equal(out.code, 2);
  assert.match(
    out.stderr,
    new RegExp(
      `^${dir}s\\.yaml:5:3: variants\\.v+…: expected a variant name of letters, digits, '\\.', '_' and '-', not starting with '\\.', at most 100 characters\\n`,
    ),
  );
});

// ---- Class 10 (check): counts a user controls are bounded ----

const PER_POINT = "expect_per_point:\n  total_requests: '>= 1'\n";

Deno.test("a million seeds, a 3,000-value sweep and a 100×100×100 sweep are refused before any run", async () => {
  const seeds = await runCheckTask([`${scenarioDir("seeds: 1000000\n")}s.yaml`]);
  assert.equal(seeds.code, 2);
  assert.match(seeds.stderr, /s\.yaml:4:8: seeds: expected at most 100 seeds \(each is a whole run\)\n/);
  const values = Array.from({ length: 3000 }, (_, i) => i + 1).join(", ");
  const wide = await runCheckTask([
    `${scenarioDir(`sweep:\n  load_gen.request_rate: [${values}]\n${PER_POINT}`)}s.yaml`,
  ]);
  assert.equal(wide.code, 2);
  assert.match(
    wide.stderr,
    new RegExp(
      `s\\.yaml:5:26: sweep\\.load_gen\\.request_rate: 3000 values; a sweep axis takes at most ${TASK_LIMITS.sweepValues}\\n`,
    ),
  );
  const hundred = `[${Array.from({ length: 100 }, (_, i) => i + 1).join(", ")}]`;
  const cube = await runCheckTask([
    `${
      scenarioDir(
        `sweep:\n  load_gen.request_rate: ${hundred}\n  load_gen.num_requests: ${hundred}\n  load_gen.seed: ${hundred}\n${PER_POINT}`,
      )
    }s.yaml`,
  ]);
  assert.equal(cube.code, 2);
  assert.match(
    cube.stderr,
    /s\.yaml:5:3: sweep: 1,000,000 points \(100 × 100 × 100\); a sweep runs at most 1,000: split the scenario\n/,
  );
});

// ---- Class 11: a FIFO as GITHUB_STEP_SUMMARY never blocks ----

Deno.test({
  name: "GITHUB_STEP_SUMMARY naming a FIFO is one stderr line, the exit code unchanged, no hang",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    const dir = scenarioDir("expect:\n  total_requests: '>= 1'\n");
    const made = await new Deno.Command("mkfifo", { args: [`${dir}sum`] }).output().catch(() => undefined);
    if (!made?.success) return; // no mkfifo on this machine: nothing to test
    const out = await runCheckTask([`${dir}s.yaml`], { GITHUB_STEP_SUMMARY: `${dir}sum` });
    assert.equal(out.code, 0);
    assert.match(out.stdout, /^PASS {2}x /);
    assert.equal(
      out.stderr,
      `check: GITHUB_STEP_SUMMARY (${dir}sum) is a FIFO, not a regular file: no job summary written\n`,
    );
  },
});

// ---- Class 13: __proto__ is never dropped from a scenario's maps ----

Deno.test("__proto__ as a metric, variant, sweep key or override is an unknown key, located", async () => {
  const cases: [string, RegExp][] = [
    [
      `expect:\n  total_requests: "== 50"\n  __proto__: "< 0.000001"\n`,
      /s\.yaml:6:3: expect\.__proto__: unknown key '__proto__'\n/,
    ],
    [
      `variants:\n  __proto__:\n    overrides: {load_gen.num_requests: 5}\n`,
      /s\.yaml:5:3: variants\.__proto__: unknown key '__proto__'\n/,
    ],
    [`sweep:\n  __proto__: [1, 2]\n`, /s\.yaml:5:3: sweep\.__proto__: unknown key '__proto__'\n/],
    [`overrides:\n  __proto__: 3\n`, /s\.yaml:5:3: overrides\.__proto__: unknown key '__proto__'\n/],
  ];
  for (const [body, message] of cases) {
    const out = await runCheckTask([`${scenarioDir(body)}s.yaml`]);
    assert.equal(out.code, 2, body);
    assert.match(out.stderr, message);
  }
});

Deno.test("a metric key with a trailing space is refused as the JSON Schema refuses it, with the spelling it meant", async () => {
  const out = await runCheckTask([`${scenarioDir(`expect:\n  "ttft.p99 ": "< 1"\n`)}s.yaml`]);
  assert.equal(out.code, 2);
  assert.match(
    out.stderr,
    /s\.yaml:5:3: expect\.ttft\.p99 : unknown metric 'ttft\.p99 '; did you mean 'ttft\.p99'\?\n/,
  );
});

// ---- Class 15: check never exits 0 having run nothing ----

Deno.test("check --tag matching no scenario is exit 2, as scenarioTests and the action refuse it", async () => {
  const dir = scenarioDir("tags: [h100]\nexpect:\n  total_requests: '>= 1'\n");
  const out = await runCheckTask([`${dir}s.yaml`, "--tag", "nothing"]);
  assert.equal(out.code, 2);
  assert.equal(out.stdout, "");
  assert.equal(out.stderr, "check: none of the 1 scenario files has the tag 'nothing' (deno task check --help)\n");
});

// ---- Error lines are capped ----

Deno.test("a 1 MB model path gives one capped error line, not a 2 MB one", async () => {
  const dir = writeTemp({ "i.yaml": INSTANCE_OK, "c.yaml": `model_config:\n  name: ./${"m".repeat(1_000_000)}\n` });
  const out = await runCli(["--instance_config_path", `${dir}i.yaml`, "--common_config_path", `${dir}c.yaml`]);
  assert.equal(out.code, 2);
  assert.ok(out.stderr.length < 3 * TASK_LIMITS.messageChars, `${out.stderr.length} characters`);
  assert.match(out.stderr, /^.*c\.yaml:2:9: model_config\.name: /);
});
