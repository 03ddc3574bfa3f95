/**
 * Issue 13, in-process: the time-series collector (bounded, exact sums),
 * the CDFs in the JSON document, the run report's numbers, the comparison
 * table and task, and the reports of `deno task check --report-dir`. The
 * pages in a browser: tests/report_browser_test.ts.
 */
import assert from "node:assert/strict";
import { ROOT, runCheckTask, writeTemp } from "./_helpers.ts";
import { captureTaskAsync } from "./_helpers.ts";
import { runFiles } from "../core/assembly/run.ts";
import type { RunOutput } from "../core/assembly/run.ts";
import { runJson } from "../core/report/run_json.ts";
import { runReportHtml } from "../core/report/run_report.ts";
import { formatCompareTable, runDocumentProblem, runMetricRows, snapshotMetricRows } from "../core/report/compare.ts";
import { valueAt } from "../core/report/html.ts";
import { MAX_BUCKETS } from "../core/metrics/timeseries.ts";
import { runCompare } from "../tools/compare.ts";

const EXAMPLE = [`${ROOT}examples/instances.yaml`, `${ROOT}examples/common.yaml`] as const;
const KV_PRESSURE = [`${ROOT}scenarios/configs/l40s_tp1_x1.yaml`, `${ROOT}scenarios/configs/llama8b_kv_pressure.yaml`];
const PD = [`${ROOT}scenarios/configs/h100_pd_1p2d.yaml`, `${ROOT}scenarios/configs/llama8b_long_prompt.yaml`];

const run = (files: readonly string[], seed?: number): RunOutput =>
  runFiles(files.slice(0, -1), files.at(-1)!, { timeseries: true, seed });

/** Σ over buckets × bucket width: what the series integrates. */
const integral = (values: readonly number[], seconds: number) => values.reduce((a, v) => a + v, 0) * seconds;

Deno.test("time series: bounded buckets whose sums equal the engines' own counters, on a run with preemptions", () => {
  const out = run(KV_PRESSURE);
  const ts = out.series!;
  assert.ok(ts.time.length > 10 && ts.time.length <= MAX_BUCKETS, `${ts.time.length} buckets`);
  const w = ts.bucketSeconds;
  // Every arrival and every finish lands in one bucket.
  assert.equal(Math.round(integral(ts.offeredRate, w)), out.result.requests.count);
  assert.equal(Math.round(integral(ts.achievedRate, w)), out.summary.overall.total_requests);
  const g = ts.groups[0];
  // Σ batch × time over the buckets is each engine's Σ seqs × step time (µs → s).
  const seqSeconds = out.result.engines.reduce((a, e) => a + e.seqTime, 0) / 1e6;
  assert.ok(Math.abs(integral(g.running, w) / seqSeconds - 1) < 1e-9, `${integral(g.running, w)} vs ${seqSeconds}`);
  const preemptions = out.result.engines.reduce((a, e) => a + e.preemptions, 0);
  assert.ok(preemptions > 100, `${preemptions} preemptions`);
  assert.equal(Math.round(integral(g.preemptions, w)), preemptions);
  assert.ok(g.kvOccupancy.every((v) => v >= 0 && v <= 1 + 1e-9));
  assert.ok(Math.max(...g.kvOccupancy) > 0.5, "the KV-pressure run fills its cache");
});

Deno.test("time series: a long run merges buckets (width doubling) and keeps at most MAX_BUCKETS", () => {
  const dir = writeTemp({
    "c.yaml": Deno.readTextFileSync(KV_PRESSURE[1]).replace(/num_requests: \d+/, "num_requests: 3000"),
  });
  const out = runFiles([KV_PRESSURE[0]], `${dir}c.yaml`, { timeseries: true });
  const ts = out.series!;
  assert.ok(ts.time.length <= MAX_BUCKETS);
  assert.ok(ts.bucketSeconds * ts.time.length >= out.result.endTime / 1e6, "the buckets cover the run");
  assert.ok(ts.bucketSeconds > 0.125, `merged to ${ts.bucketSeconds} s buckets`);
  assert.equal(Math.round(integral(ts.offeredRate, ts.bucketSeconds)), 3000);
});

Deno.test("PD: KV transfers in flight are a series of the decode group, and the JSON has CDFs matching the tables", () => {
  const out = run(PD);
  const doc = JSON.parse(runJson(out));
  const decode = doc.timeseries.groups.find((g: { group: string }) => g.group === "decode");
  assert.ok(Math.max(...decode.kv_transfers_in_flight) > 0, "transfers in flight on the decode side");
  const prefill = doc.timeseries.groups.find((g: { group: string }) => g.group === "prefill");
  assert.ok(prefill.kv_transfers_in_flight.every((v: number) => v === 0));
  for (const column of ["TTFT(s)", "TPOT(s)", "E2E_TIME(s)"]) {
    const q = doc.distributions.seconds[column];
    assert.equal(q.length, 101);
    assert.equal(q[0], doc.per_metric_summary[column].MIN);
    assert.equal(q[50], doc.per_metric_summary[column].MEDIAN);
    assert.equal(q[100], doc.per_metric_summary[column].MAX);
    assert.ok(q.every((v: number, i: number) => i === 0 || v >= q[i - 1]), `${column} quantiles ascend`);
  }
  assert.equal(doc.distributions.seconds["ITL(s)"][100], doc.ext_metric_summary["ITL(s)"].MAX);
});

