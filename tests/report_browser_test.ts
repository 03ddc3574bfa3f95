/**
 * The HTML reports in a real browser (issue 13): each page opens from a file:// URL in headless Chromium with no
 * console or page error and no request beyond file: and data:, draws every chart as an inline Vega SVG with marks,
 * and shows summary numbers equal to the run's `--output_json` (the contract is in tests/_browser.ts).
 *
 * One Chromium for the whole file, one step per page. The checker first proves itself on a hand-made fixture
 * (tests/testdata/report_fixture.html + .json): the fixture passes, and broken copies of it fail. The real pages are
 * made in-process by the command line: `deno task sim --report …` (the bundled example, and a prefill/decode
 * deployment) and `deno task compare a.json b.json --report …`.
 * Without Chromium (`.ci/run` installs Debian's `chromium`) the browser steps are skipped with a loud notice.
 */
import assert from "node:assert/strict";
import { numberProblems, parseShownNumber, ReportChecker, resolveJsonPath } from "./_browser.ts";
import type { JsonSources, PageCheck } from "./_browser.ts";
import { captureTaskAsync, ROOT, runCheckTask, runCli } from "./_helpers.ts";
import type { CliRun } from "./_helpers.ts";
import { findChromium, launchChromium, runScreenshot, screenshotPage } from "../tools/screenshot.ts";
import { runCompare } from "../tools/compare.ts";
import { runPlan } from "../tools/plan.ts";
import { runCalibrate } from "../tools/calibrate.ts";

const FIXTURE_HTML = `${ROOT}tests/testdata/report_fixture.html`;
const FIXTURE_JSON = `${ROOT}tests/testdata/report_fixture.json`;
/** A prefill/decode deployment (1 prefill, 2 decode H100s) and its scenario's common file. */
const PD_ARGS = [
  "--instance_config_path",
  `${ROOT}scenarios/configs/h100_pd_1p2d.yaml`,
  "--common_config_path",
  `${ROOT}scenarios/configs/llama8b_long_prompt.yaml`,
];

const readJson = (path: string): unknown => JSON.parse(Deno.readTextFileSync(path));

// ---------------------------------------------------------------------------------------------------------------
// The checker's pure parts (no browser).

Deno.test("report checker: data-json paths, dotted or JSON arrays, resolve keys with '(', ')', '/' and '.'", () => {
  const json = readJson(FIXTURE_JSON);
  assert.deepEqual(resolveJsonPath(json, "overall_summary.total_requests"), { value: 1000 });
  assert.deepEqual(resolveJsonPath(json, "overall_summary.request_throughput(req/s)"), { value: 15.19643997255766 });
  assert.deepEqual(resolveJsonPath(json, "per_metric_summary.TTFT(s).P99.9"), { value: 0.0792509759999999 });
  assert.deepEqual(resolveJsonPath(json, "per_metric_summary.TTFT(s).P98"), { error: "no such path" });
  assert.deepEqual(resolveJsonPath({ "a.b": 1, a: { b: 2 } }, "a.b"), { error: "ambiguous path (2 matches)" });
  assert.deepEqual(resolveJsonPath(json, ""), { error: "no such path" });
  assert.deepEqual(resolveJsonPath(json, `["per_metric_summary","TTFT(s)","P99.9"]`), { value: 0.0792509759999999 });
  assert.deepEqual(resolveJsonPath({ g: [{ n: 7 }] }, `["g",0,"n"]`), { value: 7 });
  assert.deepEqual(resolveJsonPath(json, `["per_metric_summary","TTFT(s)","P99","x"]`), { error: "no such path" });
  assert.deepEqual(resolveJsonPath(json, `["overall_summary",`), { error: "not a JSON array of keys" });
  assert.deepEqual(resolveJsonPath(json, `[["overall_summary"]]`), { error: "not a JSON array of keys" });
});

