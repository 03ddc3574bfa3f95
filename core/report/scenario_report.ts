/**
 * The HTML report of a scenario (`deno task check --report-dir`): each
 * assertion with its bound, value and verdict; for a sweep, each SLO's
 * metric against the swept key with the SLO line and the capacity answer
 * marked, and the achieved against the offered rate; for a single run, the
 * run's own report (tables, CDFs, time series, breakdown, memory).
 *
 * @module
 */
import type { ScenarioResult } from "../scenario/runner.ts";
import type { ScenarioAssertion } from "../scenario/scenario.ts";
import { chart, escapeHtml, lineSpec, page, section, showNumber, spansDecades, table, textCell } from "./html.ts";
import type { LineExtras } from "./html.ts";
import { cdfCharts, runReportSections, seriesCharts } from "./run_report.ts";
import { runJson } from "./run_json.ts";

/** Seconds per time unit an SLO bound may carry (as the scenario files write them). */
const UNIT: Record<string, number> = { "": 1, s: 1, ms: 1e-3, us: 1e-6, "µs": 1e-6, min: 60, h: 3600 };

/** The number a bound such as `<= 500ms` compares with, in the metric's unit (undefined when not a plain number). */
function boundValue(a: ScenarioAssertion): number | undefined {
  const m = /^\s*(?:<=|>=|<|>|==)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)\s*([a-zµ]*)\s*$/i.exec(a.bound.text);
  if (!m || !Object.hasOwn(UNIT, m[2])) return undefined;
  return Number(m[1]) * UNIT[m[2]];
}

/** The assertions table: assertion (with its bound), value, verdict, and the message of a failure. */
function assertionTable(r: ScenarioResult): string {
  const rows = [
    ...r.checks.map((c) => ({ name: c.name, value: c.actual, pass: c.pass, message: c.message })),
    ...r.measurements.map((m) => ({
      name: `measured ${m.measurement.key} = ${showNumber(m.measurement.value)} ± ${
        (100 * m.measurement.maxError).toFixed(0)
      }% (simulated ${(100 * m.error).toFixed(1)}% off)`,
      value: m.simulated,
      pass: m.pass,
      message: m.message,
    })),
  ];
  if (rows.length === 0) return `<p class="note">This scenario asserts nothing.</p>`;
  return table(
    "Assertions",
    ["assertion", "value", "result", "detail"],
    rows.map((x) => [
      textCell(x.name),
      `<td class="num">${showNumber(x.value)}</td>`,
      `<td class="${x.pass ? "pass" : "fail"}">${x.pass ? "PASS" : "FAIL"}</td>`,
      `<td class="note">${escapeHtml(x.pass ? "" : x.message)}</td>`,
    ]),
  );
}

/** The unit of a swept key's values: a rate, a count, tokens. */
function unitOfKey(key: string): string {
  if (/rate$/.test(key)) return "req/s";
  if (/(num_instances|max_num_seqs|num_requests|_size|max_concurrency)$/.test(key)) return "count";
  if (/(budget|tokens)/.test(key)) return "tokens";
  return "value";
}

/**
 * How an SLO's chart draws its values: a log axis when they span more than two decades (a p99 TTFT from 50 ms to a
 * minute), and the region where the bound holds shaded.
 */
function sloBand(values: readonly number[], a: ScenarioAssertion, bound: number | undefined): LineExtras {
  const logY = spansDecades(values);
  if (bound === undefined || !(bound > 0)) return { logY };
  const pos = values.filter((v) => v > 0);
  const low = logY ? Math.min(bound, ...pos) / 2 : 0;
  const high = Math.max(bound, ...values) * 1.05;
  const upper = a.bound.op === "<" || a.bound.op === "<=";
  return { logY, band: upper ? { from: low, to: bound } : { from: bound, to: high } };
}

