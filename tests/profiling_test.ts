/**
 * Profiling at scale (`--enable_profiling` with `--profiling_window`,
 * `--profiling_requests`, `--profiling_gzip`): what the trace keeps, that it
 * stays valid JSON, and that bad values stop before any simulation. The
 * command line runs in this process (cli.ts's `main`).
 *
 * The bundled example (1,000 requests on 2 engines, 65.8 simulated s) and a
 * small PD run (1 prefill + 1 decode engine, 50 requests) are the inputs.
 *
 * @module
 */
import assert from "node:assert/strict";
import { gunzipSync } from "node:zlib";
import { ChromeTraceWriter } from "../core/report/profiling.ts";
import { ChunkedTextWriter, TEXT_CHUNK_CHARS } from "../core/report/trace_writer.ts";
import { COMMON_OK, ROOT, runCli, writeTemp } from "./_helpers.ts";
import type { CliRun } from "./_helpers.ts";

/** A trace event as the tests read it. */
interface Ev {
  name: string;
  ph: string;
  pid: number;
  tid?: number;
  ts?: number;
  dur?: number;
  id?: number;
  cat?: string;
  args?: Record<string, unknown>;
}

/** Runs the CLI with profiling into a new folder; returns the run and the `<timestamp>/` folder it wrote. */
async function profile(args: string[]): Promise<{ run: CliRun; dir: string }> {
  const base = writeTemp({}) + "prof";
  const run = await runCli([...args, "--enable_profiling", "--profiling_output_path", base]);
  assert.equal(run.code, 0, run.stderr);
  const stamps = [...Deno.readDirSync(base)].map((e) => e.name);
  assert.equal(stamps.length, 1);
  return { run, dir: `${base}/${stamps[0]}` };
}

function events(dir: string, file = "trace.json"): Ev[] {
  const bytes = Deno.readFileSync(`${dir}/${file}`);
  const text = new TextDecoder().decode(file.endsWith(".gz") ? gunzipSync(bytes) : bytes);
  return JSON.parse(text).traceEvents;
}

/** Each async slice (b … e) as [begin, end], keyed by category, id and name. */
function asyncSpans(ev: Ev[]): Map<string, [number, number]> {
  const spans = new Map<string, [number, number]>();
  for (const e of ev) {
    if (e.ph !== "b" && e.ph !== "e") continue;
    const key = `${e.cat}/${e.id}/${e.name}`;
    const s = spans.get(key) ?? [NaN, NaN];
    s[e.ph === "b" ? 0 : 1] = e.ts!;
    spans.set(key, s);
  }
  return spans;
}

const stepKey = (e: Ev) => `${e.tid}@${e.ts}`;

/** The per-request CSV as rows of id → [send µs, finish µs, engine]. */
function csvRows(dir: string): Map<number, [number, number, number]> {
  const rows = Deno.readTextFileSync(`${dir}/requests.csv`).trimEnd().split("\n").slice(1);
  return new Map(rows.map((r) => {
    const f = r.split(",");
    return [Number(f[0]), [Math.round(Number(f[2]) * 1e6), Math.round(Number(f[4]) * 1e6), Number(f[8])]];
  }));
}

const PD_INSTANCES = `instance_groups:
  - {num_instances: 1, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: prefill}
  - {num_instances: 1, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: decode}
`;
const PD_COMMON = COMMON_OK.replace(
  "quantize_linear_action: DISABLED",
  "quantize_linear_action: DISABLED\n  enable_kv_transfer_modeling: true",
);

