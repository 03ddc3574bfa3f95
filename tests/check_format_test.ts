/**
 * What CI reviewers see (issue 14): `deno task check --format
 * github|junit|json|markdown`, and the Markdown job summary appended to
 * `$GITHUB_STEP_SUMMARY`. In-process; tests that set the environment
 * restore it, the others hand `runCheck` their own variables.
 */
import assert from "node:assert/strict";
import { captureTaskAsync, ROOT, runCheckTask, writeTemp } from "./_helpers.ts";
import type { CliRun } from "./_helpers.ts";
import { runCheck } from "../scenarios/check.ts";
import { loadScenario, runScenario } from "../core/scenario/mod.ts";
import type { ScenarioResult } from "../core/scenario/mod.ts";
import { formatBaseline } from "../core/scenario/baseline.ts";
import {
  escapeData,
  escapeProperty,
  MARKDOWN_HEADER,
  workflowCommand,
  workspacePath,
  xmlAttribute,
  xmlText,
} from "../core/report/ci_formats.ts";

const CONFIGS = `${ROOT}scenarios/configs/`;

/** A small chat run (50 requests on one H100) with `body` after its configs: ttft.p99 is on line 7. */
const scenario = (name: string, body: string) =>
  `name: ${name}
instance_config: ${CONFIGS}h100_tp1_x1.yaml
common_config: ${CONFIGS}llama8b_chat.yaml
overrides:
  load_gen.num_requests: 50
${body}`;

/** Fails its p99 TTFT (line 7, column 3); holds its request count. */
const FAILING = scenario("tiny-fail", `expect:\n  ttft.p99: "< 1ms"\n  total_requests: "== 50"\n`);
/** Passes. */
const PASSING = scenario("tiny-pass", `expect:\n  total_requests: "== 50"\n`);
/** Bad input: an override out of range (line 5, column 37). */
const BAD = scenario("bad", `expect:\n  ttft.p99: "< 1"\n`).replace(
  "load_gen.num_requests: 50",
  "serving_config.max_tokens_budget: -5",
);

/** Runs the task in-process with `vars` as its whole environment. */
function runWith(vars: Record<string, string>, args: string[]): Promise<CliRun> {
  return captureTaskAsync((a, io) => runCheck(a, io, (name) => vars[name]), args);
}

/** Sets environment variables for `fn`, then restores them as they were. */
async function withEnv<T>(vars: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, Deno.env.get(k)]));
  try {
    for (const [k, v] of Object.entries(vars)) Deno.env.set(k, v);
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(before)) v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v);
  }
}

/** A value as a check message prints it. */
const shown = (x: number) => String(Number(x.toPrecision(6)));
/** A figure as the Markdown table prints it. */
const figure = (x: number, unit: string) => `${Number(x.toPrecision(3))}${unit}`;

/** The Markdown row of a single run. */
function row(r: ScenarioResult, mark: string): string {
  const m = r.output.summary;
  return `| \`${r.scenario.name}\` | ${mark} | ${figure(m.extMetric["TTFT_FROM_ARRIVAL(s)"].P99, " s")} | ${
    figure(m.perMetric["TPOT(s)"].P99, " s")
  } | ${figure(m.overall["output_token_throughput(tok/s)"], " tok/s")} |`;
}

/** The wall times of the table's lines blanked. */
const noTimes = (text: string) => text.replace(/\(\d+\.\d\d s\)/g, "(… s)");

