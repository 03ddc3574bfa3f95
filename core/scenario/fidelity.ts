/**
 * The fidelity report: simulated vs measured for every validation
 * scenario, the signed error of each case, and the median absolute
 * percentage error and the median signed error (bias) overall, per engine
 * and per chip. Pure: results in, text out.
 *
 * @module
 */
import type { ScenarioResult } from "./runner.ts";
import { alignColumns } from "../report/columns.ts";

/**
 * What `deno task validate` and the test suite hold the fidelity report to:
 * issue 10's targets. A median absolute error of at most 10% and a median
 * signed error within ±5% over at least 60 cases (the set holds 123), and
 * at most 15% for each engine and each chip with four cases or more. Since
 * the set grew to 88 held-out public runs these were first held where the
 * set stood and lowered, each in a commit of its own, as the model caught
 * up. A single case is held by its band (or, for a known gap, by staying
 * outside it).
 */
export const FIDELITY_GATE = {
  medianAbsError: 0.1,
  absBias: 0.05,
  minCases: 120,
  perGroupMedianAbsError: 0.15,
  perGroupMinCases: 4,
} as const;

/** The gate's failures for a report: empty when it passes. */
export function gateFailures(r: FidelityReport): string[] {
  const g = FIDELITY_GATE;
  const out: string[] = [];
  const p = (x: number) => pct(x, false);
  if (r.medianAbsError > g.medianAbsError) out.push(`median |error| ${p(r.medianAbsError)} > ${p(g.medianAbsError)}`);
  if (Math.abs(r.medianBias) > g.absBias) out.push(`median signed error ${pct(r.medianBias)} beyond ±${p(g.absBias)}`);
  if (r.rows.length < g.minCases) out.push(`${r.rows.length} cases < ${g.minCases}`);
  const groups = [
    ...r.perEngine.map((x) => ({ ...x, name: x.engine })),
    ...r.perChip.map((x) => ({ ...x, name: x.chip })),
  ];
  for (const x of groups) {
    if (x.cases >= g.perGroupMinCases && x.medianAbsError > g.perGroupMedianAbsError) {
      out.push(`${x.name}: median |error| ${p(x.medianAbsError)} > ${p(g.perGroupMedianAbsError)}`);
    }
  }
  return out;
}

/** One compared number. */
export interface FidelityRow {
  /** Scenario name. */
  readonly scenario: string;
  /** The chip of the scenario's first instance group. */
  readonly chip: string;
  /** The engine measured: `serving_config.engine`, else the scenario name's first word (gptfast, sglang, trtllm). */
  readonly engine: string;
  /** Canonical metric name. */
  readonly metric: string;
  /** Simulated value. */
  readonly simulated: number;
  /** Measured value. */
  readonly measured: number;
  /** simulated / measured − 1. */
  readonly error: number;
  /** Accepted |error|. */
  readonly maxError: number;
  /** Where the measurement comes from. */
  readonly source: string;
  /** Why the simulator is known to miss it (`known_gap`), if it is: the row still counts in every median. */
  readonly knownGap?: string;
}

/** The whole report. */
export interface FidelityReport {
  /** Every compared number, in scenario order. */
  readonly rows: readonly FidelityRow[];
  /** Median |error| over all rows. */
  readonly medianAbsError: number;
  /** Largest |error|. */
  readonly maxAbsError: number;
  /** Median signed error over all rows (+: the simulator is slow, −: too fast). */
  readonly medianBias: number;
  /** Median |error| and signed error per chip, by chip name. */
  readonly perChip: ReadonlyArray<{ chip: string; cases: number; medianAbsError: number; medianBias: number }>;
  /** The same per engine. */
  readonly perEngine: ReadonlyArray<{ engine: string; cases: number; medianAbsError: number; medianBias: number }>;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? NaN : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/** Builds the report from validation scenario results. */
export function fidelityReport(results: readonly ScenarioResult[]): FidelityReport {
  const rows: FidelityRow[] = results.flatMap((r) =>
    r.measurements.map((m) => ({
      scenario: r.scenario.name,
      chip: r.output.plan.groups[0].device.name,
      engine: r.output.plan.config.common.serving_config.engine ?? r.scenario.name.split("-")[0],
      metric: m.measurement.metric.name,
      simulated: m.simulated,
      measured: m.measurement.value,
      error: m.error,
      maxError: m.measurement.maxError,
      source: m.measurement.source,
      ...(m.measurement.knownGap === undefined ? {} : { knownGap: m.measurement.knownGap }),
    }))
  );
  const abs = rows.map((r) => Math.abs(r.error));
  const by = (key: "chip" | "engine") =>
    [...new Set(rows.map((r) => r[key]))].sort().map((name) => {
      const e = rows.filter((r) => r[key] === name).map((r) => r.error);
      return { name, cases: e.length, medianAbsError: median(e.map(Math.abs)), medianBias: median(e) };
    });
  return {
    rows,
    medianAbsError: median(abs),
    maxAbsError: abs.length ? Math.max(...abs) : NaN,
    medianBias: median(rows.map((r) => r.error)),
    perChip: by("chip").map(({ name, ...g }) => ({ chip: name, ...g })),
    perEngine: by("engine").map(({ name, ...g }) => ({ engine: name, ...g })),
  };
}

const num = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 1 ? x.toFixed(2) : x.toPrecision(3));
const pct = (x: number, signed = true) => `${signed && x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}%`;