Deno.test("--profiling_window keeps exactly the steps, counters and phases overlapping the window", async () => {
  const full = events((await profile([])).dir);
  const { run, dir } = await profile(["--profiling_window", "10,20"]);
  assert.match(
    run.stderr,
    /\nprofiling results written to .*\/ \(trace\.json opens in https:\/\/ui\.perfetto\.dev, requests\.csv\): 2,064 steps, 195 requests overlapping 10–20 s\n$/,
  );
  const ev = events(dir);
  const [lo, hi] = [10e6, 20e6];
  const steps = ev.filter((e) => e.ph === "X");
  assert.equal(steps.length, 2064);
  // Every step overlaps [10 s, 20 s], and every step of the full trace that does is here.
  assert.ok(steps.every((e) => e.ts! <= hi && e.ts! + e.dur! >= lo));
  const inside = full.filter((e) => e.ph === "X" && e.ts! <= hi && e.ts! + e.dur! >= lo).map(stepKey);
  assert.deepEqual(steps.map(stepKey), inside);
  // Both counters of each step, at its start.
  const counters = ev.filter((e) => e.ph === "C");
  assert.equal(counters.length, 2 * 2064);
  const stepAt = new Set(steps.map(stepKey));
  assert.ok(counters.every((e) => stepAt.has(stepKey(e))));
  // Request phases: each slice overlaps the window; 195 requests have at least one.
  const spans = asyncSpans(ev);
  assert.ok([...spans.values()].every(([b, e]) => b <= hi && e >= lo));
  assert.equal(new Set([...spans.keys()].map((k) => k.split("/")[1])).size, 195);
  const fullSpans = [...asyncSpans(full)].filter(([, [b, e]]) => b <= hi && e >= lo).map(([k]) => k);
  assert.deepEqual([...spans.keys()].sort(), fullSpans.sort());
  // The CSV still has every request.
  assert.equal(csvRows(dir).size, 1000);
});

Deno.test("--profiling_requests picks evenly spaced ids, the same each run, with their engines' steps", async () => {
  const a = await profile(["--profiling_requests", "5"]);
  const b = await profile(["--profiling_requests", "5"]);
  assert.match(a.run.stderr, /: \d[\d,]* steps, 5 requests \(sample of 5 asked\)\n$/);
  // 1,000 candidates, 5 picks: ranks ⌊(2k + 1) · 1000 / 10⌋.
  const ids = (dir: string) => [...new Set(events(dir).filter((e) => e.ph === "b").map((e) => e.id))];
  assert.deepEqual(ids(a.dir), [100, 300, 500, 700, 900]);
  assert.deepEqual(Deno.readFileSync(`${a.dir}/trace.json`), Deno.readFileSync(`${b.dir}/trace.json`));
  // Exactly the full trace's steps that overlap a sampled request's time on its engine (send to finish).
  const rows = csvRows(a.dir);
  const inFlight = (e: Ev) =>
    [100, 300, 500, 700, 900].some((i) => {
      const [send, finish, engine] = rows.get(i)!;
      return engine === e.tid && e.ts! <= finish && e.ts! + e.dur! >= send;
    });
  const full = events((await profile([])).dir).filter((e) => e.ph === "X" && inFlight(e)).map(stepKey);
  const steps = events(a.dir).filter((e) => e.ph === "X").map(stepKey);
  assert.ok(steps.length > 100);
  assert.deepEqual(steps, full);
  // With a window, the candidates are the 195 requests overlapping it.
  const w = await profile(["--profiling_window", "10,20", "--profiling_requests", "5"]);
  assert.deepEqual(ids(w.dir), [119, 158, 197, 236, 275]);
  assert.ok(events(w.dir).filter((e) => e.ph === "X").every((e) => e.ts! <= 20e6 && e.ts! + e.dur! >= 10e6));
});

Deno.test("--profiling_requests on a PD run keeps the sampled requests' transfers and both engines' steps", async () => {
  const cfg = writeTemp({ "i.yaml": PD_INSTANCES, "c.yaml": PD_COMMON });
  const files = ["--instance_config_path", `${cfg}i.yaml`, "--common_config_path", `${cfg}c.yaml`];
  const { run, dir } = await profile([...files, "--profiling_requests", "3"]);
  assert.match(run.stderr, /: \d+ steps, 3 requests \(sample of 3 asked\), 3 KV transfers\n$/);
  const ev = events(dir);
  // 50 requests: ranks 8, 25, 41. Each transfer keeps its number in the whole run (the order they finished in).
  const transfers = ev.filter((e) => e.ph === "b" && e.cat === "transfer");
  assert.deepEqual(transfers.map((e) => e.args!.request), [8, 25, 41]);
  const full = events((await profile(files)).dir);
  const fullIds = full.filter((e) =>
    e.ph === "b" && e.cat === "transfer" && [8, 25, 41].includes(e.args!.request as number)
  )
    .map((e) => e.id);
  assert.deepEqual(transfers.map((e) => e.id), fullIds);
  assert.deepEqual(new Set(ev.filter((e) => e.ph === "X").map((e) => e.tid)), new Set([0, 1]), "prefill and decode");
  assert.equal(ev.filter((e) => e.ph === "s" && e.tid === 0).length, 3);
  assert.equal(ev.filter((e) => e.ph === "f" && e.tid === 1).length, 3);
});

