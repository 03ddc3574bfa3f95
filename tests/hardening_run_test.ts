/**
 * Issue 11, run, output and engine side: every bad input is a clear exit 2
 * before the run where it can be, and resources stay bounded.
 */
import assert from "node:assert/strict";
import { COMMON_OK, INSTANCE_OK, ROOT, runCli, runDeno, writeTemp } from "./_helpers.ts";
import { outputDirProblem, outputFileProblem } from "../cli_output.ts";
import { InputError } from "../core/config/errors.ts";
import { realFileSystem } from "../core/config/load.ts";
import { diagnostics, runFiles } from "../core/assembly/run.ts";
import { runJson } from "../core/report/run_json.ts";
import { formatSummaryTable } from "../core/report/table.ts";
import { formatExtSection } from "../core/report/ext_table.ts";
import { poolStats } from "../core/metrics/groups.ts";
import type { EngineStats } from "../core/engine/types.ts";
import { memoryFs } from "./_helpers.ts";

// ---- Finding 2: output paths are checked before the run, write errors are exit 2 ----

Deno.test("output paths: a missing folder, a folder or a file where a folder is needed are named with the flag", () => {
  const dir = writeTemp({ "f.txt": "x" });
  assert.equal(
    outputFileProblem("--output_json", `${dir}missing/out.json`),
    `--output_json: cannot write ${dir}missing/out.json: folder ${dir}missing does not exist`,
  );
  assert.equal(outputFileProblem("--output_json", dir), `--output_json: ${dir} is a directory; expected a file path`);
  assert.equal(
    outputFileProblem("--dump_requests", `${dir}f.txt/d.jsonl`),
    `--dump_requests: cannot write ${dir}f.txt/d.jsonl: ${dir}f.txt is not a folder`,
  );
  assert.equal(outputFileProblem("--output_json", `${dir}new.json`), undefined);
  assert.equal(
    outputDirProblem("--profiling_output_path", `${dir}f.txt`),
    `--profiling_output_path: ${dir}f.txt is not a folder`,
  );
  assert.equal(
    outputDirProblem("--profiling_output_path", `${dir}f.txt/sub`),
    `--profiling_output_path: cannot create ${dir}f.txt/sub: ${dir}f.txt is not a folder`,
  );
  assert.equal(outputDirProblem("--profiling_output_path", `${dir}a/b`), undefined);
});

Deno.test("cli: a bad output path is exit 2 before the run; a write error after it is exit 2 too", async () => {
  const dir = writeTemp({ "i.yaml": INSTANCE_OK, "c.yaml": COMMON_OK });
  const files = ["--instance_config_path", `${dir}i.yaml`, "--common_config_path", `${dir}c.yaml`, "--quiet"];
  const missing = await runCli([...files, "--output_json", `${dir}nope/out.json`]);
  assert.equal(missing.code, 2);
  assert.equal(missing.stdout, "", "nothing simulated");
  assert.equal(
    missing.stderr,
    `servingcast: --output_json: cannot write ${dir}nope/out.json: folder ${dir}nope does not exist\n`,
  );
  const prof = await runCli([...files, "--enable_profiling", "--profiling_output_path", `${dir}c.yaml`]);
  assert.equal(prof.code, 2);
  assert.equal(prof.stderr, `servingcast: --profiling_output_path: ${dir}c.yaml is not a folder\n`);
  if (Deno.build.os === "linux") {
    // Deno asks for --allow-all to touch /dev; with it, the write fails for want of space.
    const full = await runDeno([
      "run",
      "--quiet",
      "--allow-all",
      `${ROOT}cli.ts`,
      ...files,
      "--output_json",
      "/dev/full",
    ]);
    assert.equal(full.code, 2);
    assert.equal(full.stderr, "servingcast: --output_json: cannot write /dev/full: no space left on device\n");
  }
});

// ---- Findings 5 and 6: extreme values are bounded, undefined statistics print as "-" / null ----

/** The message of the InputError a run of these files throws (or "" when it runs). */
function runError(common: string, instance = INSTANCE_OK, extra: Record<string, string> = {}): string {
  try {
    runFiles(["i.yaml"], "c.yaml", { fs: memoryFs({ "i.yaml": instance, "c.yaml": common, ...extra }) });
    return "";
  } catch (e) {
    if (e instanceof InputError) return e.message;
    throw e;
  }
}

const withLoad = (lines: string) => COMMON_OK.replace("  request_rate: 10.0\n", lines);

