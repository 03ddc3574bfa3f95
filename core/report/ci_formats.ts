/**
 * What `deno task check --format …` prints for CI besides its table: GitHub
 * workflow commands (an `::error` annotation at each failed assertion's file
 * and line), a Markdown summary (GitHub's job summary), JUnit XML (GitLab,
 * Jenkins) and one JSON document. Pure functions from the scenarios'
 * outcomes to text: the task reads the environment and writes the files.
 *
 * @module
 */
import { isAbsolute, relative, resolve, sep } from "node:path";
import type { SourceLocation } from "../config/errors.ts";
import type { ScenarioResult } from "../scenario/runner.ts";

/** The output formats of `deno task check`. */
export const CHECK_FORMATS = ["table", "github", "junit", "json", "markdown"] as const;

/** An output format of `deno task check`. */
export type CheckFormat = (typeof CHECK_FORMATS)[number];

/** Whether `text` names an output format. */
export function isCheckFormat(text: string): text is CheckFormat {
  return (CHECK_FORMATS as readonly string[]).includes(text);
}

/** A scenario that ran (its assertions judged), with its wall time. */
export interface ScenarioRan {
  /** Discriminant. */
  readonly kind: "ran";
  /** The scenario file as named on the command line. */
  readonly file: string;
  /** The outcome. */
  readonly result: ScenarioResult;
  /** Wall time, s. */
  readonly seconds: number;
}

/** A scenario that could not run: bad input (an `InputError`). */
export interface ScenarioBadInput {
  /** Discriminant. */
  readonly kind: "bad input";
  /** The scenario file as named on the command line. */
  readonly file: string;
  /** The error's message, `file:line:col: key: detail`. */
  readonly message: string;
  /** Where the problem is (possibly a config file the scenario names). */
  readonly location: SourceLocation;
  /** The message without its location. */
  readonly detail: string;
  /** Wall time, s. */
  readonly seconds: number;
}

/** One scenario's outcome, in the order run. */
export type ScenarioOutcome = ScenarioRan | ScenarioBadInput;

/** How file paths are shown: relative to `root` (the repository), files named relative to `cwd`. */
export interface WorkspacePaths {
  /** The repository root: `$GITHUB_WORKSPACE`, else the current directory. */
  readonly root: string;
  /** The directory relative file names are resolved against. */
  readonly cwd: string;
}

/** A file line and column. */
export interface Position {
  /** The file as the message names it. */
  readonly file: string;
  /** 1-based line. */
  readonly line: number;
  /** 1-based column. */
  readonly col: number;
}

/** An assertion or a measurement of a scenario, as every format reports it. */
export interface Assertion {
  /** An `expect`/`expect_per_point`/baseline check, or a measurement of a validation scenario. */
  readonly kind: "check" | "measurement";
  /** Its name: `expect.ttft.p99 < 0.06`, `baseline`, `measured[0] tpot.median`. */
  readonly name: string;
  /** Whether it holds. */
  readonly pass: boolean;
  /** The value judged (NaN for a baseline check). */
  readonly actual: number;
  /** Every seed's value, when there are several. */
  readonly values?: readonly number[];
  /** A percentile's 95% interval (order statistics, or across seeds), when a literal bounds it. */
  readonly interval?: readonly [number, number];
  /** Whether that interval straddles the bound (present only then). */
  readonly undecided?: boolean;
  /** The message, `file:line:col: …` (a baseline's with its table on further lines). */
  readonly message: string;
  /** Where it is written, when the message starts with it. */
  readonly at?: Position;
  /** The message without its location prefix. */
  readonly detail: string;
}

/** `file:line:col: rest` split; undefined when `message` does not start with a location. */
export function splitLocation(message: string): { at: Position; detail: string } | undefined {
  const m = /^(.+?):(\d+):(\d+): /.exec(message);
  if (!m) return undefined;
  return { at: { file: m[1], line: Number(m[2]), col: Number(m[3]) }, detail: message.slice(m[0].length) };
}