Deno.test("--format github: an ::error per failed assertion at its path from GITHUB_WORKSPACE; the summary appended to GITHUB_STEP_SUMMARY", async () => {
  const dir = writeTemp({ "summary.md": "# an earlier step\n" });
  Deno.mkdirSync(`${dir}scenarios`);
  Deno.writeTextFileSync(`${dir}scenarios/fail.yaml`, FAILING);
  Deno.writeTextFileSync(`${dir}scenarios/pass.yaml`, PASSING);
  const failing = runScenario(loadScenario(`${dir}scenarios/fail.yaml`));
  const passing = runScenario(loadScenario(`${dir}scenarios/pass.yaml`));
  // In the unit of its bound (< 1ms): milliseconds.
  const got = `${shown(failing.checks[0].actual * 1000)}ms`;

  const run = await withEnv(
    { GITHUB_WORKSPACE: dir, GITHUB_STEP_SUMMARY: `${dir}summary.md` },
    // The task's own reading of the process environment (runCheckTask gives a test's variables only).
    () => captureTaskAsync(runCheck, ["--format", "github", `${dir}scenarios/fail.yaml`, `${dir}scenarios/pass.yaml`]),
  );
  assert.equal(run.code, 1, run.stderr);
  const lines = run.stdout.trimEnd().split("\n");
  assert.equal(lines.length, 3, run.stdout);
  assert.match(lines[0], /^FAIL {2}tiny-fail {2}ttft\.p99=/);
  assert.equal(
    lines[1],
    `::error file=scenarios/fail.yaml,line=7,col=3,title=tiny-fail%3A expect.ttft.p99 < 1ms::` +
      `expect.ttft.p99: expected TTFT_FROM_ARRIVAL(s).P99 < 1ms, got ${got}`,
  );
  assert.match(lines[2], /^PASS {2}tiny-pass {2}ttft\.p99=/);
  // stderr as without --format: the failed assertion's message.
  assert.equal(
    run.stderr,
    `${dir}scenarios/fail.yaml:7:3: expect.ttft.p99: expected TTFT_FROM_ARRIVAL(s).P99 < 1ms, got ${got}\n`,
  );

  const summary = Deno.readTextFileSync(`${dir}summary.md`);
  assert.ok(summary.startsWith("# an earlier step\n### ServingCast scenarios\n"), summary);
  const table = [
    MARKDOWN_HEADER,
    "| :--- | :---: | ---: | ---: | ---: |",
    row(failing, "❌"),
    row(passing, "✅"),
  ].join("\n");
  assert.ok(summary.includes(`❌ **1 of 2 scenarios failed**\n\n${table}\n`), summary);
  assert.ok(
    summary.includes(
      "#### ❌ `tiny-fail` (`scenarios/fail.yaml`)\n\n" +
        `- \`scenarios/fail.yaml:7:3\` \`expect.ttft.p99: expected TTFT_FROM_ARRIVAL(s).P99 < 1ms, got ${got}\`\n`,
    ),
    summary,
  );
  assert.equal(
    MARKDOWN_HEADER,
    "| Scenario | Result | p99 TTFT from arrival | p99 TPOT | Output throughput |",
  );
});

Deno.test("--format github: bad input is an ::error at the problem; a file outside the workspace keeps its path", async () => {
  const dir = writeTemp({ "bad.yaml": BAD });
  const inside = await runWith({ GITHUB_WORKSPACE: dir }, ["--format", "github", `${dir}bad.yaml`]);
  assert.equal(inside.code, 2);
  assert.equal(
    inside.stdout,
    "FAIL  " + `${dir}bad.yaml  (bad input)\n` +
      "::error file=bad.yaml,line=5,col=37,title=bad.yaml%3A bad input::" +
      "serving_config.max_tokens_budget: expected a positive integer, got -5\n",
  );
  assert.equal(
    inside.stderr,
    `${dir}bad.yaml:5:37: serving_config.max_tokens_budget: expected a positive integer, got -5\n`,
  );
  const elsewhere = writeTemp({});
  const outside = await runWith({ GITHUB_WORKSPACE: elsewhere }, ["--format", "github", `${dir}bad.yaml`]);
  assert.match(outside.stdout, new RegExp(`^::error file=${dir}bad\\.yaml,line=5,col=37,title=`, "m"));
  assert.equal(workspacePath("../x/s.yaml", { root: "/repo", cwd: "/repo/a" }), "x/s.yaml");
  assert.equal(workspacePath("s.yaml", { root: "/repo", cwd: "/elsewhere" }), "s.yaml");
  assert.equal(workspacePath("/elsewhere/s.yaml", { root: "/repo", cwd: "/repo" }), "/elsewhere/s.yaml");
  assert.equal(workspacePath("/repo/scenarios/s.yaml", { root: "/repo/", cwd: "/" }), "scenarios/s.yaml");
});

