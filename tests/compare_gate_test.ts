/**
 * `deno task compare` as a gate: a threshold (for all metrics or one), an
 * exit code on a regression beyond it, MIN and MAX left out by default, and
 * the markdown, github and json formats.
 */
import assert from "node:assert/strict";
import { ROOT } from "./_helpers.ts";
import { captureTaskAsync } from "./_helpers.ts";
import { runFiles } from "../core/assembly/run.ts";
import { runJson } from "../core/report/run_json.ts";
import { runCompare } from "../tools/compare.ts";

/** The bundled example's run document, and a copy with TTFT P99 10% worse and TPOT MIN 0.1% worse. */
function documents(): { a: string; b: string } {
  const text = runJson(runFiles([`${ROOT}examples/instances.yaml`], `${ROOT}examples/common.yaml`));
  const doc = JSON.parse(text);
  doc.ext_metric_summary["TTFT_FROM_ARRIVAL(s)"].P99 *= 1.1;
  doc.per_metric_summary["TPOT(s)"].MIN *= 1.001;
  const dir = Deno.makeTempDirSync({ prefix: "servingcast-compare-" });
  Deno.writeTextFileSync(`${dir}/a.json`, text);
  Deno.writeTextFileSync(`${dir}/b.json`, JSON.stringify(doc));
  return { a: `${dir}/a.json`, b: `${dir}/b.json` };
}

const compare = (args: string[]) => captureTaskAsync(runCompare, args);

Deno.test("compare --threshold 5% --fail-on worse: exit 1 on a 10% TTFT regression, 0 on a 0.1% MIN change", async () => {
  const { a, b } = documents();
  const gate = await compare([a, b, "--threshold", "5%", "--fail-on", "worse"]);
  assert.equal(gate.code, 1);
  assert.match(gate.stdout, /^TTFT_FROM_ARRIVAL\(s\)\.P99 +\S+ +\S+ +\S+ +\+10\.0% +worse$/m);
  // MIN is not judged by default: no mark, whatever the threshold.
  assert.match(gate.stdout, /^TPOT\(s\)\.MIN +\S+ +\S+ +\S+ +\+0\.1%$/m);
  assert.equal(gate.stderr, "compare: 1 metric(s) got worse beyond their threshold\n");
  // A threshold above the change for that metric alone: no regression.
  const loose = await compare([a, b, "--threshold", "5%", "--threshold", "ttft.p99=15%", "--fail-on", "worse"]);
  assert.equal(loose.code, 0);
  // Without --fail-on the change is reported, the exit code stays 0.
  assert.equal((await compare([a, b, "--threshold", "5%"])).code, 0);
  // MIN judged on request: at no threshold, its 0.1% counts.
  const all = await compare([a, b, "--all-statistics", "--fail-on", "worse", "--threshold", "ttft.p99=15%"]);
  assert.equal(all.code, 1);
  assert.match(all.stdout, /^TPOT\(s\)\.MIN .*worse$/m);
});

Deno.test("compare --format: markdown lists the changes, github annotates each regression, json holds every verdict", async () => {
  const { a, b } = documents();
  const md = await compare([a, b, "--threshold", "5%", "--format", "markdown"]);
  assert.equal(md.code, 0);
  assert.match(md.stdout, /^\*\*1 regression\*\*$/m);
  assert.match(md.stdout, /^\| TTFT_FROM_ARRIVAL\(s\)\.P99 \| .* \| \+10\.0% \| \*\*worse\*\* \|$/m);
  const gh = await compare([a, b, "--threshold", "5%", "--format", "github", "--fail-on", "worse"]);
  assert.equal(gh.code, 1);
  assert.match(
    gh.stdout,
    /^::error title=compare%3A TTFT_FROM_ARRIVAL\(s\)\.P99::TTFT_FROM_ARRIVAL\(s\)\.P99 got worse: [\d.]+ → [\d.]+ \(\+10\.0%25, beyond its 5%25 threshold\)$/m,
  );
  const warn = await compare([a, b, "--threshold", "5%", "--format", "github"]);
  assert.match(warn.stdout, /^::warning title=compare%3A TTFT_FROM_ARRIVAL/m);
  const json = JSON.parse((await compare([a, b, "--threshold", "5%", "--format", "json"])).stdout);
  assert.equal(json.regressions, 1);
  const ttft = json.metrics.find((m: { metric: string }) => m.metric === "TTFT_FROM_ARRIVAL(s).P99");
  assert.equal(ttft.verdict, "worse");
  assert.ok(Math.abs(ttft.relative - 0.1) < 1e-9);
});

Deno.test("compare: a bad threshold, --fail-on or --format is one usage line, exit 2", async () => {
  const { a, b } = documents();
  for (
    const [args, want] of [
      [["--threshold", "5"], "--threshold: expected a percentage (5%) or METRIC=PERCENT (ttft.p99=10%), got '5'"],
      [["--threshold", "ttfx.p99=5%"], "--threshold: unknown metric 'ttfx.p99'"],
      [["--fail-on", "better"], "--fail-on: expected 'worse', got 'better'"],
      [["--format", "xml"], "--format: expected one of table, markdown, github, json, got 'xml'"],
    ] as const
  ) {
    const r = await compare([a, b, ...args]);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, `compare: ${want} (deno task compare --help)\n`);
  }
});