Deno.test("report checker: a shown number and the rounding its decimals imply", () => {
  assert.deepEqual(parseShownNumber("1,024,000"), { shown: 1024000, halfUnit: 0.5 });
  assert.deepEqual(parseShownNumber(" 15.20 req/s"), { shown: 15.2, halfUnit: 0.005 });
  assert.deepEqual(parseShownNumber("\u22120.5"), { shown: -0.5, halfUnit: 0.05 });
  assert.deepEqual(parseShownNumber("9.756e-3 s"), { shown: 0.009756, halfUnit: 0.5e-6 });
  assert.deepEqual(parseShownNumber("1\u202f024"), { shown: 1024, halfUnit: 0.5 });
  assert.equal(parseShownNumber("n/a"), undefined);
});

Deno.test("report checker: a number element against its JSON, by side", () => {
  const sources: JsonSources = { a: { x: { "P99.9": 15.19643997255766 } }, b: { x: { "P99.9": 3 } } };
  const el = (side: string | null, value: string | null, text: string) => ({ path: "x.P99.9", side, value, text });
  assert.deepEqual(numberProblems(el("a", "15.19643997255766", "15.2"), sources), []);
  assert.deepEqual(numberProblems(el("b", "3", "3.000"), sources), []);
  assert.match(numberProblems(el("a", "15.19643997255766", "15.19"), sources).join(), /is 15\.19, not JSON/);
  assert.match(numberProblems(el("a", "15.2", "15.2"), sources).join(), /data-value "15\.2" ≠ JSON/);
  assert.match(numberProblems(el("a", null, "15.2"), sources).join(), /data-value null/);
  assert.match(numberProblems(el("b", "15.19643997255766", "15.2"), sources).join(), /data-value.*text/s);
  assert.match(numberProblems(el(null, "3", "3"), sources).join(), /data-side must be one of "a", "b"/);
  assert.match(numberProblems(el("a", "1", "—"), { a: { x: { "P99.9": "1" } } }).join(), /not a number/);
});