Deno.test("extreme rates: an arrival span beyond limits.max_arrival_seconds is a located exit-2 error", () => {
  assert.equal(
    runError(withLoad("  request_rate: 5e-324\n")),
    "c.yaml:9:17: load_gen.request_rate: the arrivals of 50 requests would span ∞ s, more than limits.max_arrival_seconds (1e9 s; simulated times are integer µs, exact up to about 285 years)",
  );
  assert.equal(
    runError(withLoad("  request_rate: 1.0e-13\n")),
    "c.yaml:9:17: load_gen.request_rate: the arrivals of 50 requests would span 490000000000000 s, more than limits.max_arrival_seconds (1e9 s; simulated times are integer µs, exact up to about 285 years)",
  );
  // A lower limit (as a test can set it) is named as written.
  assert.equal(
    runError(withLoad("  request_rate: 1.0\n") + "limits:\n  max_arrival_seconds: 10\n"),
    "c.yaml:9:17: load_gen.request_rate: the arrivals of 50 requests would span 49 s, more than limits.max_arrival_seconds (10 s; simulated times are integer µs, exact up to about 285 years)",
  );
  assert.equal(
    runError(COMMON_OK + "limits:\n  max_arrival_seconds: 2e9\n"),
    "c.yaml:15:24: limits.max_arrival_seconds: expected a positive number of seconds ≤ 1e9, got 2000000000",
  );
});

Deno.test("extreme rates: trace timestamps spanning more than the limit fail at their line", () => {
  const trace = '{"timestamp": 0, "input_length": 10, "output_length": 5}\n' +
    '{"timestamp": 1e20, "input_length": 10, "output_length": 5}\n';
  const common = COMMON_OK.replace(
    /load_gen:\n( {2}.*\n)+/,
    "load_gen:\n  load_gen_type: trace\n  trace_path: t.jsonl\n",
  );
  assert.equal(
    runError(common, INSTANCE_OK, { "t.jsonl": trace }),
    "t.jsonl:2:1: timestamp: 100000000000000000000 ms is 100000000000000000 s after the first line (time_scale 1), more than limits.max_arrival_seconds (1e9 s)",
  );
});

Deno.test("arrival_cv is bounded to [0.001, 1000] instead of printing NaN", () => {
  assert.equal(
    runError(withLoad("  request_rate: 10.0\n  arrival_process: gamma\n  arrival_cv: 1e-200\n")),
    "c.yaml:11:15: load_gen.arrival_cv: expected a number in [0.001, 1000], got 1e-200",
  );
  // The bounds themselves run, and print numbers.
  for (const cv of ["0.001", "1000"]) {
    const out = runFiles(["i.yaml"], "c.yaml", {
      fs: memoryFs({
        "i.yaml": INSTANCE_OK,
        "c.yaml": withLoad(`  request_rate: 10.0\n  arrival_process: gamma\n  arrival_cv: ${cv}\n`),
      }),
    });
    assert.ok(!formatSummaryTable(out.summary).includes("NaN"), cv);
    assert.ok(Number.isFinite(out.summary.perMetric["E2E_TIME(s)"].MAX), cv);
  }
});

Deno.test("an undefined statistic prints '-' in the table and null in the JSON", () => {
  const out = runFiles(["i.yaml"], "c.yaml", {
    fs: memoryFs({
      "i.yaml": INSTANCE_OK,
      "c.yaml": COMMON_OK.replace("num_output_tokens: 64", "num_output_tokens: 1"),
    }),
  });
  const table = formatSummaryTable(out.summary).split("\n");
  assert.equal(
    table[1],
    "AVERAGE        0.016    0.016        -         512.0            1.0                               -",
  );
  const doc = JSON.parse(runJson(out));
  assert.equal(doc.per_metric_summary["TPOT(s)"].P99, null);
  assert.equal(doc.per_metric_summary["OUTPUT_TOKEN_THROUGHPUT(tok/s)"].AVERAGE, null);
});

Deno.test("every request unservable: the table is '-', one warning line per reason, no NaN anywhere", () => {
  const common = `model_config:
  name: meta-llama/Llama-3.1-8B-Instruct
  quantize_linear_action: DISABLED
load_gen:
  load_gen_type: synthetic
  num_requests: 3000
  arrival: {process: poisson, request_rate: 1000}
  input_tokens: {dist: uniform, min: 20000, max: 200000}
  output_tokens: {dist: uniform, min: 1, max: 100}
serving_config:
  max_concurrency: 16
  num_kv_blocks: 100
`;
  const out = runFiles(["i.yaml"], "c.yaml", { fs: memoryFs({ "i.yaml": INSTANCE_OK, "c.yaml": common }) });
  assert.deepEqual(out.summary.unservable.map((u) => u.reason), [
    "prompt + output exceeds the KV cache of an engine (100 blocks of 128 = 12,800 tokens)",
    "prompt + output exceeds the model's context length (131072 tokens)",
  ]);
  const text = formatSummaryTable(out.summary) + formatExtSection(out.summary) + diagnostics(out).join("\n");
  assert.ok(!/nan/i.test(text), text);
  assert.equal(
    formatSummaryTable(out.summary).split("\n")[1],
    "AVERAGE            -        -        -             -              -                               -",
  );
});

