/**
 * The fidelity report (docs/fidelity.md): every measured row simulated with
 * the calibrated constants refitted without its own source
 * (leave-one-source-out), the median absolute error, signed bias and share
 * within ±25% of the held-out rows overall and per engine, chip vendor,
 * dense/MoE and metric, and the rows that set constants (fit rows) or share
 * a rig with them (same-rig rows) reported apart, never counted as held
 * out. Pure: predictions in, text out.
 *
 * @module
 */
import { kindOf, MIN_STRATUM_ROWS, MIN_STRATUM_SOURCES, predictionInterval, vendorOf } from "../metrics/intervals.ts";
import type { MetricKind, Residual } from "../metrics/intervals.ts";
import { alignColumns } from "../text/columns.ts";
import type { ReportedConstant, RowPrediction } from "./loso.ts";
import type { Registry } from "./registry.ts";

/** Figures the held-out rows are held to. */
export interface FidelityBar {
  /** Largest median |error| over all held-out rows. */
  readonly medianAbsError: number;
  /** Largest |median signed error|. */
  readonly absBias: number;
  /** Largest median |error| of an engine or chip vendor with {@link minGroupRows} rows or more. */
  readonly perGroupMedianAbsError: number;
  /** Groups allowed more, by "engine NAME" or "vendor NAME", each with why. */
  readonly groupCeilings: Readonly<Record<string, { readonly medianAbsError: number; readonly why: string }>>;
  /** A group with fewer held-out rows is not judged (a median of few rows says too little). */
  readonly minGroupRows: number;
  /** Fewest held-out rows. */
  readonly minRows: number;
}

/**
 * Issue 24's targets, fixed before the first leave-one-source-out figure
 * was computed: a median absolute error of at most 15%, a median signed
 * error within ±5%, and at most 20% for each engine and each chip vendor
 * with 5 held-out rows or more. docs/fidelity.md says whether they are met.
 */
export const FIDELITY_TARGETS: FidelityBar = {
  medianAbsError: 0.15,
  absBias: 0.05,
  perGroupMedianAbsError: 0.2,
  groupCeilings: {},
  minGroupRows: 5,
  minRows: 60,
};

/**
 * What `deno task validate` and the test suite hold the held-out rows to:
 * the targets where they are met, and elsewhere the figures this model
 * reached when the leave-one-source-out figures were first computed
 * (2026-12, 314 held-out rows: median 19.2%, signed -7.5%; MindIE 58.3%,
 * SGLang 20.7%, Ascend 64.8%), rounded up, so that no change makes them
 * worse. Each is lowered as the model improves, never raised. A single row
 * is held by its band (or, for a known gap, by staying outside it).
 */
export const FIDELITY_GATE: FidelityBar = {
  medianAbsError: 0.2,
  absBias: 0.08,
  perGroupMedianAbsError: 0.2,
  groupCeilings: {
    "engine mindie": {
      medianAbsError: 0.6,
      why: "MindIE's scheduler is modelled by the generic record; one source (GPUStack, 12 rows) measures it",
    },
    "engine sglang": {
      medianAbsError: 0.22,
      why: "SGLang's bursts of all prompts at once (GPUStack) and its early DeepSeek-R1 builds are missed",
    },
    "vendor Huawei Ascend": {
      medianAbsError: 0.66,
      why: "MoE and MindIE on Ascend are not pinned by any source; the Ascend constants come from one dense vLLM rig",
    },
  },
  minGroupRows: 5,
  minRows: 300,
};

/** One compared number. */
export interface FidelityRow {
  /** The row's id. */
  readonly id: string;
  /** Scenario name. */
  readonly scenario: string;
  /** The chip of the scenario's first instance group. */
  readonly chip: string;
  /** Its vendor. */
  readonly vendor: string;
  /** The engine (`serving_config.engine`, or "none"). */
  readonly engine: string;
  /** "MoE" or "dense". */
  readonly architecture: string;
  /** Canonical metric name. */
  readonly metric: string;
  /** TTFT, TPOT/ITL, E2E or throughput. */
  readonly kind: MetricKind;
  /** The measured value. */
  readonly measured: number;
  /** Simulated with the constants fitted without the row's source. */
  readonly heldOut: number;
  /** heldOut / measured − 1. */
  readonly error: number;
  /** Simulated with the constants fitted on every source. */
  readonly inSample: number;
  /** inSample / measured − 1. */
  readonly inSampleError: number;
  /** Accepted |error| (the band). */
  readonly maxError: number;
  /** Why the simulator is known to miss it, if it is. */
  readonly knownGap?: string;
  /** "fit", "same-rig" or "held-out". */
  readonly category: "fit" | "same-rig" | "held-out";
  /** Its source's id. */
  readonly source: string;
  /** Its rig's id. */
  readonly rig: string;
  /** Where the number is published. */
  readonly citation: string;
}