/** A calibration case not run yet, and why. */
export interface PendingCase {
  /** The case. */
  readonly case: string;
  /** Why it is not run. */
  readonly reason: string;
}

/** The report as a Markdown document (docs/fidelity.md), with the cases not run yet. */
export function formatFidelityMarkdown(r: FidelityReport, pending: readonly PendingCase[] = []): string {
  const gaps = r.rows.filter((x) => x.knownGap !== undefined);
  const lines = [
    "# Fidelity: simulated vs measured",
    "",
    "Generated by `deno task validate` from the scenarios in `scenarios/validation/`;",
    "each holds one deployment and workload of `shared/reference/calibration.md`",
    "or `docs/validation-candidates.md` in the configuration format, and the value",
    "measured on real hardware. Do not edit by hand: a test checks that this file",
    "matches a fresh run.",
    "",
    `**Median absolute error: ${pct(r.medianAbsError, false)}** over ${r.rows.length} cases; largest ${
      pct(r.maxAbsError, false)
    }; median signed error (bias) ${pct(r.medianBias)} (negative: the simulator is too fast).`,
    ...(gaps.length
      ? [
        "",
        `${gaps.length} of the cases are known gaps (marked in the \`gap\` column, with the reason below the table): they count in every median and table here.`,
      ]
      : []),
    "",
    "| engine | cases | median absolute error | median signed error |",
    "| --- | ---: | ---: | ---: |",
    ...r.perEngine.map((c) => `| ${c.engine} | ${c.cases} | ${pct(c.medianAbsError, false)} | ${pct(c.medianBias)} |`),
    "",
    "| chip | cases | median absolute error | median signed error |",
    "| --- | ---: | ---: | ---: |",
    ...r.perChip.map((c) => `| ${c.chip} | ${c.cases} | ${pct(c.medianAbsError, false)} | ${pct(c.medianBias)} |`),
    "",
    "| scenario | chip | metric | simulated | measured | error | band | gap | source |",
    "| --- | --- | --- | ---: | ---: | ---: | ---: | :---: | --- |",
    ...r.rows.map((x) =>
      `| ${x.scenario} | ${x.chip} | ${x.metric} | ${num(x.simulated)} | ${num(x.measured)} | ${pct(x.error)} | ±${
        (x.maxError * 100).toFixed(0)
      }% | ${x.knownGap === undefined ? "" : `[${gaps.indexOf(x) + 1}]`} | ${x.source} |`
    ),
    "",
    ...(gaps.length
      ? ["Known gaps:", "", ...gaps.map((x, i) => `${i + 1}. ${x.scenario} ${x.metric}: ${x.knownGap}`), ""]
      : []),
    ...(pending.length ? ["## Not run yet", "", ...pending.map((p) => `- ${p.case}: ${p.reason}.`), ""] : []),
  ];
  return lines.join("\n");
}

/** The report as a terminal table. */
export function formatFidelityTable(r: FidelityReport): string {
  const head = ["scenario", "chip", "metric", "simulated", "measured", "error", "gap"];
  const body = r.rows.map((x) => [
    x.scenario,
    x.chip,
    x.metric,
    num(x.simulated),
    num(x.measured),
    pct(x.error),
    x.knownGap === undefined ? "" : "known",
  ]);
  const out = [...alignColumns([head, ...body], { align: (i) => (i >= 3 && i < 6 ? "right" : "left") }), ""];
  for (const c of [...r.perEngine.map((e) => ({ ...e, chip: e.engine })), ...r.perChip]) {
    out.push(
      `${c.chip.padEnd(28)} median |error| ${pct(c.medianAbsError, false)}, bias ${pct(c.medianBias)} over ${c.cases}`,
    );
  }
  out.push(
    `${"ALL".padEnd(28)} median |error| ${pct(r.medianAbsError, false)} over ${r.rows.length}; largest ${
      pct(r.maxAbsError, false)
    }`,
  );
  return out.join("\n") + "\n";
}
