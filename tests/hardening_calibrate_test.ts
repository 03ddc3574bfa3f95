/**
 * Hardening of `deno task calibrate` (issue 25): outputs checked before the
 * fit and written only through cli_output.ts (classes 5), bounded work
 * (class 10: iterations, `fit:` entries, measured figures), `--fit ''`
 * refused (class 14), a results file's values checked at its own keys
 * with the limits of the run they become (class 16), and every input file
 * read through the one reader: each bad input is one located line and
 * exit 2, never a stack trace, and costs no fit.
 */
import assert from "node:assert/strict";
import { SCENARIO } from "./fuzz_targets/calibrate.ts";
import { captureTaskAsync } from "./_helpers.ts";
import { runCalibrate } from "../tools/calibrate.ts";
import { InputError } from "../core/config/errors.ts";
import { readYaml } from "../core/config/load.ts";
import { calibrate, trialBudget } from "../core/calibrate/fit.ts";
import { readMeasurements } from "../core/calibrate/measurements.ts";
import { DEVICE_CATALOG } from "../core/hardware/devices.ts";

const INSTANCE =
  "instance_groups:\n  - {num_instances: 1, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: both}\n";
const COMMON = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
  "serving_config: {block_size: 16, max_tokens_budget: 8192}\n";
const CSV = "num_prompts,input_len,output_len,request_rate,max_concurrency,median_ttft_ms,median_tpot_ms\n" +
  "4,128,8,inf,1,20,8\n4,256,8,inf,2,30,9\n";
/** A manifest whose fit takes milliseconds; `extra` lines are added at its end (line 6 on). */
const manifest = (extra = "") =>
  `instance_config: i.yaml\ncommon_config: c.yaml\nmeasurements: [{csv: m.csv}]\nfit: [step_overhead]\niterations: 2\n${extra}`;

/** A temporary folder with the deployment, a CSV of two runs, `files`, and `outside/precious.txt`. */
function folder(files: Record<string, string> = {}): string {
  const dir = Deno.makeTempDirSync({ prefix: "servingcast-cal-hardening-" });
  const all: Record<string, string> = { "i.yaml": INSTANCE, "c.yaml": COMMON, "m.csv": CSV, ...files };
  for (const [name, text] of Object.entries(all)) Deno.writeTextFileSync(`${dir}/${name}`, text);
  Deno.mkdirSync(`${dir}/outside`);
  Deno.writeTextFileSync(`${dir}/outside/precious.txt`, "precious\n");
  return dir;
}