/** Summary figures of a set of rows. */
export interface FidelityStats {
  /** How many rows. */
  readonly rows: number;
  /** Median |error|. */
  readonly medianAbsError: number;
  /** Median signed error (+: the simulator is slow or low, −: fast or high, as simulated / measured − 1). */
  readonly bias: number;
  /** Share of rows within ±25%. */
  readonly within25: number;
}

/** The whole report. */
export interface FidelityReport {
  /** Every row, in order. */
  readonly rows: readonly FidelityRow[];
  /** The held-out rows: the headline. */
  readonly heldOut: FidelityStats;
  /** The held-out rows of sources that set no constant at all. */
  readonly independent: FidelityStats;
  /** The held-out rows per engine, chip vendor, dense/MoE and metric kind. */
  readonly by: Readonly<Record<"engine" | "vendor" | "architecture" | "kind", ReadonlyMap<string, FidelityStats>>>;
  /** Fit rows, held out (their source left out) and in sample. */
  readonly fit: { readonly heldOut: FidelityStats; readonly inSample: FidelityStats };
  /** Same-rig rows, likewise. */
  readonly sameRig: { readonly heldOut: FidelityStats; readonly inSample: FidelityStats };
  /** Sources and rigs behind the held-out rows. */
  readonly counts: { readonly sources: number; readonly rigs: number; readonly allSources: number };
  /** Every calibrated constant. */
  readonly constants: readonly ReportedConstant[];
  /**
   * Share of held-out rows whose measured value lies within the prediction
   * interval of their simulated one, each interval made without the row's
   * own source's residuals, by confidence.
   */
  readonly coverage: ReadonlyMap<number, { readonly covered: number; readonly rows: number }>;
}

/** The held-out rows' residuals (ln simulated / measured), as core/metrics/data/residuals.json keeps them. */
export function residualsOf(rows: readonly FidelityRow[]): Residual[] {
  return rows.filter((r) => r.category === "held-out" && r.heldOut > 0).map((r) => ({
    id: r.id,
    source: r.source,
    engine: r.engine,
    vendor: r.vendor,
    architecture: r.architecture,
    kind: r.kind,
    logRatio: Number(Math.log(r.heldOut / r.measured).toPrecision(6)),
  }));
}

/** Confidences whose coverage the report checks. */
export const COVERAGE_LEVELS = [0.5, 0.8, 0.9] as const;

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? NaN : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/** Median |error|, median signed error and share within ±25% of `errors`. */
export function statsOf(errors: readonly number[]): FidelityStats {
  return {
    rows: errors.length,
    medianAbsError: median(errors.map(Math.abs)),
    bias: median(errors),
    within25: errors.length ? errors.filter((e) => Math.abs(e) <= 0.25).length / errors.length : NaN,
  };
}

/** The report's rows from predictions. */
export function fidelityRows(predictions: readonly RowPrediction[]): FidelityRow[] {
  return predictions.map(({ row, context, heldOut, inSample }) => {
    const m = row.measurement;
    return {
      id: row.id,
      scenario: row.scenario.name,
      chip: context.chip,
      vendor: vendorOf(context.chip),
      engine: context.engine,
      architecture: context.moe ? "MoE" : "dense",
      metric: m.metric.name,
      kind: kindOf(m.metric.name),
      measured: m.value,
      heldOut,
      error: heldOut / m.value - 1,
      inSample,
      inSampleError: inSample / m.value - 1,
      maxError: m.maxError,
      ...(m.knownGap === undefined ? {} : { knownGap: m.knownGap }),
      category: row.role === "fit" ? "fit" : row.sameRig ? "same-rig" : "held-out",
      source: row.rig.source.id,
      rig: row.rig.id,
      citation: m.source,
    };
  });
}