/** A sweep's curves: each SLO metric (worst seed) against the swept key, and the rates. */
async function sweepCharts(r: ScenarioResult): Promise<string> {
  const s = r.scenario;
  const axis = s.sweep?.axes[0];
  if (!axis || r.points.length === 0) return "";
  const x = { field: "x", title: `${axis.key} (${unitOfKey(axis.key)})` };
  const points = [...r.points].sort((a, b) => a.values[0] - b.values[0]);
  const slos = s.slos.length ? s.slos : s.minValueSlos.length ? s.minValueSlos : s.perPoint;
  // More than one swept key: a line per combination of the others, against the first.
  const others = s.sweep!.axes.slice(1);
  const lineOf = (p: (typeof points)[number]) => others.map((ax, i) => `${ax.key}=${p.values[i + 1]}`).join(", ");
  const byLine = others.length ? { field: "series", title: others.map((ax) => ax.key).join(", ") } : undefined;
  const out: string[] = [];
  for (const a of slos) {
    const worst = (vs: number[]) => (a.metric.better === "higher" ? Math.min(...vs) : Math.max(...vs));
    const rows = points.flatMap((p) => {
      const v = worst(p.outputs.map((o) => a.metric.read(o.summary)));
      return Number.isFinite(v) ? [{ x: p.values[0], y: v, series: lineOf(p) }] : [];
    });
    const bound = boundValue(a);
    const answer = r.capacity && Number.isFinite(r.capacity.value)
      ? rows.filter((row) => row.x === r.capacity!.value).map((row) => ({ x: row.x, y: row.y }))
      : [];
    out.push(
      await chart(
        `sweep-${a.key}`,
        `${a.metric.name} (worst seed) against ${axis.key}${bound !== undefined ? `, SLO ${a.bound.text}` : ""}${
          answer.length ? `; ${r.capacity!.kind} = ${r.capacity!.value} marked` : ""
        }`,
        lineSpec(
          rows,
          x,
          { field: "y", title: `${a.metric.name} (${a.metric.unit})` },
          byLine,
          {
            rules: bound !== undefined ? [{ y: bound, label: a.bound.text }] : [],
            points: answer,
            ...sloBand(rows.map((row) => row.y), a, bound),
          },
        ),
      ),
    );
  }
  const rateLine = (p: (typeof points)[number], what: string) => (others.length ? `${what} (${lineOf(p)})` : what);
  const rates = points.flatMap((p) => [
    { x: p.values[0], y: p.output.summary.load.offeredRate, series: rateLine(p, "offered") },
    { x: p.values[0], y: p.output.summary.load.achievedRate, series: rateLine(p, "achieved") },
  ]);
  out.push(
    await chart(
      "sweep-rates",
      `Offered and achieved rate against ${axis.key} (first seed)`,
      lineSpec(rates, x, { field: "y", title: "rate (req/s)" }, { field: "series", title: "" }),
    ),
  );
  return out.join("\n");
}

/**
 * The HTML report of a scenario run. Its runs must have collected time
 * series (`runScenario(s, fs, { timeseries: true })`) for the over-time
 * charts.
 */
export async function scenarioReportHtml(r: ScenarioResult): Promise<string> {
  const s = r.scenario;
  const lead = `${r.pass ? "PASS" : "FAIL"} · ${s.file}${s.description ? ` · ${s.description}` : ""}`;
  return page(`Scenario ${s.name}`, lead, await scenarioSections(r));
}

/** The sections of a scenario's report (a plan's report embeds its winner's). */
export async function scenarioSections(r: ScenarioResult): Promise<string[]> {
  const s = r.scenario;
  const sections = [section("Assertions", assertionTable(r))];
  if (s.sweep) {
    sections.push(section(`Sweep over ${s.sweep.axes.map((a) => a.key).join(", ")}`, await sweepCharts(r)));
    const c = r.capacity;
    if (c) {
      sections.push(
        section(
          "Capacity answer",
          `<p>${escapeHtml(c.kind)} = ${Number.isNaN(c.value) ? "none" : showNumber(c.value)}${
            c.failing !== undefined ? ` (first failing ${showNumber(c.failing)})` : ""
          }</p>`,
        ),
      );
    }
  } else if (s.variants.size > 0) {
    // Variants are compared: their CDFs and time series overlaid, then each one's tables and charts.
    const docs = [...s.variants.keys()].flatMap((name) => {
      const out = r.runs.get(name);
      return out ? [{ name, out, doc: JSON.parse(runJson(out)) as unknown }] : [];
    });
    const overlay = docs.map((d) => ({ doc: d.doc, run: d.name }));
    sections.push(section(
      `Variants compared: ${docs.map((d) => d.name).join(", ")}`,
      [
        await cdfCharts(overlay),
        await seriesCharts(overlay),
      ].join("\n"),
    ));
    for (const d of docs) {
      // Chart ids stay unique on the page: each variant's are prefixed with its name.
      const own = (await runReportSections(d.out)).map((h) =>
        h.replaceAll('data-chart="', `data-chart="${escapeHtml(d.name)}-`)
      );
      sections.push(`<h2>Variant ${escapeHtml(d.name)}</h2>`, ...own);
    }
  } else {
    sections.push(...await runReportSections(r.output));
  }
  return sections;
}