Deno.test("workflow commands escape %, CR and LF in the message, and : and , too in properties", () => {
  assert.equal(escapeData("50% of\r\nthe rest"), "50%25 of%0D%0Athe rest");
  assert.equal(escapeProperty("a: b, 5%\n"), "a%3A b%2C 5%25%0A");
  assert.equal(
    workflowCommand("error", { file: "s,1.yaml", line: 3, col: undefined, title: "x: y" }, "line 1\nline 2: 10%"),
    "::error file=s%2C1.yaml,line=3,title=x%3A y::line 1%0Aline 2: 10%25",
  );
});

Deno.test("a failed baseline: one ::error line with its table escaped, and the changed metrics as a Markdown table", async () => {
  const dir = writeTemp({});
  Deno.mkdirSync(`${dir}__baselines__`);
  Deno.writeTextFileSync(`${dir}s.yaml`, scenario("gate", "baseline: {tolerance: 0.05}\n"));
  const snap = runScenario({ ...loadScenario(`${dir}s.yaml`), baseline: undefined }).snapshot;
  snap["output_token_throughput(tok/s)"] *= 2;
  Deno.writeTextFileSync(`${dir}__baselines__/gate.json`, formatBaseline(snap));
  const run = await runWith({ GITHUB_WORKSPACE: dir, GITHUB_STEP_SUMMARY: `${dir}summary.md` }, [
    "--format",
    "github",
    `${dir}s.yaml`,
  ]);
  assert.equal(run.code, 1, run.stderr);
  const errors = run.stdout.split("\n").filter((l) => l.startsWith("::error"));
  assert.equal(errors.length, 1, run.stdout);
  const [error] = errors;
  assert.ok(
    error.startsWith(
      "::error file=s.yaml,line=6,col=1,title=gate%3A baseline::baseline: 1 of ",
    ),
    error,
  );
  assert.ok(
    error.includes(
      ` metrics moved beyond their tolerance (${dir}__baselines__/gate.json; if intended, run \`deno task baseline ${dir}s.yaml\`)`,
    ),
    error,
  );
  assert.match(error, /\)%0A {2}metric +baseline +now +change +tolerance%0A {2}output_token_throughput\(tok\/s\) /);
  assert.match(error, / -50\.0%25 {2}-5\.0%25 min$/);
  // Unescaped, the annotation's message is the check's (stderr's) without its location.
  const message = error.slice(error.indexOf("::", 2) + 2);
  const decoded = message.replace(/%(25|0A|0D)/g, (_, c) => ({ "25": "%", "0A": "\n", "0D": "\r" })[c as string]!);
  assert.equal(`${dir}s.yaml:6:1: ${decoded}\n`, run.stderr);
  assert.match(decoded, /\n {2}metric +baseline/);

  const summary = Deno.readTextFileSync(`${dir}summary.md`);
  assert.match(summary, /\n\| `gate` \| ❌ \| [\d.]+ s \| [\d.]+ s \| [\d.]+ tok\/s \|\n/);
  assert.ok(
    summary.includes("\n  | Metric | Before | After | Change | Tolerance |\n  | :--- | ---: | ---: | ---: | ---: |\n"),
    summary,
  );
  const before = snap["output_token_throughput(tok/s)"];
  assert.ok(
    summary.includes(
      `\n  | \`output_token_throughput(tok/s)\` | ${before.toFixed(1)} | ${
        (before / 2).toFixed(1)
      } | -50.0% | -5.0% min |`,
    ),
    summary,
  );
});

