/**
 * Issue 25 (hardening, round 2), `deno task compare` and `deno task
 * baseline`: inputs that are not regular files are refused before they are
 * opened (no hang on a FIFO, no gigabytes from /dev/zero); a document's
 * series are drawn at most 256 points each and its groups are bounded;
 * no computed NaN or Infinity is printed (a change beyond a double is `-`,
 * a number beyond one is refused at its key); a scenario outside the
 * repository gets the command that writes its snapshot; snapshots and
 * reports never go through a symbolic link out of their folder or over an
 * input; a hostile document is one located line, never an exception.
 */
import assert from "node:assert/strict";
import { COMMON_OK, INSTANCE_OK, ROOT, runCheckTask, runDeno, writeTemp } from "./_helpers.ts";
import { captureTask, captureTaskAsync } from "./_helpers.ts";
import { runFiles } from "../core/assembly/run.ts";
import { runJson } from "../core/report/run_json.ts";
import {
  compareReportHtml,
  formatCompareTable,
  readRunDocument,
  runDocumentProblem,
  runMetricRows,
  snapshotMetricRows,
} from "../core/report/compare.ts";
import { compareBaseline, readBaseline } from "../core/scenario/baseline.ts";
import { loadScenario } from "../core/scenario/scenario.ts";
import { runCompare } from "../tools/compare.ts";
import { runBaseline } from "../scenarios/baseline.ts";

/** A run document with its CDFs and time series (the bundled example), as text; made once. */
let runText: string | undefined;
const runDocument = (): string =>
  runText ??= runJson(
    runFiles([`${ROOT}examples/instances.yaml`], `${ROOT}examples/common.yaml`, { timeseries: true }),
  );
// deno-lint-ignore no-explicit-any
const parsed = (): any => JSON.parse(runDocument());

/** `deno task compare` in this process. */
const compare = (args: string[]) => captureTaskAsync(runCompare, args);

/** Whether `mkfifo` runs here (the FIFO cases are skipped without it). */
function mkfifo(path: string): boolean {
  try {
    return new Deno.Command("mkfifo", { args: [path], stdout: "null", stderr: "null" }).outputSync().success;
  } catch {
    return false;
  }
}