Deno.test("--profiling_gzip writes trace.json.gz: the same trace, gzipped in one member", async () => {
  const args = ["--profiling_window", "5,15"];
  const plain = await profile(args);
  const { run, dir } = await profile([...args, "--profiling_gzip"]);
  assert.match(run.stderr, /\(trace\.json\.gz opens in https:\/\/ui\.perfetto\.dev, requests\.csv\)/);
  assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name).sort(), ["requests.csv", "trace.json.gz"]);
  const gz = Deno.readFileSync(`${dir}/trace.json.gz`);
  assert.deepEqual([...gz.subarray(0, 4)], [0x1f, 0x8b, 8, 0], "gzip magic, deflate, no flags");
  const text = Deno.readFileSync(`${plain.dir}/trace.json`);
  assert.deepEqual(new Uint8Array(gunzipSync(gz)), text);
  assert.ok(gz.length * 5 < text.length, `${gz.length} bytes gzipped of ${text.length}`);
  // The platform's decompressor reads it too (a single gzip member).
  const viaStream = await new Response(new Blob([gz]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
  assert.equal(viaStream, new TextDecoder().decode(text));
  assert.equal(JSON.parse(viaStream).displayTimeUnit, "ms");
});

Deno.test("every trace event has a tid: engines for steps, counters and flows, the process for async slices", async () => {
  const cfg = writeTemp({ "i.yaml": PD_INSTANCES, "c.yaml": PD_COMMON });
  const { dir } = await profile(["--instance_config_path", `${cfg}i.yaml`, "--common_config_path", `${cfg}c.yaml`]);
  const ev = events(dir);
  assert.equal(ev.length, 2859);
  assert.ok(ev.every((e) => Number.isInteger(e.tid)));
  const tids = (pred: (e: Ev) => boolean) => [...new Set(ev.filter(pred).map((e) => e.tid))].sort();
  assert.deepEqual(tids((e) => e.ph === "X" || e.ph === "C"), [0, 1]);
  assert.deepEqual(tids((e) => (e.ph === "b" || e.ph === "e") && e.pid === 2), [2]);
  assert.deepEqual(tids((e) => (e.ph === "b" || e.ph === "e") && e.pid === 3), [3]);
  assert.deepEqual(
    ev.filter((e) => e.ph === "M").map((e) => `${e.pid}/${e.tid} ${e.name} ${e.args!.name}`),
    [
      "1/1 process_name engines",
      "2/2 process_name requests",
      "3/3 process_name KV transfers",
      "1/0 thread_name group0/0/dp0",
      "1/1 thread_name group1/0/dp0",
    ],
  );
});

Deno.test("a bad --profiling_window or --profiling_requests is one line, exit 2, before any simulation", async () => {
  const cases: [string[], string][] = [
    [["--profiling_window", "5,2"], "--profiling_window: END must be greater than START, got '5,2'"],
    [["--profiling_window", "3,3"], "--profiling_window: END must be greater than START, got '3,3'"],
    [
      ["--profiling_window", "a,b"],
      "--profiling_window: expected START,END in simulated seconds (e.g. 60,120), got 'a,b'",
    ],
    [
      ["--profiling_window", "10"],
      "--profiling_window: expected START,END in simulated seconds (e.g. 60,120), got '10'",
    ],
    [
      ["--profiling_window", "1,2,3"],
      "--profiling_window: expected START,END in simulated seconds (e.g. 60,120), got '1,2,3'",
    ],
    [["--profiling_window", "-1,5"], "--profiling_window: START must not be negative, got '-1,5'"],
    [["--profiling_window=-5,-1"], "--profiling_window: START must not be negative, got '-5,-1'"],
    [["--profiling_requests", "0"], "--profiling_requests: expected a positive integer, got '0'"],
    [["--profiling_requests", "2.5"], "--profiling_requests: expected a positive integer, got '2.5'"],
  ];
  for (const [args, message] of cases) {
    const base = writeTemp({}) + "prof";
    const run = await runCli([...args, "--enable_profiling", "--profiling_output_path", base]);
    assert.equal(run.code, 2, args.join(" "));
    assert.equal(run.stderr, `servingcast: ${message}\n`);
    assert.equal(run.stdout, "");
    assert.throws(() => Deno.statSync(base), Deno.errors.NotFound, "no folder: nothing ran");
  }
  const alone = await runCli(["--profiling_window", "10,20"]);
  assert.equal(alone.code, 2);
  assert.equal(alone.stderr, "servingcast: error: --profiling_window needs --enable_profiling\n");
});