Deno.test("run report: every marked number is the JSON document's, and every chart is an inline SVG with marks", async () => {
  const out = run(EXAMPLE);
  const doc = JSON.parse(runJson(out));
  const html = await runReportHtml(out, "example");
  const cells = [...html.matchAll(/data-json="([^"]+)" data-value="([^"]+)"/g)];
  assert.ok(cells.length > 100, `${cells.length} numbers`);
  for (const [, path, value] of cells) {
    const p = JSON.parse(path.replaceAll("&quot;", '"'));
    assert.equal(Number(value), valueAt(doc, p), path);
  }
  const figures = html.split('<figure class="chart"').slice(1);
  // CDFs (5), rate + 5 group series (no transfers in an aggregated run), breakdown, memory.
  assert.equal(figures.length, 13);
  for (const f of figures) assert.match(f, /^ data-chart="[^"]+"><figcaption>[^<]+<\/figcaption><svg[^]*role-mark/);
  assert.doesNotMatch(html, /<script|https?:\/\/(?!www\.w3\.org|vega\.github\.io)/, "no script, no fetched asset");
});

Deno.test("compare: the same run twice changes nothing; another seed changes latencies, marked better or worse", () => {
  const a = JSON.parse(runJson(run(EXAMPLE)));
  const b = JSON.parse(runJson(run(EXAMPLE, 7)));
  const rows = runMetricRows(a, b);
  assert.ok(rows.length > 100, `${rows.length} rows`);
  assert.equal(formatCompareTable(a, a, rows, { changedOnly: true }).trimEnd().split("\n").length, 1, "only the head");
  const table = formatCompareTable(a, b, rows);
  const p99 = table.split("\n").find((l) => l.startsWith("TTFT(s).P99 "))!;
  const [, va, vb] = p99.trim().split(/\s+/);
  assert.equal(va, a.per_metric_summary["TTFT(s)"].P99.toFixed(3));
  assert.equal(vb, b.per_metric_summary["TTFT(s)"].P99.toFixed(3));
  const e2e = table.split("\n").find((l) => l.startsWith("E2E_TIME(s).MEDIAN "))!;
  const worse = b.per_metric_summary["E2E_TIME(s)"].MEDIAN > a.per_metric_summary["E2E_TIME(s)"].MEDIAN;
  assert.match(e2e, worse ? /worse$/ : /better$/);
  assert.match(table, /^total_input_tokens +1,024,000 +1,024,000 +0 +0\.0%$/m);
});

Deno.test("deno task compare: the table and an HTML page; bad input is one line, exit 2", async () => {
  const dir = writeTemp({ "bad.json": "{not json", "other.json": '{"a": 1}' });
  Deno.writeTextFileSync(`${dir}a.json`, runJson(run(EXAMPLE)));
  Deno.writeTextFileSync(`${dir}b.json`, runJson(run(EXAMPLE, 7)));
  const ok = await captureTaskAsync(runCompare, [`${dir}a.json`, `${dir}b.json`, "--report", `${dir}diff.html`]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /^metric +a +b +change +change%$/m);
  const html = Deno.readTextFileSync(`${dir}diff.html`);
  assert.match(html, /data-side="a"/);
  assert.match(html, /data-chart="cdf-TTFT\(s\)"/);
  // Time series as small multiples: a panel per run.
  assert.match(html, /data-chart="rate-a"/);
  assert.match(html, /data-chart="rate-b"/);
  for (
    const [args, want] of [
      [[`${dir}a.json`], /^compare: expected two JSON files, got 1 \(deno task compare --help\)$/],
      [[`${dir}a.json`, `${dir}missing.json`], /^compare: .*missing\.json: cannot read: /],
      [[`${dir}a.json`, `${dir}bad.json`], /^compare: .*bad\.json: not JSON: /],
      [[`${dir}a.json`, `${dir}other.json`], /^compare: .*other\.json: not a run document/],
      [
        [`${dir}a.json`, `${dir}b.json`, "--report", dir],
        /^compare: --report: .* is a directory; expected a file path/,
      ],
    ] as const
  ) {
    const r = await captureTaskAsync(runCompare, [...args]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trimEnd().split("\n").length, 1, r.stderr);
    assert.match(r.stderr.trimEnd(), want);
  }
});