/** `deno task calibrate args` in-process, in `dir` (removed afterwards). */
async function calibrateIn(dir: string, args: string[], check: (run: Run) => void): Promise<void> {
  try {
    const run = await captureTaskAsync(runCalibrate, args);
    check(run);
    assert.equal(Deno.readTextFileSync(`${dir}/outside/precious.txt`), "precious\n");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}
type Run = { code: number; stdout: string; stderr: string };

/** Exit 2 with exactly `message` on stderr, and no fit run (nothing on stdout). */
function refused(run: Run, message: string): void {
  assert.equal(run.stderr, `${message}\n`);
  assert.equal(run.code, 2);
  assert.equal(run.stdout, "", "the fit ran before the error");
}

/** `calibrate --scenarios s.yaml …args` (one validation scenario) is refused with exactly `message`. */
async function scenariosRefused(args: string[], message: string): Promise<void> {
  const sdir = folder({ "s.yaml": SCENARIO });
  await calibrateIn(sdir, ["--scenarios", `${sdir}/s.yaml`, ...args], (run) => refused(run, message));
}

Deno.test("an output in a missing folder is an error at output: before the fit, exit 2", async () => {
  const dir = folder();
  Deno.writeTextFileSync(`${dir}/cal.yaml`, manifest("output: nodir/x.yaml\n"));
  await calibrateIn(dir, [`${dir}/cal.yaml`], (run) =>
    refused(
      run,
      `${dir}/cal.yaml:6:9: output: cannot write ${dir}/nodir/x.yaml: folder ${dir}/nodir does not exist`,
    ));
});

Deno.test("output: . (a folder) is an error at output: before the fit, exit 2", async () => {
  const dir = folder();
  Deno.writeTextFileSync(`${dir}/cal.yaml`, manifest("output: .\n"));
  await calibrateIn(
    dir,
    [`${dir}/cal.yaml`],
    (run) => refused(run, `${dir}/cal.yaml:6:9: output: ${dir} is a directory; expected a file path`),
  );
});

Deno.test("--output naming a file where a folder is expected: exit 2 before the fit", async () => {
  const dir = folder({ "s.yaml": SCENARIO, afile: "a file\n" });
  const args = ["--scenarios", `${dir}/s.yaml`, "--fit", "step_overhead", "--iterations", "2", "--folds", "0"];
  await calibrateIn(
    dir,
    [...args, "--output", `${dir}/afile`],
    (run) => refused(run, `--output: ${dir}/afile is not a folder`),
  );
});

Deno.test("outputs are never written over an input nor through a link the task did not name", async () => {
  // output: naming the manifest, or a measurement file.
  for (const out of ["cal.yaml", "m.csv"]) {
    const dir = folder();
    Deno.writeTextFileSync(`${dir}/cal.yaml`, manifest(`output: ${out}\n`));
    await calibrateIn(dir, [`${dir}/cal.yaml`], (run) => {
      refused(run, `${dir}/cal.yaml:6:9: output: ${dir}/${out} is an input of this run; refusing to overwrite it`);
      assert.equal(Deno.readTextFileSync(`${dir}/m.csv`), CSV);
    });
  }
  // The default output beside the manifest is a name the task chose: never through a symbolic link.
  const dir = folder();
  Deno.writeTextFileSync(`${dir}/cal.yaml`, manifest());
  Deno.symlinkSync(`${dir}/outside/precious.txt`, `${dir}/cal.device.yaml`);
  await calibrateIn(dir, [`${dir}/cal.yaml`], (run) =>
    refused(
      run,
      `${dir}/cal.yaml: output: ${dir}/cal.device.yaml is a symbolic link; outputs are never written through one (remove it)`,
    ));
  // Nor is a device file in the --output folder.
  const sdir = folder({ "s.yaml": SCENARIO });
  Deno.mkdirSync(`${sdir}/out`);
  Deno.symlinkSync(`${sdir}/outside/precious.txt`, `${sdir}/out/H100_SXM_80G.calibrated.yaml`);
  const args = ["--scenarios", `${sdir}/s.yaml`, "--fit", "step_overhead", "--iterations", "2", "--folds", "0"];
  await calibrateIn(sdir, [...args, "--output", `${sdir}/out`], (run) =>
    refused(
      run,
      `--output: ${sdir}/out/H100_SXM_80G.calibrated.yaml is a symbolic link; outputs are never written through one (remove it)`,
    ));
  // A manifest of scenarios: its output: a file, at its key.
  const mdir = folder({ "s.yaml": SCENARIO, afile: "a file\n" });
  Deno.writeTextFileSync(`${mdir}/cal.yaml`, "scenarios: [s.yaml]\niterations: 2\nfolds: 0\noutput: afile\n");
  await calibrateIn(
    mdir,
    [`${mdir}/cal.yaml`],
    (run) => refused(run, `${mdir}/cal.yaml:4:9: output: ${mdir}/afile is not a folder`),
  );
});

Deno.test("a valid calibration writes its device file and says where", async () => {
  const dir = folder();
  Deno.writeTextFileSync(`${dir}/cal.yaml`, manifest("folds: 0\noutput: mine.yaml\n"));
  await calibrateIn(dir, [`${dir}/cal.yaml`], (run) => {
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`^wrote ${dir}/mine\\.yaml$`, "m"));
    assert.match(Deno.readTextFileSync(`${dir}/mine.yaml`), /^name: H100_SXM_80G$/m);
  });
});

Deno.test("iterations past the limit are refused at iterations:, not run", async () => {
  const dir = folder();
  Deno.writeTextFileSync(`${dir}/cal.yaml`, manifest().replace("iterations: 2", "iterations: 100000000"));
  await calibrateIn(dir, [`${dir}/cal.yaml`], (run) =>
    refused(
      run,
      `${dir}/cal.yaml:5:13: iterations: expected at most 10000 iterations (a fit converges in tens), got 100000000`,
    ));
  await scenariosRefused(
    ["--iterations", "100000000"],
    "(command line): --iterations: expected an integer from 1 to 10000, got '100000000'",
  );
});

Deno.test("a fit: list with a constant twice (4,000 entries) is refused at fit:", async () => {
  const dir = folder();
  const fit = `fit: [${Array(4000).fill("matmul").join(", ")}]`;
  Deno.writeTextFileSync(`${dir}/cal.yaml`, manifest().replace("fit: [step_overhead]", fit));
  await calibrateIn(dir, [`${dir}/cal.yaml`], (run) => refused(run, `${dir}/cal.yaml:4:6: fit: 'matmul' listed twice`));
  await scenariosRefused(["--fit", "memory,step_overhead,memory"], "(command line): --fit: 'memory' listed twice");
});