Deno.test("an unwritable GITHUB_STEP_SUMMARY is one line on stderr and changes neither stdout nor the exit code", async () => {
  const dir = writeTemp({ "fail.yaml": FAILING, "pass.yaml": PASSING });
  for (const [file, code] of [["fail.yaml", 1], ["pass.yaml", 0]] as const) {
    const plain = await runWith({}, [`${dir}${file}`]);
    const run = await runWith({ GITHUB_STEP_SUMMARY: `${dir}no/such/folder/summary.md` }, [`${dir}${file}`]);
    assert.equal(plain.code, code);
    assert.equal(run.code, code);
    assert.equal(noTimes(run.stdout), noTimes(plain.stdout));
    const extra = run.stderr.slice(plain.stderr.length).split("\n").filter(Boolean);
    assert.equal(run.stderr.slice(0, plain.stderr.length), plain.stderr);
    assert.equal(extra.length, 1, run.stderr);
    assert.ok(
      extra[0].startsWith(
        `check: could not append the summary to GITHUB_STEP_SUMMARY (${dir}no/such/folder/summary.md): `,
      ),
      extra[0],
    );
  }
});

/** A tiny XML reader: the element tree, failing on anything not well-formed (enough for what junitXml writes). */
interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}
function parseXml(xml: string): XmlElement {
  const decl = /^<\?xml version="1\.0" encoding="UTF-8"\?>\n/;
  assert.match(xml, decl);
  const entity = /&(?:amp|lt|gt|quot|apos|#\d+);/g;
  const unescape = (s: string) =>
    s.replace(entity, (e) =>
      ({ "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&apos;": "'" })[e] ??
        String.fromCodePoint(Number(e.slice(2, -1))));
  const root: XmlElement = { name: "", attrs: {}, children: [], text: "" };
  const stack = [root];
  for (const token of xml.replace(decl, "").match(/<[^>]*>|[^<]+/g) ?? []) {
    const top = stack.at(-1)!;
    if (!token.startsWith("<")) {
      assert.doesNotMatch(token.replace(entity, ""), /[&<>]/, `bad character data: ${token}`);
      top.text += unescape(token);
      continue;
    }
    const close = /^<\/([\w:-]+)>$/.exec(token);
    if (close) {
      assert.equal(close[1], top.name, "mismatched end tag");
      stack.pop();
      continue;
    }
    const open = /^<([\w:-]+)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>$/.exec(token);
    assert.ok(open, `bad tag: ${token}`);
    const attrs: Record<string, string> = {};
    for (const [, k, v] of open[2].matchAll(/([\w:-]+)="([^"]*)"/g)) {
      assert.ok(!(k in attrs), `attribute ${k} twice`);
      assert.doesNotMatch(v.replace(entity, ""), /&/, `bad attribute value: ${v}`);
      attrs[k] = unescape(v);
    }
    const el: XmlElement = { name: open[1], attrs, children: [], text: "" };
    top.children.push(el);
    if (!open[3]) stack.push(el);
  }
  assert.equal(stack.length, 1, "unclosed elements");
  assert.equal(root.children.length, 1, "one root element");
  return root.children[0];
}

