/**
 * The HTML report of one run (`deno task sim --report`): the summary
 * tables, latency CDFs, per-group time series, the step-time breakdown of
 * a typical prefill and decode step from the cost model, and the memory
 * plan of one device per group.
 *
 * @module
 */
import type { RunOutput } from "../assembly/run.ts";
import { ALL_STATISTICS, CDF_COLUMNS, EXT_COLUMNS, METRIC_COLUMNS, OVERALL_KEYS } from "../metrics/summary.ts";
import type { StepBreakdown } from "../hardware/batch.ts";
import { runJson } from "./run_json.ts";
import { chart, lineSpec, numberCell, page, section, spansDecades, stackedBarSpec, table, textCell } from "./html.ts";

/** The JSON document's per-statistic tables as HTML (rows: statistics; columns: metrics). */
function statTable(doc: unknown, caption: string, root: string, columns: readonly string[], side?: "a" | "b") {
  return table(
    caption,
    ["", ...columns],
    ALL_STATISTICS.map((st) => [textCell(st), ...columns.map((c) => numberCell(doc, [root, c, st], side))]),
  );
}

/** Key/value rows of a JSON object's numbers. */
/** A table of `key: value` rows; a key is a dotted path under `root`, or [label, path]. */
function keyTable(
  doc: unknown,
  caption: string,
  root: string,
  keys: readonly (string | readonly [string, string])[],
  side?: "a" | "b",
) {
  return table(
    caption,
    ["key", "value"],
    keys.map((k) => {
      const [label, path] = typeof k === "string" ? [k, k] : k;
      return [textCell(label), numberCell(doc, [root, ...path.split(".")], side)];
    }),
  );
}

/** The load table's rows: the rates, the sustainable rate's bracket and the overload probe's estimate. */
const LOAD_KEYS = [
  "offered_rate",
  "achieved_rate",
  "queue_growth",
  ["max_sustainable_rate (at least)", "max_sustainable_rate.0"],
  ["max_sustainable_rate (at most)", "max_sustainable_rate.1"],
  ["max_sustainable_rate (overload probe)", "saturation_probe_rate"],
] as const;

const GROUP_KEYS = [
  "engines",
  "batch_occupancy",
  "kv_occupancy",
  "kv_occupancy_peak",
  "mfu",
  "mbu",
  "mean_batch",
  "peak_batch",
  "preemptions",
  "kv_transfers.count",
  "kv_transfers.mean_seconds",
  "requests_served",
];

/**
 * The prediction intervals of an engine run's headline figures (the JSON's
 * `prediction_intervals`), or nothing for a run without them.
 */
function intervalTable(doc: unknown, side?: "a" | "b"): string[] {
  const pi = (doc as { prediction_intervals?: { confidence: number; metrics: Record<string, { stratum: string }> } })
    .prediction_intervals;
  if (!pi) return [];
  const root = ["prediction_intervals", "metrics"];
  return [
    table(
      `Prediction intervals, ${
        (pi.confidence * 100).toFixed(0)
      }%: where the measured value lies, from held-out errors (docs/fidelity.md)`,
      ["metric", "simulated", "low", "high", "from the held-out errors of"],
      Object.entries(pi.metrics).map(([m, v]) => [
        textCell(m),
        numberCell(doc, [...root, m, "simulated"], side),
        numberCell(doc, [...root, m, "low"], side),
        numberCell(doc, [...root, m, "high"], side),
        textCell(v.stratum),
      ]),
    ),
  ];
}

/** The summary tables of a run's JSON document (shared with the comparison page). */
export function summaryTables(doc: unknown, side?: "a" | "b"): string {
  const groups = (doc as { groups?: { group: string; role: string }[] }).groups ?? [];
  return [
    statTable(doc, "Per-request metrics (the guide's table)", "per_metric_summary", METRIC_COLUMNS, side),
    keyTable(doc, "Overall summary", "overall_summary", OVERALL_KEYS, side),
    ...intervalTable(doc, side),
    statTable(doc, "Latency tails, from send and from arrival (ext)", "ext_metric_summary", EXT_COLUMNS, side),
    keyTable(doc, "Load", "load", LOAD_KEYS, side),
    keyTable(
      doc,
      "Headroom",
      "headroom",
      ["batch_occupancy", "kv_occupancy", "kv_occupancy_peak", "kv_cached", "busy_fraction", "mfu", "mbu"],
      side,
    ),
    table(
      "Instance groups",
      ["group", "role", ...GROUP_KEYS],
      groups.map((g, i) => [
        textCell(g.group),
        textCell(g.role),
        ...GROUP_KEYS.map((k) => numberCell(doc, ["groups", i, ...k.split(".")], side)),
      ]),
    ),
  ].join("\n");
}