/** Builds the report. */
export function fidelityReport(
  predictions: readonly RowPrediction[],
  registry: Registry,
  constants: readonly ReportedConstant[],
): FidelityReport {
  const rows = fidelityRows(predictions);
  const held = rows.filter((r) => r.category === "held-out");
  const fitSources = new Set(registry.sources.filter((s) => s.rigs.some((g) => g.fit.size > 0)).map((s) => s.id));
  const groupBy = (key: "engine" | "vendor" | "architecture" | "kind") =>
    new Map(
      [...new Set(held.map((r) => r[key]))].sort().map((k) => [
        k,
        statsOf(held.filter((r) => r[key] === k).map((r) => r.error)),
      ]),
    );
  const apart = (c: "fit" | "same-rig") => {
    const rs = rows.filter((r) => r.category === c);
    return { heldOut: statsOf(rs.map((r) => r.error)), inSample: statsOf(rs.map((r) => r.inSampleError)) };
  };
  return {
    rows,
    heldOut: statsOf(held.map((r) => r.error)),
    independent: statsOf(held.filter((r) => !fitSources.has(r.source)).map((r) => r.error)),
    by: {
      engine: groupBy("engine"),
      vendor: groupBy("vendor"),
      architecture: groupBy("architecture"),
      kind: groupBy("kind"),
    },
    fit: apart("fit"),
    sameRig: apart("same-rig"),
    counts: {
      sources: new Set(held.map((r) => r.source)).size,
      rigs: new Set(held.map((r) => r.rig)).size,
      allSources: registry.sources.length,
    },
    constants,
    coverage: coverageOf(rows),
  };
}

/** Leave-one-source-out coverage of the prediction intervals over the held-out rows. */
function coverageOf(rows: readonly FidelityRow[]): Map<number, { covered: number; rows: number }> {
  const residuals = residualsOf(rows);
  const held = rows.filter((r) => r.category === "held-out" && r.heldOut > 0);
  return new Map(COVERAGE_LEVELS.map((c) => {
    let covered = 0, n = 0;
    for (const r of held) {
      const i = predictionInterval(r.heldOut, r.kind, r, c, residuals, r.source);
      if (!i) continue;
      n++;
      if (r.measured >= i.low && r.measured <= i.high) covered++;
    }
    return [c, { covered, rows: n }];
  }));
}

const pct = (x: number, signed = true) =>
  Number.isNaN(x) ? "–" : `${signed && x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}%`;
const share = (x: number) => (Number.isNaN(x) ? "–" : `${(x * 100).toFixed(0)}%`);
const num = (x: number) =>
  !Number.isFinite(x)
    ? String(x)
    : Math.abs(x) >= 100
    ? x.toFixed(0)
    : Math.abs(x) >= 1
    ? x.toFixed(2)
    : x.toPrecision(3);

/** What a report misses of `bar` (default the CI gate): empty when it passes. */
export function gateFailures(r: FidelityReport, bar: FidelityBar = FIDELITY_GATE): string[] {
  const out: string[] = [];
  const p = (x: number) => pct(x, false);
  const h = r.heldOut;
  if (!(h.medianAbsError <= bar.medianAbsError)) {
    out.push(`held-out median |error| ${p(h.medianAbsError)} > ${p(bar.medianAbsError)}`);
  }
  if (!(Math.abs(h.bias) <= bar.absBias)) {
    out.push(`held-out median signed error ${pct(h.bias)} beyond ±${p(bar.absBias)}`);
  }
  if (h.rows < bar.minRows) out.push(`${h.rows} held-out rows < ${bar.minRows}`);
  for (const key of ["engine", "vendor"] as const) {
    for (const [name, s] of r.by[key]) {
      const ceiling = bar.groupCeilings[`${key} ${name}`]?.medianAbsError ?? bar.perGroupMedianAbsError;
      if (s.rows >= bar.minGroupRows && !(s.medianAbsError <= ceiling)) {
        out.push(`${key} ${name}: held-out median |error| ${p(s.medianAbsError)} > ${p(ceiling)}`);
      }
    }
  }
  return out;
}

const statsRow = (name: string, s: FidelityStats) =>
  `| ${name} | ${s.rows} | ${pct(s.medianAbsError, false)} | ${pct(s.bias)} | ${share(s.within25)} |`;

