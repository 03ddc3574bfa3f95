/**
 * A sweep's results, readable without scripts: one row per point (the
 * swept values, PASS or FAIL and why, p99 TTFT from arrival, p99 TPOT,
 * achieved and offered rate; bisection runs marked) and the capacity
 * answer. `deno task check` prints them and, with `--json-dir`, writes them
 * as `<name>.sweep.json`.
 *
 * @module
 */
import type { RunOutput } from "../assembly/run.ts";
import { alignColumns } from "../text/columns.ts";
import type { ScenarioResult } from "./runner.ts";

/** One seed's figures at a point. */
export interface SeedFigures {
  /** The seed. */
  readonly seed: number;
  /** p99 TTFT from arrival, s. */
  readonly ttft_p99: number;
  /** p99 TPOT, s. */
  readonly tpot_p99: number;
  /** Completions per second (middle 80%). */
  readonly achieved_rate: number;
  /** Arrivals per second (middle 80%). */
  readonly offered_rate: number;
  /** Whether the run keeps up with its offered load. */
  readonly keeps_up: boolean;
}

/** One point of a sweep, as printed and written. */
export interface SweepRow extends Omit<SeedFigures, "seed"> {
  /** The swept values by key. */
  readonly values: Record<string, number>;
  /** Run by the bisection of a capacity search. */
  readonly bisection: boolean;
  /** Requests each run of the point simulated (more than the file's when a capacity search ran it again to decide it, or to confirm its answer). */
  readonly requests: number;
  /** Whether the point meets what it must (capacity SLOs, else expect_per_point); null when nothing is asked of it. */
  readonly pass: boolean | null;
  /** Why it fails ("" when it passes). */
  readonly why: string;
  /** Each seed's figures (the row shows the worst: highest latencies, the lowest achieved share of offered). */
  readonly seeds: readonly SeedFigures[];
}

function figures(out: RunOutput): SeedFigures {
  const s = out.summary;
  return {
    seed: out.assembled.input.workload.seed,
    ttft_p99: s.extMetric["TTFT_FROM_ARRIVAL(s)"].P99,
    tpot_p99: s.perMetric["TPOT(s)"].P99,
    achieved_rate: s.load.achievedRate,
    offered_rate: s.load.offeredRate,
    keeps_up: s.load.keepsUp,
  };
}

const worst = (xs: readonly number[]) => (xs.some(Number.isNaN) ? NaN : Math.max(...xs));

/** The rows of a sweep, ordered by the swept values (bisection runs among the grid's). */
export function sweepRows(r: ScenarioResult): SweepRow[] {
  const axes = r.scenario.sweep?.axes ?? [];
  const order = (a: readonly number[], b: readonly number[]) => {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
    return 0;
  };
  return [...r.points].sort((p, q) => order(p.values, q.values)).map((p) => {
    const seeds = p.outputs.map(figures);
    const share = (f: SeedFigures) => f.achieved_rate / f.offered_rate;
    const slowest = seeds.reduce((a, b) => (share(b) < share(a) ? b : a));
    return {
      values: Object.fromEntries(axes.map((ax, i) => [ax.key, p.values[i]])),
      bisection: p.bisection,
      requests: p.output.assembled.input.workload.numRequests,
      pass: p.verdict ? p.verdict.pass : null,
      why: p.verdict?.why ?? "",
      ttft_p99: worst(seeds.map((f) => f.ttft_p99)),
      tpot_p99: worst(seeds.map((f) => f.tpot_p99)),
      achieved_rate: slowest.achieved_rate,
      offered_rate: slowest.offered_rate,
      keeps_up: seeds.every((f) => f.keeps_up),
      seeds,
    };
  });
}

const num = (x: number, digits = 3) => (Number.isFinite(x) ? String(Number(x.toPrecision(digits))) : "–");

/**
 * The rows as text: a header, one line per point and the capacity answer,
 * each indented by two spaces.
 */
export function formatSweepRows(r: ScenarioResult): string[] {
  const axes = r.scenario.sweep?.axes ?? [];
  if (!axes.length) return [];
  const rows = sweepRows(r);
  const n = r.seeds.length;
  const head = [
    ...axes.map((a) => a.key),
    "requests",
    "result",
    "ttft.p99(s)",
    "tpot.p99(s)",
    "achieved(req/s)",
    "offered(req/s)",
    n > 1 ? `why (worst of ${n} seeds)` : "why",
  ];
  const cells = rows.map((row) => [
    ...axes.map((a, i) => `${row.values[a.key]}${i === 0 && row.bisection ? " (bisection)" : ""}`),
    String(row.requests),
    row.pass === null ? "–" : row.pass ? "PASS" : "FAIL",
    num(row.ttft_p99),
    num(row.tpot_p99),
    num(row.achieved_rate, 4),
    num(row.offered_rate, 4),
    row.why,
  ]);
  const out = alignColumns([head, ...cells], { start: "  " });
  const c = r.capacity;
  if (c) out.push(`  ${c.kind} = ${Number.isNaN(c.value) ? "none" : c.value}: ${c.text}`);
  return out;
}

/** The `<name>.sweep.json` document: the rows and the capacity answer. */
export function sweepJson(r: ScenarioResult): string {
  const c = r.capacity;
  const answer = c
    ? {
      [c.kind]: {
        key: c.key,
        value: c.value,
        [c.kind === "max_rate_meeting" ? "first_failing" : "largest_failing"]: c.failing ?? null,
        failing_why: c.failingWhy,
        text: c.text,
      },
    }
    : {};
  return JSON.stringify(
    {
      scenario: r.scenario.name,
      file: r.scenario.file,
      keys: (r.scenario.sweep?.axes ?? []).map((a) => a.key),
      seeds: r.seeds,
      ...answer,
      points: sweepRows(r),
    },
    null,
    2,
  ) + "\n";
}