/** CDF rows of the `distributions` section: {seconds, quantile, run} per point. */
export function cdfRows(doc: unknown, column: string, run?: string): Record<string, unknown>[] {
  const q = (doc as { distributions?: { seconds: Record<string, number[]> } }).distributions?.seconds[column] ?? [];
  return q.map((s, i) => ({ seconds: s, quantile: i / Math.max(1, q.length - 1), ...(run ? { run } : {}) }));
}

/** The latency CDF charts (one per column that has one). */
export async function cdfCharts(docs: readonly { doc: unknown; run?: string }[]): Promise<string> {
  const out: string[] = [];
  for (const column of CDF_COLUMNS) {
    const rows = docs.flatMap((d) => cdfRows(d.doc, column, d.run));
    if (rows.length === 0) continue;
    const log = spansDecades(rows.map((r) => Number(r.seconds)));
    out.push(
      await chart(
        `cdf-${column}`,
        `${column} CDF`,
        lineSpec(
          // A log axis drops the zeros (a client that never waited): a latency spanning two decades reads on one.
          log ? rows.filter((r) => Number(r.seconds) > 0) : rows,
          { field: "seconds", title: column },
          { field: "quantile", title: "requests (fraction)" },
          docs.length > 1 ? { field: "run", title: "run" } : undefined,
          { logX: log },
        ),
      ),
    );
  }
  return out.join("\n");
}

/**
 * The time-series charts of the `timeseries` section: one line per group; with several runs (a comparison), small
 * multiples, a panel per run side by side on the same axes' titles, since four overlaid offered/achieved lines cannot
 * be told apart.
 */
export async function seriesCharts(docs: readonly { doc: unknown; run?: string }[]): Promise<string> {
  type Ts = {
    time_s: number[];
    offered_rate: number[];
    achieved_rate: number[];
    groups: Record<string, unknown>[];
  };
  const all = docs.flatMap((d) => {
    const ts = (d.doc as { timeseries?: Ts }).timeseries;
    return ts ? [{ ts, run: d.run }] : [];
  });
  if (all.length === 0) return `<p class="note">This run has no time series.</p>`;
  // One panel per run: its ID and caption say which.
  const panels = async (
    key: string,
    title: string,
    rowsOf: (one: (typeof all)[number]) => { t: number; v: number; series: string }[],
    unit: string,
    seriesTitle: string,
    skip?: (rows: { v: number }[]) => boolean,
  ) => {
    const out: string[] = [];
    for (const one of all) {
      const rows = rowsOf(one);
      if (skip?.(rows)) continue;
      out.push(
        await chart(
          all.length > 1 ? `${key}-${one.run}` : key,
          all.length > 1 ? `${title}: ${one.run}` : title,
          lineSpec(rows, { field: "t", title: "time (s)" }, { field: "v", title: unit }, {
            field: "series",
            title: seriesTitle,
          }),
        ),
      );
    }
    return out;
  };
  const charts = await panels(
    "rate",
    "Offered vs achieved rate (client)",
    ({ ts }) =>
      ts.time_s.flatMap((t, i) => [
        { t, v: ts.offered_rate[i], series: "offered" },
        { t, v: ts.achieved_rate[i], series: "achieved" },
      ]),
    "rate (req/s)",
    "",
  );
  const perGroup: [string, string, string][] = [
    ["running", "Running requests (in the batch, all engines of the group)", "requests (count)"],
    ["waiting", "Waiting requests (engine queues)", "requests (count)"],
    ["kv_occupancy", "KV cache occupancy", "KV blocks in use (share)"],
    ["batch", "Batch size (mean sequences per step)", "sequences (count)"],
    ["preemptions_per_s", "Preemptions", "preemptions (per s)"],
    ["kv_transfers_in_flight", "KV transfers in flight (PD)", "transfers (count)"],
  ];
  for (const [key, title, unit] of perGroup) {
    charts.push(
      ...await panels(
        key,
        title,
        ({ ts }) =>
          ts.groups.flatMap((g) =>
            ts.time_s.flatMap((t, i) => {
              const v = (g[key] as (number | null)[])[i];
              return v === null || v === undefined ? [] : [{ t, v, series: String(g.group) }];
            })
          ),
        unit,
        "group",
        // Transfers only where something was transferred (PD runs).
        key === "kv_transfers_in_flight" ? (rows) => !rows.some((r) => r.v > 0) : undefined,
      ),
    );
  }
  return charts.join("\n");
}