Deno.test("limits: requests, instances and engines are located errors naming the limit", () => {
  assert.equal(
    runError(COMMON_OK.replace("num_requests: 50", "num_requests: 300000000")),
    "c.yaml:6:17: load_gen.num_requests: 300000000 requests exceed limits.max_requests (1e8; about 20 bytes each); raise it in the common file's limits",
  );
  assert.equal(
    runError(COMMON_OK + "limits:\n  max_requests: 20\n"),
    "c.yaml:6:17: load_gen.num_requests: 50 requests exceed limits.max_requests (20; about 20 bytes each); raise it in the common file's limits",
  );
  assert.equal(
    runError(COMMON_OK, INSTANCE_OK.replace("num_instances: 1", "num_instances: 4294967297")),
    "i.yaml:2:20: instance_groups[0].num_instances: 4294967297 instances in all exceed limits.max_instances (100000); raise it in the common file's limits",
  );
  const dp = INSTANCE_OK.replace("num_instances: 1", "num_instances: 3").replace(
    "num_devices_per_instance: 1",
    "num_devices_per_instance: 2\n    parallel_config: {tp_size: 1, dp_size: 2}",
  );
  assert.equal(
    runError(COMMON_OK + "limits:\n  max_engines: 5\n", dp),
    "i.yaml:2:20: instance_groups[0].num_instances: 6 engines in all (instances × dp_size) exceed limits.max_engines (5); raise it in the common file's limits",
  );
  const trace = '{"timestamp": 0, "input_length": 10, "output_length": 5}\n'.repeat(4);
  const common = COMMON_OK.replace(
    /load_gen:\n( {2}.*\n)+/,
    "load_gen:\n  load_gen_type: trace\n  trace_path: t.jsonl\n",
  );
  assert.equal(
    runError(common + "limits:\n  max_requests: 3\n", INSTANCE_OK, { "t.jsonl": trace }),
    "t.jsonl:4:1: (line): more than limits.max_requests (3) requests; replay fewer with load_gen.num_requests or raise the limit in the common file",
  );
  // Cut by num_requests, the same trace replays.
  assert.equal(
    runError(
      common.replace("trace_path: t.jsonl", "trace_path: t.jsonl\n  num_requests: 3") + "limits:\n  max_requests: 3\n",
      INSTANCE_OK,
      { "t.jsonl": trace },
    ),
    "",
  );
});

Deno.test("per-group and per-instance statistics stay linear in the engines (each engine's group and instance read a few times)", () => {
  // Counted, not timed: a pass per group (quadratic) would read each engine's group 2,000 times.
  let reads = 0;
  const engines = Array.from({ length: 200_000 }, (_, i) => {
    const e = { ...FAKE_ENGINE, instance: Math.floor(i / 2000) };
    Object.defineProperty(e, "group", { get: () => (reads++, i % 2000), enumerable: true });
    return e;
  });
  const p = poolStats(Array.from({ length: 2000 }, (_, g) => `g${g}`), engines, 1e6);
  assert.equal(p.groups.length, 2000);
  assert.equal(p.instances.length, 200_000);
  assert.ok(reads <= 2 * engines.length, `${reads} reads of an engine's group for ${engines.length} engines`);
});

const FAKE_ENGINE: EngineStats = {
  label: "e",
  group: 0,
  kvBlocks: 100,
  steps: 10,
  busy: 0,
  peakKvBlocks: 5,
  preemptions: 0,
  served: 1,
  batchedSeqs: 10,
  peakBatch: 1,
  role: "both",
  instance: 0,
  transfers: 0,
  transferBytes: 0,
  transferTime: 0,
  kvWaits: 0,
  kvWaitTime: 0,
  cachePromptBlocks: 0,
  cacheHitBlocks: 0,
  cachePromptTokens: 0,
  cacheHitTokens: 0,
  cacheReferenced: 0,
  maxSeqs: 256,
  seqTime: 0,
  kvTime: 0,
  kvCachedTime: 0,
  flops: 0,
  hbmBytes: 0,
  peakFlops: 1e15,
  peakBandwidth: 3e12,
};