Deno.test("a window after the run's end writes a valid, empty trace and says so", async () => {
  const { run, dir } = await profile(["--profiling_window", "1000,2000"]);
  assert.match(run.stderr, /: 0 steps, 0 requests overlapping 1000–2000 s\n/);
  assert.match(run.stderr, /\nwarning: --profiling_window 1000,2000 holds no step \(the run simulated 65\.8 s\)\n$/);
  const ev = events(dir);
  assert.deepEqual(ev.map((e) => e.ph), ["M", "M", "M", "M"]);
});

Deno.test("a bad config with --enable_profiling leaves no profiling folder behind", async () => {
  const cfg = writeTemp({
    "i.yaml": PD_INSTANCES,
    "c.yaml": COMMON_OK.replace("num_requests: 50", "num_requests: -1"),
  });
  const base = writeTemp({}) + "prof";
  const run = await runCli([
    "--instance_config_path",
    `${cfg}i.yaml`,
    "--common_config_path",
    `${cfg}c.yaml`,
    "--enable_profiling",
    "--profiling_output_path",
    base,
  ]);
  assert.equal(run.code, 2);
  assert.match(run.stderr, /c\.yaml:\d+:\d+: load_gen\.num_requests: /);
  assert.throws(() => Deno.statSync(base), Deno.errors.NotFound);
});

Deno.test("the trace leaves in chunks of 256 Ki characters: what is held does not grow with the steps", () => {
  const chunks: number[] = [];
  const text = new ChunkedTextWriter({ write: (c) => void chunks.push(c.length), close: () => {} });
  const trace = new ChromeTraceWriter(text, ["engine 0", "engine 1"], false);
  // 100,000 steps (about 34 MB of events), fed as a run would.
  for (let i = 0; i < 100_000; i++) trace.step(i % 2, 10 * i, 10, 8, 0, 8, 100 + i, 3);
  trace.end();
  text.close();
  const full = chunks.slice(0, -1);
  assert.equal(trace.steps, 100_000);
  assert.ok(full.length > 100, `${full.length} chunks`);
  // Each chunk is flushed as soon as it reaches 256 Ki characters: at most one event (3 lines, < 1 KiB) more.
  assert.equal(TEXT_CHUNK_CHARS, 262_144);
  assert.ok(full.every((n) => n >= TEXT_CHUNK_CHARS && n < TEXT_CHUNK_CHARS + 1024), String(Math.max(...full)));
  assert.equal(text.bytes, chunks.reduce((a, b) => a + b, 0));
});

Deno.test("cli: the profiling flags' names before 0.2 still work, with a note naming the new one", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    const r = await runCli([
      "--instance_config_path",
      `${ROOT}examples/instances.yaml`,
      "--common_config_path",
      `${ROOT}examples/common.yaml`,
      "--enable_profiling",
      "--profiling_output_path",
      dir,
      "--profile_gzip",
      "--quiet",
    ]);
    assert.equal(r.code, 0);
    assert.match(r.stderr, /^note: --profile_gzip is now --profiling_gzip$/m);
    // One folder per run, named for its start time, holds the gzipped trace.
    const run = [...Deno.readDirSync(dir)][0].name;
    assert.ok([...Deno.readDirSync(`${dir}/${run}`)].some((e) => e.name === "trace.json.gz"));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