/** A scenario's checks (file order) then its measurements. */
export function assertionsOf(r: ScenarioResult): Assertion[] {
  const of = (kind: Assertion["kind"], name: string, pass: boolean, actual: number, message: string) => {
    const split = splitLocation(message);
    return { kind, name, pass, actual, message, ...(split ?? { detail: message }) };
  };
  return [
    ...r.checks.map((c) => ({
      ...of("check", c.name, c.pass, c.actual, c.message),
      ...(c.values && c.values.length > 1 ? { values: c.values } : {}),
      ...(c.interval ? { interval: c.interval } : {}),
      ...(c.undecided ? { undecided: true } : {}),
    })),
    ...r.measurements.map((m, i) =>
      of("measurement", `measured[${i}] ${m.measurement.key}`, m.pass, m.simulated, m.message)
    ),
  ];
}

/**
 * A file as CI shows it: relative to the repository root, with `/`
 * separators; as given when it lies outside the root.
 */
export function workspacePath(file: string, paths: WorkspacePaths): string {
  const root = resolve(paths.cwd, paths.root);
  const rel = relative(root, resolve(paths.cwd, file));
  if (rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return file;
  return rel.split(sep).join("/");
}

// ---------------------------------------------------------------------------------------------------------------
// GitHub workflow commands

/** A workflow command's message escaped: `%`, CR and LF. */
export function escapeData(text: string): string {
  return text.replaceAll("%", "%25").replaceAll("\r", "%0D").replaceAll("\n", "%0A");
}

/** A workflow command's property value escaped: as a message, and `:` and `,`. */
export function escapeProperty(text: string): string {
  return escapeData(text).replaceAll(":", "%3A").replaceAll(",", "%2C");
}

/** `::command k=v,…::message`, escaped; properties without a value are left out. */
export function workflowCommand(
  command: string,
  properties: Readonly<Record<string, string | number | undefined>>,
  message: string,
): string {
  const props = Object.entries(properties)
    .filter((e): e is [string, string | number] => e[1] !== undefined)
    .map(([k, v]) => `${k}=${escapeProperty(String(v))}`)
    .join(",");
  return `::${command}${props ? ` ${props}` : ""}::${escapeData(message)}`;
}

/**
 * An `::error` annotation per failed assertion of a scenario, at its file
 * and line, titled `<scenario>: <assertion>`; for bad input one at the
 * problem's location. None for a passing scenario.
 */
export function githubAnnotations(o: ScenarioOutcome, paths: WorkspacePaths): string[] {
  if (o.kind === "bad input") {
    const loc = o.location;
    const detail = loc.keyPath ? `${loc.keyPath}: ${o.detail}` : o.detail;
    return [
      workflowCommand("error", {
        file: workspacePath(loc.file, paths),
        line: loc.line,
        col: loc.line !== undefined ? loc.col : undefined,
        title: `${workspacePath(o.file, paths)}: bad input`,
      }, detail),
    ];
  }
  const name = o.result.scenario.name;
  return assertionsOf(o.result).filter((a) => !a.pass).map((a) =>
    workflowCommand("error", {
      file: workspacePath(a.at?.file ?? o.file, paths),
      line: a.at?.line,
      col: a.at?.col,
      title: `${name}: ${a.name}`,
    }, a.detail)
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Markdown

/** `text` as one inline code span (newlines as spaces), fenced past any backticks it holds. */
export function codeSpan(text: string): string {
  const one = text.replace(/\r?\n|\r/g, " ");
  const longest = Math.max(0, ...(one.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  const pad = one.startsWith("`") || one.endsWith("`") ? " " : "";
  return `${fence}${pad}${one}${pad}${fence}`;
}

/** A table cell: `|` escaped (also inside code spans, as GitHub's tables need). */
const cell = (text: string) => text.replaceAll("|", "\\|");

const figure = (x: number, unit: string) => (Number.isFinite(x) ? `${Number(x.toPrecision(3))}${unit}` : "–");

/** A capacity answer in short: `max_rate_meeting = 18.9 (first failing 19.1)`. */
function capacityText(r: ScenarioResult): string {
  const c = r.capacity;
  const n = r.points.length;
  const points = `${n} point${n === 1 ? "" : "s"}`;
  if (!c) return `sweep of ${points}`;
  const failing = c.failing !== undefined
    ? ` (${c.kind === "max_rate_meeting" ? "first" : "largest"} failing ${c.failing})`
    : "";
  return `${c.kind} = ${Number.isNaN(c.value) ? "none" : c.value}${failing}, ${points}`;
}

/** A failed baseline's rows: metric, baseline, now, change and tolerance (parsed from its message's table). */
export function baselineRows(message: string): string[][] {
  const rows: string[][] = [];
  for (const line of message.split("\n").slice(1)) {
    const m = /^ {2}(\S.*?) +(\S+) +(\S+) +(\S+) +(±\S+|[+-]\S+ (?:max|min))$/.exec(line);
    if (m) rows.push(m.slice(1));
  }
  return rows;
}

/** The header of the scenario table of {@link markdownSummary}. */
export const MARKDOWN_HEADER = "| Scenario | Result | p99 TTFT from arrival | p99 TPOT | Output throughput |";

/**
 * The Markdown summary: a heading with the count of failures, a table with
 * one row per scenario (✅ or ❌, p99 TTFT from arrival, p99 TPOT and output
 * throughput, or a sweep's capacity answer), then each failed scenario's
 * failed assertions, a failed baseline with its changed metrics as a table.
 */
export function markdownSummary(
  outcomes: readonly ScenarioOutcome[],
  paths: WorkspacePaths,
  options: { readonly title?: string } = {},
): string {
  const failed = outcomes.filter((o) => o.kind === "bad input" || !o.result.pass).length;
  const n = outcomes.length;
  const out = [`### ${options.title ?? "ServingCast scenarios"}`, ""];
  if (n === 0) return [...out, "No scenario ran."].join("\n");
  out.push(
    failed
      ? `❌ **${failed} of ${n} scenario${n === 1 ? "" : "s"} failed**`
      : `✅ **${n === 1 ? "The scenario passes" : `All ${n} scenarios pass`}**`,
    "",
    MARKDOWN_HEADER,
    "| :--- | :---: | ---: | ---: | ---: |",
  );
  for (const o of outcomes) {
    if (o.kind === "bad input") {
      out.push(`| ${cell(codeSpan(workspacePath(o.file, paths)))} | ❌ bad input | – | – | – |`);
      continue;
    }
    const r = o.result;
    const name = cell(codeSpan(r.scenario.name));
    const mark = r.pass ? "✅" : "❌";
    if (r.scenario.sweep) {
      out.push(`| ${name} | ${mark} | ${cell(capacityText(r))} | | |`);
      continue;
    }
    const m = r.output.summary;
    out.push(
      `| ${name} | ${mark} | ${figure(m.extMetric["TTFT_FROM_ARRIVAL(s)"].P99, " s")} | ${
        figure(m.perMetric["TPOT(s)"].P99, " s")
      } | ${figure(m.overall["output_token_throughput(tok/s)"], " tok/s")} |`,
    );
  }
  for (const o of outcomes) {
    if (o.kind === "ran" && o.result.pass) continue;
    out.push("");
    if (o.kind === "bad input") {
      out.push(`#### ❌ ${codeSpan(workspacePath(o.file, paths))}: bad input`, "");
      const loc = o.location;
      const where = [workspacePath(loc.file, paths), loc.line, loc.line !== undefined ? loc.col : undefined]
        .filter((x) => x !== undefined).join(":");
      out.push(`- ${codeSpan(where)} ${codeSpan(loc.keyPath ? `${loc.keyPath}: ${o.detail}` : o.detail)}`);
      continue;
    }
    out.push(`#### ❌ ${codeSpan(o.result.scenario.name)} (${codeSpan(workspacePath(o.file, paths))})`, "");
    for (const a of assertionsOf(o.result).filter((a) => !a.pass)) {
      const where = a.at ? `${codeSpan(`${workspacePath(a.at.file, paths)}:${a.at.line}:${a.at.col}`)} ` : "";
      const [first, ...more] = a.detail.split("\n");
      out.push(`- ${where}${codeSpan(first)}`);
      const rows = a.name === "baseline" ? baselineRows(a.message) : [];
      if (rows.length) {
        out.push(
          "",
          "  | Metric | Before | After | Change | Tolerance |",
          "  | :--- | ---: | ---: | ---: | ---: |",
          ...rows.map(([metric, ...rest]) => `  | ${[codeSpan(metric), ...rest].map(cell).join(" | ")} |`),
          "",
        );
      } else if (more.length) {
        const fence = "`".repeat(Math.max(3, ...(a.detail.match(/`+/g) ?? []).map((r) => r.length + 1)));
        out.push("", `  ${fence}text`, ...more.map((l) => `  ${l}`), `  ${fence}`, "");
      }
    }
  }
  while (out.at(-1) === "") out.pop();
  return out.join("\n");
}

// ---------------------------------------------------------------------------------------------------------------
// JUnit XML

/** Characters XML 1.0 does not allow (C0 controls but tab, CR and LF; U+FFFE/F; lone surrogates). */
const NOT_XML =
  // deno-lint-ignore no-control-regex -- these are the characters replaced
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Text as XML character data: `&`, `<`, `>` and CR escaped, characters XML cannot hold as U+FFFD. */
export function xmlText(text: string): string {
  return text.replace(NOT_XML, "\ufffd").replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
    .replaceAll("\r", "&#13;");
}

/** Text as an XML attribute value (in double quotes): as character data, and quotes, tabs and newlines. */
export function xmlAttribute(text: string): string {
  return xmlText(text).replaceAll('"', "&quot;").replaceAll("\n", "&#10;").replaceAll("\t", "&#9;");
}

const attrs = (a: Record<string, string | number | undefined>) =>
  Object.entries(a).filter((e) => e[1] !== undefined).map(([k, v]) => ` ${k}="${xmlAttribute(String(v))}"`).join("");

const secs = (x: number) => x.toFixed(3);

/**
 * JUnit XML: a `testsuites` with one `testsuite` per scenario file and one
 * `testcase` per assertion or measurement (a failed one with a `failure`),
 * each with its `file` (and line); a bad-input scenario is one testcase
 * with an `error`. The assertions of a scenario are judged on the same
 * runs, so each testcase's time is an even share of the scenario's.
 */
export function junitXml(outcomes: readonly ScenarioOutcome[], paths: WorkspacePaths): string {
  const suites: string[] = [];
  let tests = 0, failures = 0, errors = 0, time = 0;
  for (const o of outcomes) {
    const file = workspacePath(o.file, paths);
    time += o.seconds;
    if (o.kind === "bad input") {
      tests++;
      errors++;
      const loc = o.location;
      const detail = loc.keyPath ? `${loc.keyPath}: ${o.detail}` : o.detail;
      suites.push(
        `  <testsuite${
          attrs({ name: file, tests: 1, failures: 0, errors: 1, skipped: 0, time: secs(o.seconds), file })
        }>`,
        `    <testcase${attrs({ name: "load scenario", classname: file, file, time: secs(o.seconds) })}>`,
        `      <error${attrs({ message: detail, type: "InputError" })}>${xmlText(o.message)}</error>`,
        "    </testcase>",
        "  </testsuite>",
      );
      continue;
    }
    const name = o.result.scenario.name;
    const all = assertionsOf(o.result);
    const failed = all.filter((a) => !a.pass).length;
    tests += all.length;
    failures += failed;
    const share = all.length ? o.seconds / all.length : 0;
    suites.push(
      `  <testsuite${
        attrs({ name, tests: all.length, failures: failed, errors: 0, skipped: 0, time: secs(o.seconds), file })
      }>`,
    );
    for (const a of all) {
      const head = `    <testcase${
        attrs({
          name: a.name,
          classname: name,
          file: workspacePath(a.at?.file ?? o.file, paths),
          line: a.at?.line,
          time: secs(share),
        })
      }`;
      if (a.pass) {
        suites.push(`${head}/>`);
        continue;
      }
      suites.push(
        `${head}>`,
        `      <failure${attrs({ message: a.detail.split("\n")[0], type: a.kind })}>${xmlText(a.message)}</failure>`,
        "    </testcase>",
      );
    }
    suites.push("  </testsuite>");
  }
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attrs({ name: "deno task check", tests, failures, errors, time: secs(time) })}>`,
    ...suites,
    "</testsuites>",
  ].join("\n");
}

// ---------------------------------------------------------------------------------------------------------------
// JSON

/** A number as JSON holds it: null when not finite. */
const finite = (x: number) => (Number.isFinite(x) ? x : null);

/**
 * One JSON document: whether everything passed, the exit code, and per
 * scenario its name, file, verdict, wall time, key metrics (a single run's
 * p99 TTFT from arrival, p99 TPOT, throughputs, offered and achieved rate),
 * a sweep's size and capacity answer, and every check and measurement
 * (name, verdict, value, message and location). Undefined values are null.
 */
export function checkJson(outcomes: readonly ScenarioOutcome[], paths: WorkspacePaths, exitCode: number): string {
  const at = (p: Position | undefined) =>
    p ? { file: workspacePath(p.file, paths), line: p.line, col: p.col } : { file: null, line: null, col: null };
  const scenarios = outcomes.map((o) => {
    const file = workspacePath(o.file, paths);
    if (o.kind === "bad input") {
      const loc = o.location;
      return {
        name: null,
        file,
        pass: false,
        bad_input: true,
        seconds: Number(o.seconds.toFixed(3)),
        error: {
          message: o.message,
          file: workspacePath(loc.file, paths),
          line: loc.line ?? null,
          col: loc.line !== undefined ? loc.col ?? null : null,
        },
        metrics: null,
        sweep: null,
        capacity: null,
        checks: [],
      };
    }
    const r = o.result;
    const s = r.output.summary;
    const c = r.capacity;
    return {
      name: r.scenario.name,
      file,
      pass: r.pass,
      bad_input: false,
      seconds: Number(o.seconds.toFixed(3)),
      metrics: r.scenario.sweep ? null : {
        "TTFT_FROM_ARRIVAL(s).P99": finite(s.extMetric["TTFT_FROM_ARRIVAL(s)"].P99),
        "TPOT(s).P99": finite(s.perMetric["TPOT(s)"].P99),
        // Each percentile's 95% interval from its order statistics (the first seed's run).
        "TTFT_FROM_ARRIVAL(s).P99_ci95": s.percentileCi["TTFT_FROM_ARRIVAL(s)"]?.P99.map(finite) ?? null,
        "TPOT(s).P99_ci95": s.percentileCi["TPOT(s)"]?.P99.map(finite) ?? null,
        "output_token_throughput(tok/s)": finite(s.overall["output_token_throughput(tok/s)"]),
        "request_throughput(req/s)": finite(s.overall["request_throughput(req/s)"]),
        offered_rate: finite(s.load.offeredRate),
        achieved_rate: finite(s.load.achievedRate),
        keeps_up: s.load.keepsUp,
      },
      sweep: r.scenario.sweep
        ? { points: r.points.length, bisection: r.points.filter((p) => p.bisection).length, seeds: r.seeds.length }
        : null,
      capacity: c
        ? { kind: c.kind, key: c.key, value: finite(c.value), failing: c.failing ?? null, text: c.text }
        : null,
      checks: assertionsOf(r).map((a) => ({
        kind: a.kind,
        name: a.name,
        pass: a.pass,
        actual: finite(a.actual),
        ...(a.values ? { values: a.values.map(finite) } : {}),
        ...(a.interval ? { ci95: a.interval.map(finite) } : {}),
        ...(a.undecided ? { undecided: true } : {}),
        message: a.message,
        ...at(a.at),
      })),
    };
  });
  return JSON.stringify(
    { pass: exitCode === 0, exit_code: exitCode, scenarios },
    null,
    2,
  );
}