Deno.test("more measured figures than a fit takes are refused where they pass the limit", async () => {
  const row = "4,128,8,inf,1,20,8\n";
  const head = CSV.split("\n")[0];
  // One file of 1,001 runs: at its 1,001st run.
  const dir = folder({ "m.csv": `${head}\n${row.repeat(1001)}` });
  Deno.writeTextFileSync(`${dir}/cal.yaml`, manifest());
  await calibrateIn(dir, [`${dir}/cal.yaml`], (run) =>
    refused(
      run,
      `${dir}/m.csv:1002:1: more than 1000 runs in one file; a fit takes at most 1000 measured figures`,
    ));
  // Two files of 300 runs of two figures: at the second file.
  const two = folder({ "a.csv": `${head}\n${row.repeat(300)}`, "b.csv": `${head}\n${row.repeat(300)}` });
  Deno.writeTextFileSync(`${two}/cal.yaml`, manifest().replace("[{csv: m.csv}]", "[{csv: a.csv}, {csv: b.csv}]"));
  await calibrateIn(two, [`${two}/cal.yaml`], (run) =>
    refused(
      run,
      `${two}/cal.yaml:3:36: measurements[1].csv: 1200 measured figures so far, more than the 1000 a fit takes; calibrate on fewer runs`,
    ));
});

/** A calibration setup of the test's instance and common files on the catalog H100. */
function h100Setup() {
  return {
    instances: [readYaml("i.yaml", { readText: () => INSTANCE, isDirectory: () => false })],
    common: readYaml("c.yaml", { readText: () => COMMON, isDirectory: () => false }),
    fs: { readText: () => "", isDirectory: () => false },
    device: DEVICE_CATALOG.H100_SXM_80G,
  };
}

Deno.test("a fit reports its trials as it goes, ending at the budget", () => {
  const setup = h100Setup();
  const runs = readMeasurements("m.csv", CSV);
  const options = { parameters: ["step_overhead", "memory"] as const, folds: 2, iterations: 3 };
  const reports: [number, number][] = [];
  calibrate(setup, runs, { ...options, onProgress: (done, total) => reports.push([done, total]) });
  // 1 + 2 trials to see which constants matter, then 3 fits (all runs, and each of 2 folds) of 1 + 3 × (2 + 2).
  assert.equal(trialBudget(runs.length, options), 1 + 2 + 3 * (1 + 3 * 4));
  assert.deepEqual(reports.at(-1), [42, 42]);
  assert.ok(
    reports.every(([done, total], i) => total === 42 && done <= total && (i === 0 || done >= reports[i - 1][0])),
  );
});

Deno.test("--fit '' is refused naming --fit and the constants it takes", async () => {
  const accepted = "matmul, attention, memory, step_overhead, seq_overhead, request_overhead";
  await scenariosRefused(
    ["--fit", ""],
    `(command line): --fit: expected constants separated by commas (of ${accepted}), got ''`,
  );
  await scenariosRefused(
    ["--fit=matmul,,memory"],
    `(command line): --fit: expected constants separated by commas (of ${accepted}), got 'matmul,,memory'`,
  );
});

Deno.test("a vLLM result of 1e9 requests is an error at its own completed key, with the limit", async () => {
  const result = JSON.stringify({
    completed: 1000000000,
    total_input_tokens: 30,
    total_output_tokens: 30,
    median_tpot_ms: 5,
  });
  const dir = folder({ "big.json": result });
  Deno.writeTextFileSync(`${dir}/cal.yaml`, manifest().replace("[{csv: m.csv}]", "[{vllm: big.json}]"));
  await calibrateIn(dir, [`${dir}/cal.yaml`], (run) =>
    refused(
      run,
      `${dir}/big.json:1:14: completed: 1000000000 requests exceed limits.max_requests (1e8; about 20 bytes each); ` +
        "raise it in the common file's limits (simulated as load_gen.num_requests)",
    ));
  // The common file's own limits apply: raised, the same run is accepted as far as the limit goes.
  const raised = folder({ "big.json": result, "c.yaml": `${COMMON}limits: {max_requests: 2000000000}\n` });
  Deno.writeTextFileSync(`${raised}/cal.yaml`, manifest().replace("[{csv: m.csv}]", "[{vllm: big.json}]"));
  await calibrateIn(raised, [`${raised}/cal.yaml`], (run) =>
    refused(
      run,
      `${raised}/big.json:1:46: total_input_tokens: expected at least one prompt token a request, got a mean of 3e-8`,
    ));
});