/** What the document says beside the report: the band rule and the cases not run. */
export interface FidelityNotes {
  /** Cases not run yet, and why. */
  readonly pending?: readonly { readonly case: string; readonly reason: string }[];
}

/** The report as a Markdown document (docs/fidelity.md). */
export function formatFidelityMarkdown(r: FidelityReport, notes: FidelityNotes = {}): string {
  const h = r.heldOut;
  const g = FIDELITY_GATE;
  const gaps = r.rows.filter((x) => x.knownGap !== undefined);
  const table = (title: string, m: ReadonlyMap<string, FidelityStats>) => [
    `| ${title} | rows | median \\|error\\| | median signed error | within ±25% |`,
    "| --- | ---: | ---: | ---: | ---: |",
    ...[...m].map(([k, s]) => statsRow(k, s)),
    "",
  ];
  const gate = gateFailures(r);
  const t = FIDELITY_TARGETS;
  const targets = gateFailures(r, t);
  const lines = [
    "# Fidelity: simulated vs measured",
    "",
    "Generated by `deno task validate`; do not edit by hand (a test checks that this file matches a fresh run). Every",
    "row is a published measurement (scenarios/validation/; its source and rig in",
    "scenarios/validation/registry/sources.yaml), simulated with the calibrated constants",
    "(core/config/calibrated.ts) refitted **without that row's own source**: leave-one-source-out.",
    "",
    `## Held-out rows (the headline and the CI gate)`,
    "",
    `**Median absolute error ${
      pct(h.medianAbsError, false)
    }** over ${h.rows} held-out rows from ${r.counts.sources} sources and ${r.counts.rigs} rigs; median signed error ${
      pct(h.bias)
    } (simulated / measured − 1: negative, the simulator is too fast or its throughput too high); ${
      share(h.within25)
    } within ±25%.`,
    "",
    `Of them, the ${r.independent.rows} rows of sources that set no constant at all: median |error| ${
      pct(r.independent.medianAbsError, false)
    }, median signed error ${pct(r.independent.bias)}, ${share(r.independent.within25)} within ±25%.`,
    "",
    `Targets (issue 24, fixed before the first held-out figure): median |error| ≤ ${
      pct(t.medianAbsError, false)
    }, median signed error within ±${pct(t.absBias, false)}, and ≤ ${
      pct(t.perGroupMedianAbsError, false)
    } for every engine and chip vendor with ${t.minGroupRows} rows or more. ${
      targets.length ? `**Not met:** ${targets.join("; ")}.` : "**Met.**"
    }`,
    "",
    `CI gate (the targets where met; elsewhere the first held-out figures, rounded up, lowered as the model improves): median |error| ≤ ${
      pct(g.medianAbsError, false)
    }, median signed error within ±${pct(g.absBias, false)}, ≤ ${
      pct(g.perGroupMedianAbsError, false)
    } per engine and chip vendor except ${
      Object.entries(g.groupCeilings).map(([k, c]) => `${k} ≤ ${pct(c.medianAbsError, false)} (${c.why})`).join("; ")
    }. ${gate.length ? `**Missed:** ${gate.join("; ")}.` : "Met."}`,
    "",
    `Prediction intervals (every headline figure of an engine run carries one: core/metrics/intervals.ts) take the quantiles of the held-out log errors of the narrowest stratum of engine, chip vendor, dense/MoE and metric kind with ${MIN_STRATUM_ROWS} rows from ${MIN_STRATUM_SOURCES} sources or more (else the metric kind alone), each source weighing one. Made without its own source, each held-out row falls inside its interval: ${
      [...r.coverage].map(([c, x]) =>
        `${(c * 100).toFixed(0)}% interval ${x.covered} of ${x.rows} (${share(x.covered / x.rows)})`
      )
        .join(", ")
    }.`,
    "",
    ...table("engine", r.by.engine),
    ...table("chip vendor", r.by.vendor),
    ...table("model", r.by.architecture),
    ...table("metric", r.by.kind),
    "## Rows reported apart",
    "",
    "Rows that set constants (fit rows) and the other rows of the same rigs (same-rig rows) are never counted above.",
    "Held out, their source is left out of the fit as for any row; in sample, every source is fitted.",
    "",
    "| rows | count | held out: median \\|error\\| | held out: median signed | in sample: median \\|error\\| | in sample: median signed |",
    "| --- | ---: | ---: | ---: | ---: | ---: |",
    ...(["fit", "sameRig"] as const).map((k) => {
      const x = r[k];
      return `| ${k === "fit" ? "fit" : "same-rig"} | ${x.heldOut.rows} | ${pct(x.heldOut.medianAbsError, false)} | ${
        pct(x.heldOut.bias)
      } | ${pct(x.inSample.medianAbsError, false)} | ${pct(x.inSample.bias)} |`;
    }),
    "",
    "## Calibrated constants",
    "",
    "Each has a physical meaning and a range a fit never leaves; where no source's fit rows set it, its prior holds",
    "(derived from public facts other than the fit rows). Values as fitted on every source.",
    "",
    "| constant | meaning | range | prior | value | set by | note |",
    "| --- | --- | ---: | ---: | ---: | --- | --- |",
    ...r.constants.map((c) =>
      `| \`${c.spec.name}\` | ${c.spec.meaning} | ${num(c.spec.min)}–${num(c.spec.max)} ${c.spec.unit} | ${
        num(c.spec.prior)
      } | ${num(c.value)} | ${c.pinnedBy.length ? c.pinnedBy.join(", ") : "prior"} | ${
        c.atBound ? `**at its ${c.atBound}**` : ""
      } |`
    ),
    "",
    "## Every row",
    "",
    "`held out` is the headline's figure; `in sample` uses every source's fit. Bands follow the rule of",
    "scenarios/validation/README.md, set when a row is added, and judge the held-out figure.",
    "",
    "| id | category | scenario | chip | engine | metric | measured | held out | error | band | gap | in sample | source | rig |",
    "| --- | --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | :---: | ---: | --- | --- |",
    ...r.rows.map((x) =>
      `| ${x.id} | ${x.category} | ${x.scenario} | ${x.chip} | ${x.engine} | ${x.metric} | ${num(x.measured)} | ${
        num(x.heldOut)
      } | ${pct(x.error)} | ±${(x.maxError * 100).toFixed(0)}% | ${
        x.knownGap === undefined ? "" : `[${gaps.indexOf(x) + 1}]`
      } | ${pct(x.inSampleError)} | ${x.source} | ${x.rig} |`
    ),
    "",
    ...(gaps.length
      ? ["Known gaps:", "", ...gaps.map((x, i) => `${i + 1}. ${x.id} (${x.scenario}, ${x.metric}): ${x.knownGap}`), ""]
      : []),
    "## Where each row is published",
    "",
    ...r.rows.map((x) => `- ${x.id}: ${x.citation}`),
    "",
    ...(notes.pending?.length
      ? ["## Not run yet", "", ...notes.pending.map((p) => `- ${p.case}: ${p.reason}.`), ""]
      : []),
  ];
  return lines.join("\n");
}