Deno.test("deno task check --report-dir: a page per scenario, a sweep's SLO curves, a baseline's change page", async () => {
  const dir = writeTemp({});
  const r = await runCheckTask([
    `${ROOT}scenarios/llama8b_h100_fewest_instances.yaml`,
    `${ROOT}scenarios/llama8b_long_prompt_pd.yaml`,
    "--report-dir",
    `${dir}reports`,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const sweep = Deno.readTextFileSync(`${dir}reports/llama8b-h100-fewest-instances.html`);
  assert.match(sweep, /data-chart="sweep-ttft\.p99"/);
  assert.match(sweep, /min_value_meeting = \d+ marked/);
  assert.match(sweep, /<td class="pass">PASS<\/td>/);
  const pd = Deno.readTextFileSync(`${dir}reports/llama8b-long-prompt-pd-1p2d.html`);
  assert.match(pd, /data-chart="kv_transfers_in_flight"/);
  assert.match(pd, /expect\.total_requests == 600/);
  // A baseline that no longer matches: its change page beside the report.
  const base = writeTemp({
    "s.yaml":
      `name: gate\ninstance_config: ${ROOT}examples/instances.yaml\ncommon_config: ${ROOT}examples/common.yaml\nbaseline: true\n`,
  });
  Deno.mkdirSync(`${base}__baselines__`);
  Deno.writeTextFileSync(`${base}__baselines__/gate.json`, JSON.stringify({ "TTFT(s).P99": 0.001 }));
  const failed = await runCheckTask([`${base}s.yaml`, "--report-dir", `${base}out`]);
  assert.equal(failed.code, 1, failed.stderr);
  const diff = Deno.readTextFileSync(`${base}out/gate.baseline.html`);
  assert.match(
    diff,
    /<td>TTFT\(s\)\.P99<\/td><td class="num" data-json="\[&quot;TTFT\(s\)\.P99&quot;\]" data-value="0\.001"/,
  );
  const bad = await runCheckTask([`${base}s.yaml`, "--report-dir", `${base}s.yaml`]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^check: --report-dir: .*s\.yaml is not a folder/);
});

Deno.test("compare: a snapshot's variant keys and capacity answers keep their direction; a malformed document is named", () => {
  const keys = [
    "agg.request_throughput(req/s)",
    "disagg.TTFT(s).P99",
    "agg.preemptions",
    "max_rate_meeting",
    "min_value_meeting",
    "total_input_tokens",
  ];
  const snap = Object.fromEntries(keys.map((k) => [k, 1]));
  assert.deepEqual(
    Object.fromEntries(snapshotMetricRows(snap, snap).map((r) => [r.metric, r.better])),
    {
      "agg.preemptions": "lower",
      "agg.request_throughput(req/s)": "higher",
      "disagg.TTFT(s).P99": "lower",
      max_rate_meeting: "higher",
      min_value_meeting: "lower",
      total_input_tokens: "none",
    },
  );
  const doc = JSON.parse(runJson(run(EXAMPLE)));
  assert.equal(runDocumentProblem(doc), undefined);
  assert.equal(runDocumentProblem({ ...doc, groups: 5 }), "groups: Invalid input: expected array, received number");
  assert.equal(
    runDocumentProblem({ ...doc, groups: [null] }),
    "groups.0: Invalid input: expected object, received null",
  );
  assert.equal(
    runDocumentProblem({ ...doc, distributions: { seconds: null } }),
    "distributions.seconds: Invalid input: expected record, received null",
  );
});

Deno.test("check --report-dir on a scenario with variants: their runs overlaid, then each variant's own charts, ids unique", async () => {
  const dir = writeTemp({});
  const r = await runCheckTask([`${ROOT}scenarios/pd_vs_aggregated.yaml`, "--report-dir", dir]);
  assert.equal(r.code, 0, r.stderr);
  const html = Deno.readTextFileSync(`${dir}pd-vs-aggregated-long-prompts.html`);
  assert.match(html, /<h2>Variants compared: agg, disagg, disagg_slow_link<\/h2>/);
  for (const v of ["agg", "disagg", "disagg_slow_link"]) assert.match(html, new RegExp(`<h2>Variant ${v}</h2>`));
  assert.match(html, /data-chart="disagg-kv_transfers_in_flight"/);
  const ids = [...html.matchAll(/data-chart="([^"]+)"/g)].map((m) => m[1]);
  assert.equal(new Set(ids).size, ids.length, "chart ids are unique");
});

Deno.test("run report: an engine run's page carries the prediction intervals of its headline figures, the JSON's", async () => {
  const dir = writeTemp({
    "i.yaml": Deno.readTextFileSync(EXAMPLE[0]),
    "c.yaml": Deno.readTextFileSync(EXAMPLE[1]).replace("serving_config:\n", "serving_config:\n  engine: vllm\n"),
  });
  const out = run([`${dir}i.yaml`, `${dir}c.yaml`]);
  const doc = JSON.parse(runJson(out));
  const html = await runReportHtml(out, "engine");
  assert.match(html, /Prediction intervals, 80%: where the measured value lies/);
  const ttft = doc.prediction_intervals.metrics["TTFT(s).MEDIAN"];
  for (const k of ["simulated", "low", "high"]) {
    const path = JSON.stringify(["prediction_intervals", "metrics", "TTFT(s).MEDIAN", k]).replaceAll('"', "&quot;");
    assert.ok(html.includes(`data-json="${path}" data-value="${ttft[k]}"`), `${k} cell`);
  }
  // The example names no engine: no intervals, no table.
  assert.doesNotMatch(await runReportHtml(run(EXAMPLE), "example"), /Prediction intervals/);
});