Deno.test("what the simulator cannot repeat is an error at the results file's key, before any simulation", () => {
  const setup = h100Setup();
  const vllm = (o: Record<string, unknown>) =>
    JSON.stringify({ completed: 4, total_input_tokens: 512, total_output_tokens: 32, median_ttft_ms: 20, ...o });
  const fails = (text: string, message: string) =>
    assert.throws(() => calibrate(setup, readMeasurements("r.json", text), { folds: 0, iterations: 1 }), (e) => {
      if (!(e instanceof InputError)) throw e;
      assert.equal(e.message, message);
      return true;
    });
  fails(
    vllm({ total_input_tokens: 4000000 }),
    "r.json:1:37: total_input_tokens: no engine can ever serve a request of 1000000 + 8 tokens: prompt + output " +
      "(1000008 tokens) exceeds the model's context length (131072) (the mean per request, simulated as load_gen.num_input_tokens)",
  );
  fails(
    vllm({ request_rate: 1e-300 }),
    "r.json:1:101: request_rate: the arrivals of 4 requests would span 3e+300 s, more than limits.max_arrival_seconds " +
      "(1e9 s; simulated times are integer µs, exact up to about 285 years) (simulated as load_gen.request_rate)",
  );
  // A CSV: at the cell, named by its column.
  assert.throws(
    () =>
      calibrate(setup, readMeasurements("m.csv", CSV.replace("4,256,8", "4,9000000,8")), { folds: 0, iterations: 1 }),
    /^InputError: m\.csv:3:3: input_len: no engine can ever serve a request of 9000000 \+ 8 tokens/,
  );
});

Deno.test("bad results files: each a located error at the key, never an exception", () => {
  const base = { completed: 4, total_input_tokens: 512, total_output_tokens: 32, median_ttft_ms: 20 };
  const bad = (o: Record<string, unknown> | string, message: string) =>
    assert.throws(() => readMeasurements("r.json", typeof o === "string" ? o : JSON.stringify(o)), (e) => {
      if (!(e instanceof InputError)) throw e;
      assert.equal(e.message, message);
      return true;
    });
  bad(
    { ...base, completed: "NaN" },
    'r.json:1:14: completed: expected a positive integer (requests finished), got "NaN"',
  );
  bad(
    { ...base, completed: [] },
    "r.json:1:14: completed: expected a positive integer (requests finished), got a list",
  );
  bad({ ...base, completed: 0.5 }, "r.json:1:14: completed: expected a positive integer (requests finished), got 0.5");
  bad({ ...base, median_ttft_ms: -5 }, "r.json:1:83: median_ttft_ms: expected a positive number (ms), got -5");
  bad(
    { ...base, median_ttft_ms: 1e308 },
    "r.json:1:83: median_ttft_ms: expected a figure from 1e-6 to 1e12 ms, got 1e+308",
  );
  bad(
    { ...base, median_ttft_ms: 5e-324 },
    "r.json:1:83: median_ttft_ms: expected a figure from 1e-6 to 1e12 ms, got 5e-324",
  );
  bad({ ...base, max_concurrency: 0.5 }, "r.json:1:104: max_concurrency: expected a positive integer or null, got 0.5");
  bad({ ...base, request_rate: {} }, 'r.json:1:101: request_rate: expected a positive number or "inf", got a mapping');
  // A key '__proto__' is a key like another (no prototype is set): here, the run lacks what it holds.
  bad(
    `{"__proto__": ${JSON.stringify(base)}, "completed": 4}`,
    "r.json:1:1: total_input_tokens: expected a positive number of tokens, got nothing",
  );
  // A GenAI-Perf unit that is an Object method is no unit.
  bad(
    JSON.stringify({
      time_to_first_token: { unit: "constructor", p50: 20 },
      input_sequence_length: { unit: "tokens", avg: 128 },
      output_sequence_length: { unit: "tokens", avg: 8 },
      input_config: { request_count: 4, concurrency: 2 },
    }),
    'r.json:1:32: time_to_first_token.unit: expected a time unit (ns, us, µs, ms, s, sec), got "constructor"',
  );
  // A CSV cell of Infinity is not a length.
  assert.throws(
    () => readMeasurements("m.csv", CSV.replace("4,256,8", "4,Infinity,8")),
    (e) => e instanceof InputError && e.message === 'm.csv:3:3: input_len: expected a positive number, got "Infinity"',
  );
});

Deno.test("every input is read through the one reader: a device or a missing file is one located line", async () => {
  const dir = folder();
  Deno.writeTextFileSync(`${dir}/cal.yaml`, manifest().replace("[{csv: m.csv}]", "[{csv: /dev/null}]"));
  await calibrateIn(dir, [`${dir}/cal.yaml`], (run) =>
    refused(
      run,
      `${dir}/cal.yaml:3:22: measurements[0].csv: cannot read measurement file /dev/null: is a device; only regular files are read`,
    ));
  const dev = await captureTaskAsync(runCalibrate, ["/dev/null"]);
  assert.equal(dev.code, 2);
  assert.equal(dev.stderr, "/dev/null: cannot read: is a device; only regular files are read\n");
  const missing = folder();
  Deno.writeTextFileSync(`${missing}/cal.yaml`, manifest().replace("i.yaml", "nothing.yaml"));
  await calibrateIn(
    missing,
    [`${missing}/cal.yaml`],
    (run) =>
      refused(run, `${missing}/cal.yaml:1:18: instance_config: cannot read ${missing}/nothing.yaml: file not found`),
  );
});