Deno.test("--format junit: well-formed JUnit XML, a testsuite per file and a testcase per assertion, on stdout alone", async () => {
  const dir = writeTemp({ "fail.yaml": FAILING, "pass.yaml": PASSING, "bad.yaml": BAD });
  const got = `${shown(runScenario(loadScenario(`${dir}fail.yaml`)).checks[0].actual * 1000)}ms`;
  const run = await runWith({ GITHUB_WORKSPACE: dir }, [
    "--format=junit",
    `${dir}fail.yaml`,
    `${dir}pass.yaml`,
    `${dir}bad.yaml`,
  ]);
  assert.equal(run.code, 2);
  // The table's lines go to stderr, then the messages.
  assert.match(
    run.stderr,
    /^FAIL {2}tiny-fail {2}ttft\.p99=.*\nPASS {2}tiny-pass .*\nFAIL {2}.*bad\.yaml {2}\(bad input\)\n/,
  );
  const root = parseXml(run.stdout.trimEnd());
  assert.equal(root.name, "testsuites");
  assert.deepEqual(
    [root.attrs.tests, root.attrs.failures, root.attrs.errors],
    ["4", "1", "1"],
  );
  assert.deepEqual(root.children.map((s) => [s.name, s.attrs.name, s.attrs.file, s.attrs.tests, s.attrs.failures]), [
    ["testsuite", "tiny-fail", "fail.yaml", "2", "1"],
    ["testsuite", "tiny-pass", "pass.yaml", "1", "0"],
    ["testsuite", "bad.yaml", "bad.yaml", "1", "0"],
  ]);
  const cases = root.children.flatMap((s) => s.children);
  assert.equal(cases.length, 4);
  assert.ok(cases.every((c) => c.name === "testcase" && /^\d+\.\d{3}$/.test(c.attrs.time)));
  assert.deepEqual(cases.map((c) => [c.attrs.name, c.attrs.file, c.attrs.line]), [
    ["expect.ttft.p99 < 1ms", "fail.yaml", "7"],
    ["expect.total_requests == 50", "fail.yaml", "8"],
    ["expect.total_requests == 50", "pass.yaml", "7"],
    ["load scenario", "bad.yaml", undefined],
  ]);
  const failure = cases[0].children[0];
  assert.equal(failure.name, "failure");
  assert.equal(failure.attrs.message, `expect.ttft.p99: expected TTFT_FROM_ARRIVAL(s).P99 < 1ms, got ${got}`);
  assert.equal(
    failure.text,
    `${dir}fail.yaml:7:3: expect.ttft.p99: expected TTFT_FROM_ARRIVAL(s).P99 < 1ms, got ${got}`,
  );
  assert.deepEqual(cases[1].children, []);
  const error = cases[3].children[0];
  assert.equal(error.name, "error");
  assert.equal(error.attrs.message, "serving_config.max_tokens_budget: expected a positive integer, got -5");
  assert.match(run.stdout, /message="expect\.ttft\.p99: expected TTFT_FROM_ARRIVAL\(s\)\.P99 &lt; 1ms, got /);
  // What XML cannot hold: escaped, or replaced.
  assert.equal(xmlText(`a < b && c > "d"\r`), `a &lt; b &amp;&amp; c &gt; "d"&#13;`);
  assert.equal(xmlAttribute(`"x"\n\ty\u0001`), "&quot;x&quot;&#10;&#9;y\ufffd");
  assert.equal(parseXml(`<?xml version="1.0" encoding="UTF-8"?>\n<a b="${xmlAttribute('<&"\n')}"/>`).attrs.b, '<&"\n');
});

Deno.test("--format json: one document with each scenario's verdict, checks, key metrics and capacity answer", async () => {
  const dir = writeTemp({
    "fail.yaml": FAILING,
    "bad.yaml": BAD,
    "sweep.yaml": scenario(
      "tiny-sweep",
      `sweep:\n  load_gen.request_rate: [2, 4]\nmax_rate_meeting:\n  ttft.p99: "<= 1"\nexpect:\n  max_rate_meeting: ">= 2"\n`,
    ),
  });
  const failing = runScenario(loadScenario(`${dir}fail.yaml`));
  const run = await runWith({ GITHUB_WORKSPACE: dir }, [
    "--format",
    "json",
    `${dir}fail.yaml`,
    `${dir}sweep.yaml`,
    `${dir}bad.yaml`,
  ]);
  assert.equal(run.code, 2);
  const doc = JSON.parse(run.stdout);
  assert.equal(doc.pass, false);
  assert.equal(doc.exit_code, 2);
  assert.deepEqual(doc.scenarios.map((s: { name: string | null }) => s.name), ["tiny-fail", "tiny-sweep", null]);
  const [fail, sweep, bad] = doc.scenarios;
  assert.equal(fail.file, "fail.yaml");
  assert.equal(fail.pass, false);
  assert.equal(typeof fail.seconds, "number");
  assert.deepEqual(fail.checks[0], {
    kind: "check",
    name: "expect.ttft.p99 < 1ms",
    pass: false,
    actual: failing.checks[0].actual,
    // The p99's 95% interval from its order statistics: far above the 1 ms bound, so decided.
    ci95: [...failing.output.summary.percentileCi["TTFT_FROM_ARRIVAL(s)"]!.P99],
    message: failing.checks[0].message,
    file: "fail.yaml",
    line: 7,
    col: 3,
  });
  assert.equal(fail.checks[1].pass, true);
  assert.equal(fail.checks[1].actual, 50);
  const m = failing.output.summary;
  assert.deepEqual(fail.metrics, {
    "TTFT_FROM_ARRIVAL(s).P99": m.extMetric["TTFT_FROM_ARRIVAL(s)"].P99,
    "TPOT(s).P99": m.perMetric["TPOT(s)"].P99,
    "TTFT_FROM_ARRIVAL(s).P99_ci95": [...m.percentileCi["TTFT_FROM_ARRIVAL(s)"]!.P99],
    "TPOT(s).P99_ci95": [...m.percentileCi["TPOT(s)"]!.P99],
    "output_token_throughput(tok/s)": m.overall["output_token_throughput(tok/s)"],
    "request_throughput(req/s)": m.overall["request_throughput(req/s)"],
    offered_rate: m.load.offeredRate,
    achieved_rate: m.load.achievedRate,
    keeps_up: m.load.keepsUp,
  });
  assert.equal(fail.capacity, null);
  assert.equal(sweep.pass, true);
  assert.equal(sweep.metrics, null);
  assert.deepEqual(sweep.sweep, { points: 2, bisection: 0, seeds: 1 });
  assert.deepEqual(
    [sweep.capacity.kind, sweep.capacity.key, sweep.capacity.value, sweep.capacity.failing],
    ["max_rate_meeting", "load_gen.request_rate", 4, null],
  );
  assert.equal(sweep.checks[0].name, "expect.max_rate_meeting >= 2");
  assert.equal(bad.bad_input, true);
  assert.equal(bad.file, "bad.yaml");
  assert.deepEqual(bad.error, {
    message: `${dir}bad.yaml:5:37: serving_config.max_tokens_budget: expected a positive integer, got -5`,
    file: "bad.yaml",
    line: 5,
    col: 37,
  });
});

Deno.test("--format markdown: the job summary on stdout, the same as appended to GITHUB_STEP_SUMMARY", async () => {
  const dir = writeTemp({ "fail.yaml": FAILING, "pass.yaml": PASSING });
  const run = await runWith({ GITHUB_WORKSPACE: dir, GITHUB_STEP_SUMMARY: `${dir}summary.md` }, [
    "--format",
    "markdown",
    `${dir}pass.yaml`,
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stderr, /^PASS {2}tiny-pass {2}ttft\.p99=.*\n$/);
  const passing = runScenario(loadScenario(`${dir}pass.yaml`));
  assert.equal(
    run.stdout,
    [
      "### ServingCast scenarios",
      "",
      "✅ **The scenario passes**",
      "",
      MARKDOWN_HEADER,
      "| :--- | :---: | ---: | ---: | ---: |",
      row(passing, "✅"),
      "",
    ].join("\n"),
  );
  assert.equal(Deno.readTextFileSync(`${dir}summary.md`), `${run.stdout}\n`);
});

Deno.test("--format table is the default's output; an unknown --format is one usage line and exit 2", async () => {
  const dir = writeTemp({ "fail.yaml": FAILING });
  const [plain, table] = await Promise.all([
    runWith({}, [`${dir}fail.yaml`]),
    runWith({}, ["--format", "table", `${dir}fail.yaml`]),
  ]);
  assert.equal(plain.code, 1);
  assert.equal(table.code, 1);
  assert.equal(noTimes(table.stdout), noTimes(plain.stdout));
  assert.equal(table.stderr, plain.stderr);
  assert.doesNotMatch(table.stdout, /::error/);

  const bad = await runCheckTask(["--format", "xml", `${dir}fail.yaml`]);
  assert.deepEqual(bad, {
    code: 2,
    stdout: "",
    stderr:
      "check: --format: expected one of table, github, junit, json, markdown, got 'xml' (deno task check --help)\n",
  });
  const missing = await runCheckTask([`${dir}fail.yaml`, "--format"]);
  assert.deepEqual(missing, {
    code: 2,
    stdout: "",
    stderr: "check: --format needs a value (deno task check --help)\n",
  });
  const help = await runCheckTask(["--help"]);
  assert.match(help.stdout, /\n {2}--format FORMAT {3}what stdout carries: table \(default/);
  assert.match(help.stdout, /\nWith GITHUB_STEP_SUMMARY set/);
});

Deno.test("--baseline-dir: snapshots are read from that folder, and the fix names it", async () => {
  const dir = writeTemp({ "s.yaml": scenario("gated", "baseline: true\n") });
  const missing = await runCheckTask([`${dir}s.yaml`, "--baseline-dir", `${dir}snapshots`]);
  assert.equal(missing.code, 1, missing.stderr);
  assert.match(
    missing.stderr,
    new RegExp(
      `: baseline: no baseline at ${dir}snapshots/gated\\.json: run \`deno task baseline ${dir}s\\.yaml --baseline-dir ${dir}snapshots\`$`,
      "m",
    ),
  );
  const run = runScenario(loadScenario(`${dir}s.yaml`, undefined, { baselineDir: `${dir}snapshots` }));
  Deno.mkdirSync(`${dir}snapshots`);
  Deno.writeTextFileSync(`${dir}snapshots/gated.json`, JSON.stringify(run.snapshot));
  const ok = await runCheckTask([`${dir}s.yaml`, "--baseline-dir", `${dir}snapshots`]);
  assert.equal(ok.code, 0, ok.stderr);
  // Without the option the default folder beside the scenario is read, and it has none.
  assert.equal((await runCheckTask([`${dir}s.yaml`])).code, 1);
});

Deno.test("check and baseline take a folder: its own scenario files (as deno test takes a folder); an empty one is one line", async () => {
  const dir = writeTemp({});
  Deno.mkdirSync(`${dir}a`);
  Deno.mkdirSync(`${dir}empty`);
  Deno.writeTextFileSync(`${dir}a/pass.yaml`, PASSING);
  Deno.writeTextFileSync(`${dir}a/fail.yaml`, FAILING);
  Deno.writeTextFileSync(`${dir}a/notes.txt`, "not a scenario");
  const run = await runCheckTask([`${dir}a`]);
  assert.equal(run.code, 1);
  // Both scenarios of the folder, in name order; the text file left alone.
  assert.deepEqual(run.stdout.split("\n").filter((l) => /^(PASS|FAIL) /.test(l)).map((l) => l.split(/\s+/)[1]), [
    "tiny-fail",
    "tiny-pass",
  ]);
  const empty = await runCheckTask([`${dir}empty`]);
  assert.deepEqual(empty, {
    code: 2,
    stdout: "",
    stderr: `check: ${dir}empty is a folder with no scenario files (*.yaml) in it (deno task check --help)\n`,
  });
  const baseline = await captureTaskAsync(
    async (a, io) => (await import("../scenarios/baseline.ts")).runBaseline(a, io),
    [
      `${dir}empty/`,
    ],
  );
  assert.equal(baseline.code, 2);
  assert.equal(
    baseline.stderr,
    `baseline: ${dir}empty/ is a folder with no scenario files (*.yaml) in it (deno task baseline --help)\n`,
  );
});