Deno.test("deno task screenshot: bad arguments are one line, exit 2 (before any browser starts)", async () => {
  for (
    const args of [
      [],
      [FIXTURE_HTML],
      [`${ROOT}no_such_page.html`, "out.png"],
      [FIXTURE_HTML, "out.jpg"],
      [FIXTURE_HTML, `${ROOT}no_such_folder/out.png`],
      [FIXTURE_HTML, "out.png", "--width", "wide"],
      ["--bogus"],
    ]
  ) {
    const r = await captureTaskAsync(runScreenshot, args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /^screenshot: [^\n]+\(deno task screenshot --help\)\n$/, args.join(" "));
  }
  const help = await captureTaskAsync(runScreenshot, ["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: deno task screenshot PAGE\.html OUT\.png/);
});

// ---------------------------------------------------------------------------------------------------------------
// The pages in Chromium.

const CHROMIUM = findChromium();
/**
 * Without Chromium the browser test is ignored, loudly: `deno task test` runs with --quiet, which hides everything a
 * test prints, so the notice is the test's own name (and .ci/run repeats it at the end); console.error is for
 * `deno test` without --quiet.
 */
const NO_CHROMIUM =
  "SKIPPED (no chromium): the HTML reports were NOT checked in a browser; install Debian's chromium " +
  "(apt-get install -y chromium: /usr/bin/chromium or chromium on the PATH)";
if (CHROMIUM === undefined) console.error(NO_CHROMIUM);

/** `deno task compare` in this process. */
type CompareRunner = (args: string[]) => Promise<CliRun>;
const COMPARE: CompareRunner = (args) => captureTaskAsync(runCompare, args);

/** Fails with every problem of the page, one per line. */
function assertPasses(check: PageCheck, what: string): void {
  assert.deepEqual(check.problems, [], `${what} breaks the report contract:\n  ${check.problems.join("\n  ")}`);
}

/** Runs `deno task sim ...args --report DIR/report.html --output_json DIR/run.json` in-process and checks the page. */
async function checkRunReport(checker: ReportChecker, dir: string, args: string[]): Promise<string> {
  await Deno.mkdir(dir, { recursive: true });
  const html = `${dir}/report.html`;
  const json = `${dir}/run.json`;
  const r = await runCli([...args, "--report", html, "--output_json", json]);
  assert.equal(r.code, 0, `deno task sim ${args.join(" ")} --report failed:\n${r.stderr}`);
  const check = await checker.check(html, { run: readJson(json) }, { minNumbers: 10 });
  assertPasses(check, html);
  return json;
}

/** Runs `deno task compare a.json b.json --report DIR/diff.html` and checks the page against both files. */
async function checkCompareReport(checker: ReportChecker, run: CompareRunner, dir: string, a: string, b: string) {
  await Deno.mkdir(dir, { recursive: true });
  const html = `${dir}/diff.html`;
  const r = await run([a, b, "--report", html]);
  assert.equal(r.code, 0, `deno task compare ${a} ${b} --report failed:\n${r.stderr}`);
  const check = await checker.check(html, { a: readJson(a), b: readJson(b) }, { minNumbers: 10 });
  assertPasses(check, html);
  assert.ok((check.sides.a ?? 0) > 0 && (check.sides.b ?? 0) > 0, `${html}: expected numbers of both sides`);
}

/** The run JSON of `deno task sim ...args`, for the comparison when the run reports are not there to make it. */
async function runJsonOnly(dir: string, args: string[]): Promise<string> {
  await Deno.mkdir(dir, { recursive: true });
  const json = `${dir}/run.json`;
  const r = await runCli([...args, "--output_json", json]);
  assert.equal(r.code, 0, r.stderr);
  return json;
}

/** A broken copy of the fixture and what the checker must say about it. */
interface BrokenFixture {
  readonly name: string;
  readonly edit: (html: string) => string;
  readonly expect: RegExp;
  readonly minNumbers?: number;
}

const replaceOnce = (html: string, from: string | RegExp, to: string): string => {
  const out = html.replace(from, to);
  assert.notEqual(out, html, `fixture edit found no ${from}`);
  return out;
};

const BROKEN: readonly BrokenFixture[] = [
  {
    name: "a console error",
    edit: (h) => replaceOnce(h, "</body>", `<script>console.error("deliberate error")</script></body>`),
    expect: /^console error: deliberate error$/m,
  },
  {
    name: "an uncaught error",
    edit: (h) => replaceOnce(h, "</body>", `<script>notDefinedAnywhere()</script></body>`),
    expect: /^page error: .*notDefinedAnywhere/m,
  },
  {
    name: "an http request",
    edit: (h) => replaceOnce(h, "</body>", `<img src="http://192.0.2.1/logo.png" alt=""></body>`),
    expect: /^network request outside file: and data: \(aborted\): http:\/\/192\.0\.2\.1\/logo\.png$/m,
  },
  {
    name: "an empty SVG",
    edit: (h) => replaceOnce(h, /<svg [\s\S]*?<\/svg>/, `<svg xmlns="http://www.w3.org/2000/svg" width="10"></svg>`),
    expect: /^chart "ttft_percentiles": the <svg> has no mark/m,
  },
  {
    name: "a chart as an image",
    edit: (h) =>
      replaceOnce(h, /<svg [\s\S]*?<\/svg>/, `<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="">`),
    expect: /^chart "ttft_percentiles": no inline <svg>$/m,
  },
  {
    name: "no charts",
    edit: (h) => h.replaceAll(`<figure class="chart"`, `<figure class="plot"`),
    expect: /^no <figure class="chart" data-chart="ID"> in the page$/m,
  },
  {
    name: "a wrong data-value",
    edit: (h) => replaceOnce(h, `data-value="1000">1,000`, `data-value="999">1,000`),
    expect: /^\[data-json="overall_summary\.total_requests"\]: data-value "999" ≠ JSON 1000$/m,
  },
  {
    name: "a wrong shown number",
    edit: (h) => replaceOnce(h, ">15.20 req/s<", ">15.19 req/s<"),
    expect: /request_throughput\(req\/s\)"\]: the text "15\.19 req\/s" is 15\.19, not JSON 15\.196/m,
  },
  {
    name: "a path not in the JSON",
    edit: (h) =>
      replaceOnce(h, `data-json="per_metric_summary.TTFT(s).P99"`, `data-json="per_metric_summary.TTFT.P99"`),
    expect: /TTFT\.P99"\]: no such path in the run's JSON/m,
  },
  { name: "too few numbers", edit: (h) => h, minNumbers: 14, expect: /^13 \[data-json\] numbers in the page/m },
  {
    name: "a page wider than the window",
    edit: (h) => replaceOnce(h, "</body>", `<pre>${"x".repeat(400)}</pre></body>`),
    expect: /^the page is \d+ px wide at a 1280 px window$/m,
  },
  {
    name: "a label cut short",
    edit: (h) => replaceOnce(h, ">TTFT (s)</text>", ">TTFT from arri…</text>"),
    expect: /^chart "ttft_percentiles": text cut by its SVG: "TTFT from arri…"$/m,
  },
  {
    name: "text outside its chart",
    edit: (h) => replaceOnce(h, 'transform="translate(160,52)"', 'transform="translate(160,900)"'),
    expect: /^chart "token_throughput": text cut by its SVG: "tokens"$/m,
  },
  {
    name: "an axis title without a unit",
    edit: (h) => replaceOnce(h, ">throughput (tok/s)</text>", ">throughput</text>"),
    expect: /^chart "token_throughput": axis title "throughput" names no unit$/m,
  },
];

Deno.test({
  name: CHROMIUM === undefined ? NO_CHROMIUM : "HTML reports in headless Chromium",
  ignore: CHROMIUM === undefined,
  fn: async (t) => {
    const dir = await Deno.makeTempDir({ prefix: "servingcast-report-browser-" });
    const chromium = await launchChromium(CHROMIUM!);
    const checker = new ReportChecker(chromium.browser);
    try {
      const fixture = { run: readJson(FIXTURE_JSON) };

      await t.step("the fixture passes the checker", async () => {
        const check = await checker.check(FIXTURE_HTML, fixture, { minNumbers: 10 });
        assertPasses(check, FIXTURE_HTML);
        assert.equal(check.numbers, 13);
        assert.deepEqual(Object.keys(check.charts), ["ttft_percentiles", "token_throughput"]);
        for (const [id, marks] of Object.entries(check.charts)) assert.ok(marks >= 1, `${id}: ${marks} marks`);
      });

      const source = await Deno.readTextFile(FIXTURE_HTML);
      await t.step("the checker fails a fixture with …", async (t) => {
        for (const [i, b] of BROKEN.entries()) {
          await t.step(b.name, async () => {
            const path = `${dir}/broken_${i}.html`;
            await Deno.writeTextFile(path, b.edit(source));
            const check = await checker.check(path, fixture, {
              minNumbers: b.minNumbers ?? 10,
              settleMs: 100,
            });
            assert.match(check.problems.join("\n"), b.expect, `problems found:\n  ${check.problems.join("\n  ")}`);
          });
        }
      });

      await t.step("deno task screenshot renders the whole page, 1280 px wide", async () => {
        const shot = await screenshotPage(chromium.browser, FIXTURE_HTML);
        assert.deepEqual([...shot.png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
        const ihdr = new DataView(shot.png.buffer, shot.png.byteOffset + 16, 8);
        assert.equal(ihdr.getUint32(0), 1280);
        assert.equal(ihdr.getUint32(4), shot.pageHeight);
        assert.ok(shot.pageHeight > 400, `page height ${shot.pageHeight}`);
      });

      // The real pages, made in-process by the command line: one call each.
      let exampleJson: string | undefined;
      let pdJson: string | undefined;
      await t.step("deno task sim --report (the bundled example)", async () => {
        exampleJson = await checkRunReport(checker, `${dir}/example`, []);
      });
      await t.step("deno task sim --report (prefill/decode: h100_pd_1p2d + llama8b_long_prompt)", async () => {
        pdJson = await checkRunReport(checker, `${dir}/pd`, PD_ARGS);
      });
      await t.step("deno task check --report-dir (the PD scenario llama8b_long_prompt_pd.yaml)", async () => {
        const out = `${dir}/check`;
        const r = await runCheckTask([
          `${ROOT}scenarios/llama8b_long_prompt_pd.yaml`,
          "--report-dir",
          out,
          "--json-dir",
          out,
        ]);
        assert.equal(r.code, 0, r.stderr);
        const html = `${out}/llama8b-long-prompt-pd-1p2d.html`;
        const check = await checker.check(html, { run: readJson(`${out}/llama8b-long-prompt-pd-1p2d.json`) }, {
          minNumbers: 10,
        });
        assertPasses(check, html);
        assert.ok("kv_transfers_in_flight" in check.charts, "a PD page charts the KV transfers in flight");
      });
      await t.step("deno task check --report-dir (a capacity sweep: llama8b_h100_fewest_instances.yaml)", async () => {
        const out = `${dir}/sweep`;
        const r = await runCheckTask([`${ROOT}scenarios/llama8b_h100_fewest_instances.yaml`, "--report-dir", out]);
        assert.equal(r.code, 0, r.stderr);
        const check = await checker.check(`${out}/llama8b-h100-fewest-instances.html`, {});
        assertPasses(check, `${out}/llama8b-h100-fewest-instances.html`);
        assert.ok("sweep-ttft.p99" in check.charts, Object.keys(check.charts).join(", "));
      });
      await t.step("deno task plan --report-dir (Llama-3.1-8B on H100 at 45 req/s)", async () => {
        const out = `${dir}/plan`;
        const r = await captureTaskAsync(runPlan, [
          "--common_config_path",
          `${ROOT}scenarios/configs/llama8b_chat.yaml`,
          "--target_rate",
          "45",
          "--slo",
          "ttft.p99<=0.5",
          "--devices",
          "H100_SXM_80G,H200_SXM_141G",
          "--tp",
          "1,2",
          "--topology",
          "agg,disagg",
          "--workers",
          "1",
          "--report-dir",
          out,
        ]);
        assert.equal(r.code, 0, r.stderr);
        // The winner's run is embedded, its JSON not written: the layout and charts are checked, not its numbers.
        const check = await checker.check(`${out}/plan.html`, {}, { numbers: false });
        assertPasses(check, `${out}/plan.html`);
        assert.ok("pareto" in check.charts);
      });
      await t.step("deno task calibrate --scenarios … --report (TensorRT-LLM TTFT rows, three devices)", async () => {
        const out = `${dir}/calibrate`;
        const r = await captureTaskAsync(runCalibrate, [
          "--scenarios",
          `${ROOT}scenarios/validation/trtllm-ttft-*.yaml`,
          "--fit",
          "matmul,attention,step_overhead",
          "--folds",
          "2",
          "--iterations",
          "3",
          "--output",
          out,
          "--report",
          `${dir}/calibration.html`,
        ]);
        assert.equal(r.code, 0, r.stderr);
        const check = await checker.check(`${dir}/calibration.html`, {}, { numbers: false });
        assertPasses(check, `${dir}/calibration.html`);
        assert.deepEqual(Object.keys(check.charts), ["errors-0", "errors-1", "errors-2"]);
      });
      await t.step("deno task compare example.json pd.json --report", async () => {
        const a = exampleJson ?? await runJsonOnly(`${dir}/example`, []);
        const b = pdJson ?? await runJsonOnly(`${dir}/pd`, PD_ARGS);
        await checkCompareReport(checker, COMPARE, `${dir}/compare`, a, b);
      });
    } finally {
      await checker.close();
      await chromium.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
