/**
 * `deno task docs:sessions`: runs `scenarios/llama8b_h100_sessions_routing.yaml`
 * (multi-turn chat on four H100s, routed least-loaded, prefix-aware and by
 * session affinity) and draws what the README's "Sessions and prefix-aware
 * routing" section shows: each routing's prefix-cache hit rate, median and
 * p99 TTFT, median TPOT and load imbalance, as `docs/sessions-routing.svg`
 * (Vega-Lite, rendered headless).
 *
 * @module
 */
import { loadScenario, runScenario } from "../core/scenario/mod.ts";
import { renderSvg } from "../core/report/svg.ts";
import type { Summary } from "../core/metrics/summary.ts";
import { CONSOLE_OUTPUT, readTaskArgs, taskMain } from "../scenarios/_args.ts";
import type { TaskOutput } from "../scenarios/_args.ts";

const USAGE = `Usage: deno task docs:sessions

Runs scenarios/llama8b_h100_sessions_routing.yaml and writes
docs/sessions-routing.svg: each routing's prefix-cache hit rate, TTFT,
TPOT and load imbalance.

  -h, --help   show this help and exit`;

/** The scenario drawn, from the repository root. */
const SCENARIO = "scenarios/llama8b_h100_sessions_routing.yaml";

/** One bar: a routing's value of a figure. */
interface Bar {
  readonly routing: string;
  readonly figure: string;
  readonly value: number;
  readonly label: string;
}

/** The figures, in the order drawn. */
const FIGURES = [
  "prefix-cache hit rate",
  "TTFT p50 (s)",
  "TTFT p99 (s)",
  "TPOT p50 (s)",
  "load imbalance (max / mean)",
];

/** The bars of one run. */
function bars(routing: string, s: Summary): Bar[] {
  const ttft = s.perMetric["TTFT(s)"];
  const hit = s.prefixCache ? s.prefixCache.hitTokens / s.prefixCache.promptTokens : 0;
  const ms = (v: number) => `${(v * 1e3).toFixed(1)} ms`;
  return [
    { routing, figure: "prefix-cache hit rate", value: hit, label: `${(hit * 100).toFixed(0)}%` },
    { routing, figure: "TTFT p50 (s)", value: ttft.MEDIAN, label: ms(ttft.MEDIAN) },
    { routing, figure: "TTFT p99 (s)", value: ttft.P99, label: ms(ttft.P99) },
    { routing, figure: "TPOT p50 (s)", value: s.perMetric["TPOT(s)"].MEDIAN, label: ms(s.perMetric["TPOT(s)"].MEDIAN) },
    { routing, figure: "load imbalance (max / mean)", value: s.loadImbalance, label: s.loadImbalance.toFixed(2) },
  ];
}

/**
 * `deno task docs:sessions` in this process, its lines to `io`.
 *
 * @returns the exit code: 0 written (or help), 2 bad arguments
 */
export async function runSessionsFigure(argv: readonly string[], io: TaskOutput = CONSOLE_OUTPUT): Promise<number> {
  const args = readTaskArgs({ task: "docs:sessions", usage: USAGE }, argv, io);
  if (typeof args === "number") return args;
  const root = new URL("../", import.meta.url);
  const r = runScenario(loadScenario(new URL(SCENARIO, root).pathname));
  const names: Record<string, string> = {
    least_loaded: "least_loaded",
    prefix_aware: "prefix_aware",
    affinity: "session_affinity",
  };
  const values = [...r.runs].flatMap(([name, out]) => bars(names[name] ?? name, out.summary));
  const svg = await renderSvg({
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: "Multi-turn chat on 4 × H100 (Llama-3.1-8B, vLLM, prefix caching): routing", fontSize: 13 },
    data: { values },
    facet: { column: { field: "figure", type: "nominal", title: null, sort: FIGURES } },
    resolve: { scale: { x: "independent" } },
    spec: {
      width: 150,
      height: 90,
      layer: [
        {
          mark: { type: "bar" },
          encoding: {
            y: { field: "routing", type: "nominal", title: null, sort: null },
            x: { field: "value", type: "quantitative", title: null, axis: { tickCount: 3 } },
            color: { field: "routing", type: "nominal", legend: null, sort: null },
          },
        },
        {
          mark: { type: "text", align: "left", dx: 3, fontSize: 10 },
          encoding: {
            y: { field: "routing", type: "nominal", sort: null },
            x: { field: "value", type: "quantitative" },
            text: { field: "label" },
          },
        },
      ],
    },
  });
  const file = new URL("docs/sessions-routing.svg", root);
  Deno.writeTextFileSync(file, svg);
  io.out(`wrote docs/sessions-routing.svg (${SCENARIO}: ${r.checks.every((c) => c.pass) ? "PASS" : "FAIL"})`);
  return 0;
}

if (import.meta.main) Deno.exitCode = await taskMain("docs:sessions", () => runSessionsFigure(Deno.args));
