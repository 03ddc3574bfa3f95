/**
 * A CLI that explains itself (issue 11): `--help` on every task, `--version`,
 * the model and device catalogs from the command line and in the README, one
 * line and exit 2 on a bad argument, and a notice when an upstream default
 * with a large effect applies without being written.
 */
import assert from "node:assert/strict";
import denoJson from "../deno.json" with { type: "json" };
import { COMMON_OK, INSTANCE_OK, memoryFs, ROOT, runCheckTask, runCli, runDeno, runTask } from "./_helpers.ts";
import type { CliRun } from "./_helpers.ts";
import { captureTaskAsync } from "./_helpers.ts";
import type { TaskOutput } from "../scenarios/_args.ts";
import { main } from "../cli.ts";
import { runCheck } from "../scenarios/check.ts";
import { runBaseline } from "../scenarios/baseline.ts";
import { runValidate } from "../scenarios/validate.ts";
import { runSchema } from "../scenarios/schema.ts";
import { runCalibrate } from "../tools/calibrate.ts";
import { runPlan } from "../tools/plan.ts";
import { runGoldenUpdate } from "./update_golden.ts";
import { runCatalogDoc } from "../tools/catalog_doc.ts";
import { runFigures } from "../tools/figures.ts";
import { runFuzz } from "../tools/fuzz.ts";
import { runCompare } from "../tools/compare.ts";
import { runScreenshot } from "../tools/screenshot.ts";
import { runValidateActions } from "../tools/validate_actions.ts";
import { loadConfig } from "../core/config/load.ts";
import { assemble, GENERIC_PATH_NOTICE } from "../core/assembly/assemble.ts";
import { MODEL_CATALOG } from "../core/model/mod.ts";
import { DEVICE_CATALOG } from "../core/hardware/mod.ts";
import { CATALOG_BEGIN, CATALOG_END, catalogMarkdown } from "../core/report/catalog.ts";

/** Every user-facing task and the first line of its help. */
const HELP_FIRST_LINES: Record<string, string> = {
  sim: "Usage: servingcast [options]",
  check: "Usage: deno task check [scenario.yaml …] [--tag TAG …] [--json-dir DIR] [--report-dir DIR] [--shard I/N]",
  baseline: "Usage: deno task baseline [scenario.yaml …] [--baseline-dir DIR]",
  validate: "Usage: deno task validate",
  schema: "Usage: deno task schema",
  calibrate: "Usage: deno task calibrate manifest.yaml [--report FILE]   (see core/calibrate/manifest.ts for its keys)",
  plan: "Usage: deno task plan --common_config_path C.yaml --target_rate R --slo 'ttft.p99<=2' [--slo …]",
  "golden:update": "Usage: deno task golden:update",
  "docs:catalog": "Usage: deno task docs:catalog",
  "docs:figures": "Usage: deno task docs:figures",
  fuzz: "Usage: deno task fuzz [--cases N] [--seed S] [--from K] [--target NAME]",
  compare: "Usage: deno task compare A.json B.json [options]",
  screenshot: "Usage: deno task screenshot PAGE.html OUT.png [--width 1280] [--max_height PX]",
  "validate:actions": "Usage: deno task validate:actions [FILE …]",
};

/** A task's entry point in this process, its output captured. */
type InProcess = (args: string[]) => Promise<CliRun> | CliRun;
/** A task entry point with the shared (args, io) shape, run with its lines captured. */
const captured = (entry: (args: string[], io: TaskOutput) => number | Promise<number>): InProcess => (args) =>
  captureTaskAsync(async (a, io) => await entry(a, io), args);

/**
 * Each task's in-process entry point and the file `deno task` runs: the
 * script's `import.meta.main` calls that same function with `Deno.args`.
 */
const ENTRIES: Record<string, { file: string; entry: { name: string }; run: InProcess }> = {
  sim: { file: "cli.ts", entry: main, run: runCli },
  check: { file: "scenarios/check.ts", entry: runCheck, run: runCheckTask },
  baseline: { file: "scenarios/baseline.ts", entry: runBaseline, run: captured(runBaseline) },
  validate: { file: "scenarios/validate.ts", entry: runValidate, run: captured(runValidate) },
  schema: { file: "scenarios/schema.ts", entry: runSchema, run: captured(runSchema) },
  calibrate: { file: "tools/calibrate.ts", entry: runCalibrate, run: captured(runCalibrate) },
  plan: { file: "tools/plan.ts", entry: runPlan, run: captured(runPlan) },
  "golden:update": { file: "tests/update_golden.ts", entry: runGoldenUpdate, run: captured(runGoldenUpdate) },
  "docs:catalog": { file: "tools/catalog_doc.ts", entry: runCatalogDoc, run: captured(runCatalogDoc) },
  "docs:figures": { file: "tools/figures.ts", entry: runFigures, run: captured(runFigures) },
  fuzz: { file: "tools/fuzz.ts", entry: runFuzz, run: captured(runFuzz) },
  compare: { file: "tools/compare.ts", entry: runCompare, run: captured(runCompare) },
  screenshot: { file: "tools/screenshot.ts", entry: runScreenshot, run: captured(runScreenshot) },
  "validate:actions": {
    file: "tools/validate_actions.ts",
    entry: runValidateActions,
    run: captured(runValidateActions),
  },
};