Deno.test("compare: a FIFO, a device or a folder as an input is refused before it is opened, exit 2", async () => {
  const dir = writeTemp({ "a.json": runDocument() });
  const cases: [string, string][] = [
    ["/dev/zero", "compare: /dev/zero: cannot read: is a device; only regular files are read\n"],
    [dir, `compare: ${dir}: cannot read: is a directory\n`],
  ];
  if (mkfifo(`${dir}b.json`)) {
    cases.push([`${dir}b.json`, `compare: ${dir}b.json: cannot read: is a FIFO; only regular files are read\n`]);
  }
  for (const [input, line] of cases) {
    const r = await compare([`${dir}a.json`, input]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr, line);
    assert.equal(r.stdout, "");
  }
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("compare --report: a 1,000,000-point time series is drawn at 256 points, and the page and stderr say so", async () => {
  const doc = parsed();
  const n = 1_000_000;
  const ts = doc.timeseries;
  ts.time_s = Array.from({ length: n }, (_, i) => i);
  ts.offered_rate = Array.from({ length: n }, (_, i) => i % 7);
  ts.achieved_rate = ts.offered_rate;
  ts.groups[0].running = ts.offered_rate;
  doc.distributions.seconds["TTFT(s)"] = Array.from({ length: 1000 }, (_, i) => i / 1000);
  const dir = writeTemp({ "a.json": runDocument(), "b.json": JSON.stringify(doc) });
  const r = await compare([`${dir}a.json`, `${dir}b.json`, "--report", `${dir}diff.html`]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stderr,
    [
      `compare: ${dir}b.json: distributions: CDFs of 1,000 points drawn at 256 of them, evenly spaced`,
      `compare: ${dir}b.json: timeseries: 1,000,000 points drawn at 256 of them, evenly spaced (deno task sim writes at most 256)`,
      `report written to ${dir}diff.html`,
      "",
    ].join("\n"),
  );
  const html = Deno.readTextFileSync(`${dir}diff.html`);
  assert.match(html, /data-note="drawn">b: timeseries: 1,000,000 points drawn at 256 of them, evenly spaced/);
  assert.match(html, /data-chart="rate-b"/);
  // What the page draws: 256 evenly spaced points, the first and the last included; the document itself untouched.
  const read = readRunDocument(doc);
  assert.ok(typeof read !== "string", String(read));
  const drawn = (read.doc.timeseries as { time_s: number[] }).time_s;
  assert.equal(drawn.length, 256);
  assert.deepEqual([drawn[0], drawn[1], drawn[255]], [0, 3922, 999_999]);
  assert.equal(doc.timeseries.time_s.length, n);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("compare: a document's groups are bounded (1,000) before any is read; the charts draw 24 of them", async () => {
  const doc = parsed();
  const many = (k: number) => Array.from({ length: k }, (_, i) => ({ group: `g${i}`, mean_batch: i }));
  assert.equal(
    runDocumentProblem({ ...doc, groups: many(1001) }),
    "groups: 1,001 groups; a comparison reads at most 1,000 per document, one per instance group",
  );
  assert.equal(
    runDocumentProblem({ ...doc, timeseries: { ...doc.timeseries, groups: many(100_000) } }),
    "timeseries.groups: 100,000 groups; a comparison reads at most 1,000 per document, one per instance group",
  );
  // 30 groups: each compared in the table (7 rows each), the charts draw the first 24.
  const series = many(30).map(({ group }) => ({ group, running: doc.timeseries.time_s.map(() => 1) }));
  const b = { ...doc, groups: many(30), timeseries: { ...doc.timeseries, groups: series } };
  const rows = runMetricRows(b, b);
  assert.equal(rows.filter((r) => /^g\d+\./.test(r.metric)).length, 30 * 7);
  const html = await compareReportHtml(doc, b, rows, { a: "a.json", b: "b.json" });
  assert.match(html, /data-note="drawn">b: timeseries: 30 groups; the charts draw the first 24</);
});

Deno.test("compare: a change beyond a double prints '-', never Infinity; huge and tiny values print in powers of ten", () => {
  const cells = (a: number, b: number) => {
    const doc = (v: number) => ({ per_metric_summary: { "TTFT(s)": { P99: v } }, overall_summary: {} });
    const table = formatCompareTable(doc(a), doc(b), runMetricRows(doc(a), doc(b)));
    assert.doesNotMatch(table, /NaN|Infinity/);
    return table.split("\n").find((l) => l.startsWith("TTFT(s).P99 "))!.trim().split(/ +/).slice(1);
  };
  // a, b, change, change %, mark (TTFT is better lower).
  assert.deepEqual(cells(0.056, 1e308), ["0.056", "1.000e+308", "1.000e+308", "-", "worse"]);
  assert.deepEqual(cells(-1e308, 1e308), ["-1.000e+308", "1.000e+308", "-", "+200.0%", "worse"]);
  assert.deepEqual(cells(5e-324, 1), ["0.000000000000", "1", "1", "-", "worse"]);
  assert.deepEqual(cells(0, 1), ["0", "1", "1", "-", "worse"]);
  assert.deepEqual(cells(-2, -1), ["-2", "-1", "1", "+50.0%", "worse"]);
  assert.deepEqual(cells(1, 1e20), ["1", "1.000e+20", "1.000e+20", "+1.0e+22%", "worse"]);
  assert.deepEqual(cells(2, 1), ["2", "1", "-1", "-50.0%", "better"]);
  // The page of two snapshots (a baseline's): no Infinity in a cell, a chart or a value.
  const html = compareReportHtml(
    { "TTFT(s).P99": 5e-324, x: -1e308 },
    { "TTFT(s).P99": 1e308, x: 1e308 },
    snapshotMetricRows({ "TTFT(s).P99": 5e-324, x: -1e308 }, { "TTFT(s).P99": 1e308, x: 1e308 }),
    { a: "baseline", b: "this run" },
  );
  return html.then((h) => assert.doesNotMatch(h, /NaN|Infinity/));
});

Deno.test("compare: 1e999 (beyond a double) is refused at its key; 1e308 in a chart is left out, not drawn as NaN", async () => {
  const dir = writeTemp({ "a.json": runDocument() });
  const text = runDocument();
  const cases: [RegExp, string, string][] = [
    [/("TTFT\(s\)": \{[^}]*?"P99": )[^,}\s]+/, "1e999", "per_metric_summary.TTFT(s).P99"],
    [/("load": \{\s*"offered_rate": )[^,}\s]+/, "-1e999", "load.offered_rate"],
    [/("groups": \[[^\]]*?"mfu": )[^,}\s]+/, "1e999", "groups.0.mfu"],
  ];
  for (const [at, value, key] of cases) {
    Deno.writeTextFileSync(`${dir}b.json`, text.replace(at, `$1${value}`));
    const r = await compare([`${dir}a.json`, `${dir}b.json`]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(
      r.stderr,
      `compare: ${dir}b.json: not a run document (${key}: Invalid input: a number beyond ±1.8e308, the range of a double; write one with deno task sim --output_json)\n`,
    );
  }
  // Finite but extreme series values: drawn without them (an axis spanning ±1e308 has NaN ticks), and said.
  const doc = parsed();
  doc.timeseries.offered_rate[0] = 1e308;
  doc.timeseries.offered_rate[1] = -1e308;
  Deno.writeTextFileSync(`${dir}b.json`, JSON.stringify(doc));
  const r = await compare([`${dir}a.json`, `${dir}b.json`, "--report", `${dir}diff.html`]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /^compare: .*b\.json: 2 values beyond ±4\.5e\+307 not drawn \(no axis spans them\)$/m);
  assert.doesNotMatch(r.stdout + Deno.readTextFileSync(`${dir}diff.html`), /NaN|Infinity/);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("compare --report: an input (or a link to one) is refused before anything is read; a.json is left as it was", async () => {
  const dir = writeTemp({ "a.json": runDocument(), "b.json": runDocument() });
  Deno.symlinkSync(`${dir}b.json`, `${dir}link.html`);
  for (
    const [report, line] of [
      [
        `${dir}a.json`,
        `compare: --report: ${dir}a.json is an input of this run; refusing to overwrite it (deno task compare --help)`,
      ],
      [
        `${dir}link.html`,
        `compare: --report: ${dir}link.html is an input of this run (${dir}b.json); refusing to overwrite it (deno task compare --help)`,
      ],
    ]
  ) {
    const r = await compare([`${dir}a.json`, `${dir}b.json`, "--report", report]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr, `${line}\n`);
    assert.equal(r.stdout, "");
  }
  assert.equal(Deno.readTextFileSync(`${dir}a.json`), runDocument());
  assert.equal(Deno.readTextFileSync(`${dir}b.json`), runDocument());
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("compare: hostile documents (__proto__, arrays for objects, deep nesting, a million bad values) are one located line", async () => {
  const dir = writeTemp({ "a.json": runDocument() });
  const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
  // The document with one more key at its end (JSON's last duplicate key wins).
  const withKey = (key: string, value: string) => `${runDocument().trimEnd().slice(0, -1)}, "${key}": ${value}}`;
  const cases: [string, string | undefined][] = [
    // __proto__ is a key like any other: it supplies no per_metric_summary through the prototype.
    [
      '{"__proto__": {"per_metric_summary": {}, "overall_summary": {}}}',
      "per_metric_summary: Invalid input: expected record, received undefined",
    ],
    [withKey("__proto__", '{"x": 1}'), undefined],
    ["[1, 2]", "Invalid input: expected object, received array"],
    [
      '{"per_metric_summary": [], "overall_summary": {}}',
      "per_metric_summary: Invalid input: expected record, received array",
    ],
    [withKey("load", deep(100_000)), "load: Invalid input: expected record, received array"],
    [withKey("nested", deep(100_000)), undefined],
    [
      '{"per_metric_summary": {}, "overall_summary": {}, "groups": [{"group": 5}]}',
      "groups.0.group: Invalid input: expected string, received number",
    ],
  ];
  for (const [text, why] of cases) {
    Deno.writeTextFileSync(`${dir}b.json`, text);
    const r = await compare([`${dir}a.json`, `${dir}b.json`]);
    if (why === undefined) {
      assert.equal(r.code, 0, r.stderr);
      continue;
    }
    assert.equal(r.code, 2, r.stderr);
    assert.equal(
      r.stderr,
      `compare: ${dir}b.json: not a run document (${why}; write one with deno task sim --output_json)\n`,
    );
  }
  // A million bad values: the first one named (a schema library collecting them all overflowed the stack).
  const bad = Object.fromEntries(Array.from({ length: 1_000_000 }, (_, i) => [`k${i}`, "s"]));
  assert.equal(
    runDocumentProblem({ per_metric_summary: {}, overall_summary: bad }),
    "overall_summary.k0: Invalid input: expected number, received string",
  );
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("compare: a group's name never starts a line or a workflow command of its own", async () => {
  const doc = parsed();
  const names = ["::error::injected", "a\n::warning::b", "h100"];
  doc.groups = names.map((group) => ({ ...doc.groups[0], group }));
  const dir = writeTemp({ "a.json": JSON.stringify(doc), "b.json": JSON.stringify(doc) });
  const r = await compare([`${dir}a.json`, `${dir}b.json`]);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stdout, /^::/m);
  assert.match(r.stdout, /^"::error::injected"\.mean_batch /m);
  assert.match(r.stdout, /^"a\\n::warning::b"\.mean_batch /m);
  assert.match(r.stdout, /^h100\.mean_batch /m);
  Deno.removeSync(dir, { recursive: true });
});

/** A scenario with `baseline: true` named `gate`, in a new folder (with `outside/precious.txt` beside it). */
function gateScenario(): string {
  const dir = writeTemp({
    "i.yaml": INSTANCE_OK,
    "c.yaml": COMMON_OK,
    "s.yaml": "name: gate\ninstance_config: i.yaml\ncommon_config: c.yaml\nbaseline: true\n",
  });
  Deno.mkdirSync(`${dir}outside`);
  Deno.writeTextFileSync(`${dir}outside/precious.txt`, "precious");
  return dir;
}

Deno.test("baseline: a scenario outside scenarios/ gets the command that writes its snapshot, before the run; --baseline-dir only when given", async () => {
  const dir = gateScenario();
  const r = await runDeno(["run", "--quiet", "-P=baseline", "scenarios/baseline.ts", `${dir}s.yaml`]);
  assert.equal(r.code, 2, r.stderr);
  const again = `deno run -P=baseline --allow-write=${dir}__baselines__ scenarios/baseline.ts ${dir}s.yaml`;
  assert.equal(
    r.stderr,
    `baseline: ${dir}s.yaml: cannot write its snapshot ${dir}__baselines__/gate.json: the task's permission set ` +
      `writes under scenarios/ only; run ${again}\n`,
  );
  assert.doesNotMatch(r.stderr, /--baseline-dir/);
  assert.throws(() => Deno.statSync(`${dir}__baselines__`), Deno.errors.NotFound);
  // With --baseline-dir, the message names it (and the folder it was given).
  const given = await runDeno([
    "run",
    "--quiet",
    "-P=baseline",
    "scenarios/baseline.ts",
    `${dir}s.yaml`,
    "--baseline-dir",
    `${dir}snaps`,
  ]);
  assert.equal(given.code, 2, given.stderr);
  assert.equal(
    given.stderr,
    `baseline: ${dir}s.yaml: cannot write its snapshot ${dir}snaps/gate.json (--baseline-dir ${dir}snaps): ` +
      `the task's permission set writes under scenarios/ only; run deno run -P=baseline --allow-write=${dir}snaps ` +
      `scenarios/baseline.ts ${dir}s.yaml --baseline-dir ${dir}snaps\n`,
  );
  // The command the message gives writes the snapshot.
  const ok = await runDeno(["run", "--quiet", ...again.split(" ").slice(2)]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, new RegExp(`^wrote ${dir}__baselines__/gate\\.json \\(\\d+ metrics\\)$`, "m"));
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("baseline: a symbolic link at __baselines__/ or at the snapshot is refused; nothing outside the folder changes", () => {
  const dir = gateScenario();
  Deno.symlinkSync(`${dir}outside`, `${dir}__baselines__`);
  const linked = captureTask(runBaseline, [`${dir}s.yaml`]);
  assert.equal(linked.code, 2, linked.stderr);
  assert.equal(
    linked.stderr,
    `baseline: ${dir}s.yaml: ${dir}__baselines__ is a symbolic link; outputs are never written through one (remove it)\n`,
  );
  Deno.removeSync(`${dir}__baselines__`);
  Deno.mkdirSync(`${dir}__baselines__`);
  Deno.symlinkSync(`${dir}outside/precious.txt`, `${dir}__baselines__/gate.json`);
  const file = captureTask(runBaseline, [`${dir}s.yaml`]);
  assert.equal(file.code, 2, file.stderr);
  assert.equal(
    file.stderr,
    `baseline: ${dir}s.yaml: ${dir}__baselines__/gate.json is a symbolic link; outputs are never written through one (remove it)\n`,
  );
  assert.deepEqual([...Deno.readDirSync(`${dir}outside`)].map((e) => e.name), ["precious.txt"]);
  assert.equal(Deno.readTextFileSync(`${dir}outside/precious.txt`), "precious");
  // Without the links, the snapshot is written where it belongs.
  Deno.removeSync(`${dir}__baselines__/gate.json`);
  const ok = captureTask(runBaseline, [`${dir}s.yaml`]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, new RegExp(`^wrote ${dir}__baselines__/gate\\.json \\(\\d+ metrics\\)\\n$`));
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("baseline snapshot: 1e999 is refused at its key (no Infinity in baseline.html); a FIFO is not opened; a tiny base prints '—'", async () => {
  const dir = gateScenario();
  Deno.mkdirSync(`${dir}__baselines__`);
  const snap = `${dir}__baselines__/gate.json`;
  Deno.writeTextFileSync(snap, '{"TTFT(s).P99": 1e999, "total_requests": 50}');
  const why =
    `${snap}: TTFT(s).P99: a number beyond ±1.8e308, the range of a double; a snapshot holds measured values (rewrite it with \`deno task baseline\`)`;
  assert.throws(() => readBaseline(snap), { message: why });
  const r = await runCheckTask([`${dir}s.yaml`, "--report-dir", `${dir}reports`]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, new RegExp(`^${why.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m"));
  assert.doesNotMatch(r.stdout + r.stderr, /Infinity/);
  assert.equal(
    [...Deno.readDirSync(dir)].some((e) => e.name === "reports" && e.isDirectory) &&
      [...Deno.readDirSync(`${dir}reports`)].some((e) => e.name.endsWith(".baseline.html")),
    false,
  );
  Deno.removeSync(snap);
  if (mkfifo(snap)) {
    assert.throws(() => readBaseline(snap), {
      message: `${snap}: cannot read: is a FIFO; only regular files are read`,
    });
    Deno.removeSync(snap);
  }
  // A stored value of 5e-324 against 1: the change overflows a double and shows as '—'.
  const s = loadScenario(`${dir}s.yaml`);
  const check = compareBaseline(s, s.baseline!, { "TTFT(s).P99": 5e-324 }, { "TTFT(s).P99": 1 });
  assert.equal(check.pass, false);
  assert.match(check.message, /^ {2}TTFT\(s\)\.P99 +5e-324 +1 +— +\+5\.0% max$/m);
  assert.doesNotMatch(check.message, /NaN|Infinity/);
  Deno.removeSync(dir, { recursive: true });
});