const PARTS: [keyof StepBreakdown, string][] = [
  ["linear", "GEMMs (incl. MoE experts)"],
  ["attention", "attention"],
  ["elementwise", "norms, rotary, activations"],
  ["communication", "communication"],
  ["lmHead", "LM head and sampling"],
  ["host", "host overhead"],
];

/** Where a typical prefill step and decode step of each group spend their time (cost model). */
async function breakdownChart(out: RunOutput): Promise<string> {
  const rows: { bar: string; part: string; value: number; order: number }[] = [];
  out.assembled.groups.forEach((g, i) => {
    const s = out.series?.groups[i];
    for (const [kind, shape] of [["prefill", s?.typicalPrefill], ["decode", s?.typicalDecode]] as const) {
      if (!shape) continue;
      const b: StepBreakdown = {
        linear: 0,
        attention: 0,
        elementwise: 0,
        communication: 0,
        lmHead: 0,
        host: 0,
        total: 0,
      };
      g.cost.stepTime(shape, b);
      const what = kind === "prefill"
        ? `${shape.prefillTokens} prefill + ${shape.decodeSeqs} decode tokens`
        : `${shape.decodeSeqs} sequences, ${Math.round(shape.decodeContext / Math.max(1, shape.decodeSeqs))} context`;
      PARTS.forEach(([k, part], order) =>
        rows.push({ bar: `${g.name} ${kind} (${what})`, part, value: b[k] * 1e3, order })
      );
    }
  });
  if (rows.length === 0) return "";
  return await chart(
    "step-breakdown",
    "Step time of a typical step (the run's mean step shape, from the cost model)",
    { ...stackedBarSpec(rows, "step time (ms)", "group and step"), width: 440 },
  );
}

/** The memory sizing of one device of each group. */
async function memoryChart(out: RunOutput): Promise<string> {
  const gib = (b: number) => b / 2 ** 30;
  const rows = out.assembled.groups.flatMap((g) => {
    const m = g.memory;
    const kv = m.kvBlocks * m.kvBlockBytes;
    const parts: [string, number][] = [
      ["weights", m.weightBytes],
      ["activations", m.activationBytes],
      ["runtime reserve", m.runtimeBytes],
      ["KV cache", kv],
      ["unused", Math.max(0, m.deviceBytes - m.weightBytes - m.activationBytes - m.runtimeBytes - kv)],
    ];
    return parts.map(([part, v], order) => ({ bar: `${g.name} (${g.device.name})`, part, value: gib(v), order }));
  });
  return await chart("memory", "Memory sizing of one device (GiB)", {
    ...stackedBarSpec(rows, "memory (GiB)", "group (device)"),
    width: 440,
  });
}

/** The sections of a run's report (a scenario's report embeds them). */
export async function runReportSections(out: RunOutput): Promise<string[]> {
  const doc = JSON.parse(runJson(out));
  return [
    section("Summary", summaryTables(doc)),
    section("Latency distributions", await cdfCharts([{ doc }])),
    section("Over time", await seriesCharts([{ doc }])),
    section("Where a step's time goes", await breakdownChart(out)),
    section("Memory", await memoryChart(out)),
  ];
}

/**
 * The HTML report of a run. The run must have collected its time series
 * (`timeseries: true`) for the over-time charts and the step breakdown.
 *
 * @param out the run
 * @param lead the line under the title (what was simulated)
 */
export async function runReportHtml(out: RunOutput, lead: string): Promise<string> {
  return page("ServingCast run report", lead, await runReportSections(out));
}