Deno.test("each task runs its file, whose main calls the entry point the tests call in-process", () => {
  const tasks = denoJson.tasks as Record<string, string>;
  assert.deepEqual(
    Object.keys(ENTRIES).sort(),
    // The test suite and the benchmarks (`bench`, `bench:day`) are the developers', not entry points.
    Object.keys(tasks).filter((t) => !["test", "bench"].includes(t) && !t.startsWith("bench:")).sort(),
    "a user-facing task without an in-process entry point",
  );
  for (const [task, { file, entry }] of Object.entries(ENTRIES)) {
    assert.match(
      tasks[task],
      new RegExp(`^deno run --quiet (-P=\\S+|(--allow-\\w+ )*--allow-\\w+)( --v8-flags=\\S+)? ${file}$`),
      task,
    );
    const text = Deno.readTextFileSync(`${ROOT}${file}`);
    const start = text.lastIndexOf("if (import.meta.main)");
    assert.ok(start > 0, `${file} has no main`);
    assert.match(
      text.slice(start),
      new RegExp(`\\b${entry.name}\\(Deno\\.args\\)`),
      `${file}'s main runs ${entry.name}`,
    );
  }
});

Deno.test("every task prints its usage on --help and exits 0 without doing its work", async () => {
  for (const [task, first] of Object.entries(HELP_FIRST_LINES)) {
    const run = await ENTRIES[task].run(["--help"]);
    assert.equal(run.code, 0, `${task} --help: ${run.stderr}`);
    assert.equal(run.stdout.split("\n")[0], first, `${task} --help`);
    assert.equal(run.stderr, "", `${task} --help`);
    assert.doesNotMatch(run.stdout, /^(PASS |FAIL |wrote )/m, `${task} --help does nothing else`);
  }
  assert.deepEqual(Object.keys(HELP_FIRST_LINES).sort(), Object.keys(ENTRIES).sort(), "a task without a help test");
});

Deno.test("every task prints deno.json's version on --version and exits 0 without doing its work", async () => {
  for (const [task, { run }] of Object.entries(ENTRIES)) {
    const r = await run(["--version"]);
    assert.equal(r.code, 0, `${task} --version: ${r.stderr}`);
    assert.equal(r.stdout, `servingcast ${denoJson.version}\n`, task);
    assert.equal(r.stderr, "", task);
  }
  assert.match(`servingcast ${denoJson.version}`, /^servingcast \d+\.\d+\.\d+$/);
});

Deno.test("sim --list-models and --list-devices print the catalogs with their figures and sources", async () => {
  const [models, devices] = await Promise.all([runCli(["--list-models"]), runCli(["--list-devices"])]);
  assert.equal(models.code, 0, models.stderr);
  assert.equal(devices.code, 0, devices.stderr);
  const m = models.stdout.split("\n");
  assert.match(m[0], /^MODEL +FAMILY +PARAMS +ACTIVE +BF16 WEIGHTS +KV\/TOKEN \(BF16\) +MAX CONTEXT$/);
  for (const id of Object.keys(MODEL_CATALOG)) assert.ok(m.some((l) => l.startsWith(`${id} `)), id);
  assert.ok(
    m.some((l) => /^meta-llama\/Llama-3\.1-8B-Instruct +dense +8\.0B +8\.0B +15\.0 GiB +128 KiB +131,072$/.test(l)),
    models.stdout,
  );
  assert.match(
    models.stdout,
    /\nsource: each model's Hugging Face config\.json, kept offline in core\/model\/catalog\.ts/,
  );
  const d = devices.stdout.split("\n");
  assert.match(d[0], /^DEVICE +MEMORY +HBM +BF16 TFLOPS +FP8 TFLOPS +INT8 TOPS +FP4 TFLOPS +EFFICIENCIES FROM$/);
  for (const name of Object.keys(DEVICE_CATALOG)) assert.ok(d.some((l) => l.startsWith(`${name} `)), name);
  assert.ok(
    d.some((l) => /^H100_SXM_80G +79\.6 GiB +3\.35 TB\/s +989 +1979 +1979 +– +measured on H100\/H800: /.test(l)),
    devices.stdout,
  );
  assert.match(devices.stdout, /\nsource: memory, bandwidth and dense peaks are vendor specifications/);
});