/** The report as a terminal table. */
export function formatFidelityTable(r: FidelityReport): string {
  const head = ["id", "category", "scenario", "metric", "measured", "held out", "error", "in sample", "gap"];
  const body = r.rows.map((x) => [
    x.id,
    x.category,
    x.scenario,
    x.metric,
    num(x.measured),
    num(x.heldOut),
    pct(x.error),
    pct(x.inSampleError),
    x.knownGap === undefined ? "" : "known",
  ]);
  const out = [...alignColumns([head, ...body], { align: (i) => (i >= 4 && i < 8 ? "right" : "left") }), ""];
  for (const key of ["engine", "vendor", "architecture", "kind"] as const) {
    for (const [k, s] of r.by[key]) {
      out.push(
        `${`${key} ${k}`.padEnd(32)} median |error| ${pct(s.medianAbsError, false)}, bias ${pct(s.bias)}, ${
          share(s.within25)
        } within ±25% over ${s.rows}`,
      );
    }
  }
  const h = r.heldOut;
  out.push(
    `${"HELD OUT".padEnd(32)} median |error| ${pct(h.medianAbsError, false)}, bias ${pct(h.bias)}, ${
      share(h.within25)
    } within ±25% over ${h.rows} rows (${r.counts.sources} sources)`,
  );
  return out.join("\n") + "\n";
}