// ---- Finding 7: files are read linearly, within size limits, and only when regular ----

const SMALL_READS = { maxFileBytes: 4096, maxStreamBytes: 1 << 20, maxLineChars: 1000 };

/** The message of the InputError a run of real files under `limits` throws. */
function runFilesError(dir: string, fs = realFileSystem(SMALL_READS)): string {
  try {
    runFiles([`${dir}i.yaml`], `${dir}c.yaml`, { fs });
    return "";
  } catch (e) {
    if (e instanceof InputError) return e.message;
    throw e;
  }
}

const TRACE_COMMON = COMMON_OK.replace(
  /load_gen:\n( {2}.*\n)+/,
  "load_gen:\n  load_gen_type: trace\n  trace_path: t.jsonl\n",
);

Deno.test("trace reader: a line over the limit is an error at its line, found in time linear in its length", () => {
  const line = '{"timestamp": 0, "input_length": 10, "output_length": 5}\n';
  const dir = writeTemp({
    "i.yaml": INSTANCE_OK,
    "c.yaml": TRACE_COMMON,
    "t.jsonl": line + "[" + "1,".repeat(600) + "1]\n",
  });
  assert.equal(
    runFilesError(dir),
    `${dir}t.jsonl:2:1: line longer than 1,000 characters (a trace holds one request per line)`,
  );
  // A 40 MB single line (a JSON array) read whole.
  const big = Deno.makeTempFileSync({ suffix: ".jsonl" });
  const chunk = new TextEncoder().encode("1,".repeat(1 << 19));
  const f = Deno.openSync(big, { write: true });
  f.writeSync(new TextEncoder().encode("["));
  for (let i = 0; i < 40; i++) f.writeSync(chunk);
  f.writeSync(new TextEncoder().encode("1]\n"));
  f.close();
  // Its speed (the old reader took quadratic time) is measured by bench/trace_bench.ts, not asserted here.
  let n = 0;
  let chars = 0;
  for (const l of realFileSystem({ ...SMALL_READS, maxStreamBytes: 1e9, maxLineChars: 1e8 }).lines!(big)) {
    n++;
    chars += l.length;
  }
  assert.equal(n, 1);
  assert.equal(chars, 40 * (1 << 20) + 3);
});

Deno.test("trace reader: lines split across chunks, CRLF and a missing final newline read as written", () => {
  const rec = (i: number) => `{"timestamp": ${i}, "input_length": ${10 + (i % 7)}, "output_length": 5}`;
  const text = Array.from({ length: 30_000 }, (_, i) => rec(i)).join("\r\n"); // > 1 MiB, no final newline
  const dir = writeTemp({ "t.jsonl": text });
  const lines = [...realFileSystem().lines!(`${dir}t.jsonl`)];
  assert.equal(lines.length, 30_000);
  assert.equal(lines[29_999], rec(29_999));
  assert.ok(lines.every((l, i) => l === rec(i)));
});

Deno.test("files over the size limit, FIFOs and devices are refused with a clear message", async () => {
  const dir = writeTemp({ "i.yaml": INSTANCE_OK, "c.yaml": TRACE_COMMON, "t.jsonl": "x\n".repeat(600_000) });
  assert.equal(
    runFilesError(dir),
    `${dir}c.yaml:6:15: load_gen.trace_path: cannot read ${dir}t.jsonl: file of 1.14 MiB is larger than the limit of 1 MiB`,
  );
  Deno.writeTextFileSync(`${dir}c.yaml`, TRACE_COMMON + "# padding\n".repeat(500));
  assert.equal(
    runFilesError(dir),
    `${dir}c.yaml: cannot read: file of ${
      (TRACE_COMMON.length + 5000).toLocaleString("en-US")
    } bytes is larger than the limit of 4,096 bytes`,
  );
  if (Deno.build.os === "windows") return;
  Deno.writeTextFileSync(`${dir}c.yaml`, TRACE_COMMON);
  Deno.removeSync(`${dir}t.jsonl`);
  const mk = await new Deno.Command("mkfifo", { args: [`${dir}t.jsonl`] }).output();
  assert.ok(mk.success);
  assert.equal(
    runFilesError(dir, realFileSystem()),
    `${dir}c.yaml:6:15: load_gen.trace_path: cannot read ${dir}t.jsonl: is a FIFO; only regular files are read`,
  );
  // A FIFO named as the common file is refused too, before anything blocks on it.
  assert.equal(
    (() => {
      try {
        runFiles([`${dir}i.yaml`], `${dir}t.jsonl`);
        return "";
      } catch (e) {
        return (e as Error).message;
      }
    })(),
    `${dir}t.jsonl: cannot read: is a FIFO; only regular files are read`,
  );
});