Deno.test("a bad argument or a bad file exits 2 with one line, never an uncaught error", async () => {
  const cases: [string, string[], RegExp][] = [
    ["baseline", ["no/such/scenario.yaml"], /^no\/such\/scenario\.yaml: cannot read: file not found$/],
    ["baseline", ["--bogus"], /^baseline: unknown option '--bogus' \(deno task baseline --help\)$/],
    ["check", ["--bogus"], /^check: unknown option '--bogus' \(deno task check --help\)$/],
    ["check", ["--tag"], /^check: --tag needs a value \(deno task check --help\)$/],
    ["validate", ["extra"], /^validate: takes no arguments, got 'extra' \(deno task validate --help\)$/],
    ["schema", ["--bogus"], /^schema: takes no arguments, got '--bogus' \(deno task schema --help\)$/],
    ["calibrate", ["--bogus"], /^calibrate: unknown option '--bogus' \(deno task calibrate --help\)$/],
    ["fuzz", ["--cases", "-1"], /^fuzz: --cases: expected a non-negative integer, got '-1' \(deno task fuzz --help\)$/],
    [
      "fuzz",
      ["--target", "nothing"],
      /^fuzz: --target: expected one of 'sim', 'scenarioTests', 'plan --merge'.*, got 'nothing' \(deno task fuzz --help\)$/,
    ],
    ["validate:actions", ["no/such/workflow.yml"], /^no\/such\/workflow\.yml: cannot read: file not found$/],
  ];
  const check = (what: string, run: CliRun, want: RegExp) => {
    assert.equal(run.code, 2, `${what}: ${run.stderr}`);
    assert.equal(run.stderr.trimEnd().split("\n").length, 1, `${what}: ${run.stderr}`);
    assert.match(run.stderr.trimEnd(), want, what);
    assert.doesNotMatch(run.stderr, /Uncaught|\bat .*\.ts:\d+/, what);
  };
  for (const [task, args, want] of cases) check(`${task} ${args.join(" ")}`, await ENTRIES[task].run(args), want);
  // One of them as `deno task` runs it: the script's exit code is the process's.
  const [task, args, want] = cases[4];
  check(`deno task ${task} ${args.join(" ")}`, await runTask(task, args), want);
});

Deno.test("an omitted quantize_linear_action and free PD transfers by default each print one notice", () => {
  const common = COMMON_OK.replace("  quantize_linear_action: DISABLED\n", "");
  const pdFile = INSTANCE_OK.replace("pd_role: both", "pd_role: prefill") +
    INSTANCE_OK.replace("instance_groups:\n", "").replace("pd_role: both", "pd_role: decode");
  // The generic path's own notice (tested in tests/engine_profile_test.ts) is left out: these configs name no engine.
  const notes = (i: string, c: string) =>
    assemble(loadConfig(["i.yaml"], "c.yaml", memoryFs({ "i.yaml": i, "c.yaml": c }))).notices.filter((n) =>
      n !== GENERIC_PATH_NOTICE
    );
  assert.deepEqual(notes(INSTANCE_OK, common), [
    "note: c.yaml: model_config.quantize_linear_action is not set: upstream's default W8A8_DYNAMIC applies " +
    "(8-bit weights, INT8 matmuls); write DISABLED for BF16 weights",
  ]);
  assert.deepEqual(notes(pdFile, COMMON_OK), [
    "note: c.yaml: model_config.enable_kv_transfer_modeling is not set: upstream's default false applies, " +
    "so KV transfers from prefill to decode take no time; write true to model the link",
  ]);
  assert.deepEqual(notes(INSTANCE_OK, COMMON_OK), [], "written values and aggregated serving: no notice");
  assert.deepEqual(
    notes(pdFile, COMMON_OK.replace("model_config:\n", "model_config:\n  enable_kv_transfer_modeling: false\n")),
    [],
    "a written false is not a silent default",
  );
});

Deno.test("the README's model and device lists are the catalogs' own", () => {
  const readme = Deno.readTextFileSync(`${ROOT}README.md`);
  const start = readme.indexOf(CATALOG_BEGIN);
  const end = readme.indexOf(CATALOG_END);
  assert.ok(start >= 0 && end > start, "README has the generated catalog section");
  assert.equal(
    readme.slice(start, end + CATALOG_END.length),
    catalogMarkdown(),
    "stale: run `deno task docs:catalog`",
  );
  assert.doesNotMatch(readme, /shared\/reference\/models\.md/, "no model list outside the repository");
});

Deno.test("a task run prints no registry chatter on stderr, whatever the state of Deno's npm cache", async () => {
  // A global cache filled by a run (not by deno install) holds the tarballs but not the registry entries; Deno 2.9.6
  // then fetches commander's, zod's, yaml's, … entries again at the end of every run, printing
  // `Download https://registry.npmjs.org/…`, and never keeps them (deno install --frozen does not repair it either).
  // The fetch is not needed (the lockfile pins everything): the tasks run Deno quietly, so stderr is the program's.
  for (const [task, command] of Object.entries(denoJson.tasks)) {
    if (command.startsWith("deno run ")) assert.match(command, /^deno run --quiet /, task);
  }
  const run = await runDeno(["task", "sim", "--version"]);
  assert.equal(run.code, 0, run.stderr);
  assert.doesNotMatch(run.stderr, /Download/);
  assert.match(Deno.readTextFileSync(`${ROOT}README.md`), /`npx -y deno@2\.9\.6 install --frozen`/);
});