// ---- Finding 9 (part): device and length inputs that made a step infinite or stalled the run ----

Deno.test("device file values and length spreads are bounded in their schemas", () => {
  const device = "memory_gib: 80\nhbm_bandwidth_tb_s: 3.35\ntflops: {bf16: 989}\nstep_overhead_us: 1e16\n";
  assert.equal(
    runError(COMMON_OK, INSTANCE_OK.replace("H100_SXM_80G", "./d.yaml"), { "d.yaml": device }),
    "d.yaml:4:19: step_overhead_us: expected microseconds in [0, 1e7], got 10000000000000000",
  );
  assert.equal(
    runError(COMMON_OK, INSTANCE_OK.replace("H100_SXM_80G", "./d.yaml"), {
      "d.yaml": device.replace("step_overhead_us: 1e16\n", "").replace("bf16: 989", "bf16: 1e-300"),
    }),
    "d.yaml:3:16: tflops.bf16: expected a number in [0.001, 1e6], got 1e-300",
  );
  const lognormal = `model_config:
  name: meta-llama/Llama-3.1-8B-Instruct
  quantize_linear_action: DISABLED
load_gen:
  load_gen_type: synthetic
  num_requests: 10
  arrival: {process: poisson, request_rate: 10}
  input_tokens: {dist: lognormal, mean: 100, std: 1e308}
  output_tokens: {dist: fixed, value: 10}
`;
  assert.equal(
    runError(lognormal),
    "c.yaml:8:51: load_gen.input_tokens.std: expected at most 100 × mean (10000), got 1e+308",
  );
  assert.equal(
    runError(lognormal.replace("mean: 100, std: 1e308", "mean: 1e300, std: 1")),
    "c.yaml:8:41: load_gen.input_tokens.mean: expected at most 1e9 tokens, got 1e+300",
  );
});

// ---- Finding 12 (part): trace numbers are numbers, seeds do not wrap ----

Deno.test('the trace parser takes numbers only: true, [100] and "1e1" are errors at their line', () => {
  const common = COMMON_OK.replace(
    /load_gen:\n( {2}.*\n)+/,
    "load_gen:\n  load_gen_type: trace\n  trace_path: t.jsonl\n",
  );
  const ok = '{"timestamp": 0, "input_length": 10, "output_length": 5}\n';
  const cases: [string, string][] = [
    ['{"timestamp": true, "input_length": 10, "output_length": 5}', "timestamp: expected milliseconds ≥ 0, got true"],
    [
      '{"timestamp": 1, "input_length": [100], "output_length": 5}',
      "input_length: expected a positive integer, got [100]",
    ],
    [
      '{"timestamp": 1, "input_length": 10, "output_length": "1e1"}',
      'output_length: expected a positive integer, got "1e1"',
    ],
  ];
  for (const [line, message] of cases) {
    assert.equal(runError(common, INSTANCE_OK, { "t.jsonl": ok + line + "\n" }), `t.jsonl:2:1: ${message}`);
  }
  const csv = common.replace("t.jsonl", "t.csv");
  assert.equal(
    runError(csv, INSTANCE_OK, { "t.csv": "timestamp,input_length,output_length\n0,10,5\n1,1e1,5\n" }),
    't.csv:3:1: input_length: expected a positive integer, got "1e1"',
  );
  assert.equal(runError(csv, INSTANCE_OK, { "t.csv": "timestamp,input_length,output_length\n0,10,5\n1.5,12,5\n" }), "");
});

Deno.test("seeds of 2^32 and above are rejected instead of wrapping", async () => {
  assert.equal(
    runError(COMMON_OK.replace("  request_rate: 10.0\n", "  request_rate: 10.0\n  seed: 4294967296\n")),
    "c.yaml:10:9: load_gen.seed: expected an integer below 2^32 (4294967296), got 4294967296",
  );
  assert.equal(runError(COMMON_OK.replace("  request_rate: 10.0\n", "  request_rate: 10.0\n  seed: 4294967295\n")), "");
  const run = await runCli(["--seed", "4294967296"]);
  assert.equal(run.code, 2);
  assert.equal(run.stderr, "servingcast: --seed: expected an integer below 2^32 (4294967296), got '4294967296'\n");
});
