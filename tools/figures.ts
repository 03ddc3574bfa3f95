/**
 * `deno task docs:figures`: runs the scenarios the README draws and writes
 * their figures (Vega-Lite, rendered headless), each a row of bar charts of
 * the scenario's variants:
 *
 * - `docs/sessions-routing.svg` from
 *   `scenarios/llama8b_h100_sessions_routing.yaml` (multi-turn chat on four
 *   H100s, routed least-loaded, prefix-aware and by session affinity): hit
 *   rate, TTFT, TPOT and load imbalance;
 * - `docs/speculation.svg` from `scenarios/llama8b_h100_speculation.yaml`
 *   (one H100 without speculation, with EAGLE and with n-gram drafts):
 *   tokens per decode step, TPOT, E2E and output throughput;
 * - `docs/datasets.svg` from `scenarios/llama8b_h100_datasets.yaml` (one
 *   H100 under three public datasets' length shapes): prompt and output
 *   medians, TTFT and E2E;
 * - `docs/kv-offload.svg` from `scenarios/llama8b_h100_kv_offload.yaml`
 *   (sessions on H100s with a small device KV cache, with and without a
 *   host tier): hit rates of both tiers and TTFT.
 *
 * @module
 */
import { loadScenario, runScenario } from "../core/scenario/mod.ts";
import { renderSvg } from "../core/report/svg.ts";
import type { Summary } from "../core/metrics/summary.ts";
import type { RunOutput } from "../core/assembly/run.ts";
import { expectedDrafts } from "../core/engine/step_accounting.ts";
import { CONSOLE_OUTPUT, readTaskArgs, taskMain } from "../scenarios/_args.ts";
import type { TaskOutput } from "../scenarios/_args.ts";

const USAGE = `Usage: deno task docs:figures

Runs the scenarios the README draws and writes their figures:
docs/sessions-routing.svg (scenarios/llama8b_h100_sessions_routing.yaml),
docs/speculation.svg (scenarios/llama8b_h100_speculation.yaml),
docs/datasets.svg (scenarios/llama8b_h100_datasets.yaml) and
docs/kv-offload.svg (scenarios/llama8b_h100_kv_offload.yaml).

  -h, --help   show this help and exit`;

/** One bar: a variant's value of a figure. */
interface Bar {
  readonly variant: string;
  readonly figure: string;
  readonly value: number;
  readonly label: string;
}

/** A figure: the scenario it runs, its title, and the bars of each of its runs. */
interface Figure {
  readonly scenario: string;
  readonly file: string;
  readonly title: string;
  /** The figures drawn, in order. */
  readonly figures: readonly string[];
  /** A variant's name as drawn. */
  readonly names: Readonly<Record<string, string>>;
  readonly bars: (variant: string, out: RunOutput) => Bar[];
}

const ms = (v: number) => `${(v * 1e3).toFixed(1)} ms`;

/** The prefix-cache hit rate of a run (0 when nothing looked). */
const hitRate = (s: Summary) => (s.prefixCache ? s.prefixCache.hitTokens / s.prefixCache.promptTokens : 0);

const FIGURES: readonly Figure[] = [
  {
    scenario: "scenarios/llama8b_h100_sessions_routing.yaml",
    file: "docs/sessions-routing.svg",
    title: "Multi-turn chat on 4 × H100 (Llama-3.1-8B, vLLM, prefix caching): routing",
    figures: ["prefix-cache hit rate", "TTFT p50 (s)", "TTFT p99 (s)", "TPOT p50 (s)", "load imbalance (max / mean)"],
    names: { least_loaded: "least_loaded", prefix_aware: "prefix_aware", affinity: "session_affinity" },
    bars: (variant, { summary: s }) => {
      const ttft = s.perMetric["TTFT(s)"];
      const tpot = s.perMetric["TPOT(s)"].MEDIAN;
      return [
        { variant, figure: "prefix-cache hit rate", value: hitRate(s), label: `${(hitRate(s) * 100).toFixed(0)}%` },
        { variant, figure: "TTFT p50 (s)", value: ttft.MEDIAN, label: ms(ttft.MEDIAN) },
        { variant, figure: "TTFT p99 (s)", value: ttft.P99, label: ms(ttft.P99) },
        { variant, figure: "TPOT p50 (s)", value: tpot, label: ms(tpot) },
        { variant, figure: "load imbalance (max / mean)", value: s.loadImbalance, label: s.loadImbalance.toFixed(2) },
      ];
    },
  },
  {
    scenario: "scenarios/llama8b_h100_speculation.yaml",
    file: "docs/speculation.svg",
    title: "Speculative decoding on 1 × H100 (Llama-3.1-8B, vLLM, 4 req/s of 1,024 + 256 tokens)",
    figures: ["tokens per decode step", "TPOT p50 (s)", "E2E p50 (s)", "output tok/s"],
    names: { none: "none", eagle: "EAGLE, 3 drafts", ngram: "n-gram, 3 drafts" },
    bars: (variant, out) => {
      const s = out.summary;
      // Tokens a decode step lands per sequence: 1 + the drafts it expects accepted.
      const e = out.assembled.input.engines[0];
      const perStep = 1 + expectedDrafts(e.draftAcceptance, e.draftAcceptances, e.draftTokens);
      const tpot = s.perMetric["TPOT(s)"].MEDIAN;
      const e2e = s.perMetric["E2E_TIME(s)"].MEDIAN;
      const tps = s.overall["output_token_throughput(tok/s)"];
      return [
        { variant, figure: "tokens per decode step", value: perStep, label: perStep.toFixed(2) },
        { variant, figure: "TPOT p50 (s)", value: tpot, label: ms(tpot) },
        { variant, figure: "E2E p50 (s)", value: e2e, label: `${e2e.toFixed(2)} s` },
        { variant, figure: "output tok/s", value: tps, label: tps.toFixed(0) },
      ];
    },
  },
  {
    scenario: "scenarios/llama8b_h100_datasets.yaml",
    file: "docs/datasets.svg",
    title: "Public datasets' length shapes on 1 × H100 (Llama-3.1-8B, vLLM, 1 req/s)",
    figures: ["prompt tokens p50", "output tokens p50", "TTFT p50 (s)", "E2E p50 (s)"],
    names: { chat: "sharegpt4_chat", summarization: "arxiv_summarization", code: "azure_code" },
    bars: (variant, { summary: s }) => {
      const m = s.perMetric;
      return [
        { variant, figure: "prompt tokens p50", value: m.INPUT_TOKENS.MEDIAN, label: m.INPUT_TOKENS.MEDIAN.toFixed(0) },
        {
          variant,
          figure: "output tokens p50",
          value: m.OUTPUT_TOKENS.MEDIAN,
          label: m.OUTPUT_TOKENS.MEDIAN.toFixed(0),
        },
        { variant, figure: "TTFT p50 (s)", value: m["TTFT(s)"].MEDIAN, label: ms(m["TTFT(s)"].MEDIAN) },
        {
          variant,
          figure: "E2E p50 (s)",
          value: m["E2E_TIME(s)"].MEDIAN,
          label: `${m["E2E_TIME(s)"].MEDIAN.toFixed(2)} s`,
        },
      ];
    },
  },
  {
    scenario: "scenarios/llama8b_h100_kv_offload.yaml",
    file: "docs/kv-offload.svg",
    title: "KV offload: chat sessions on 4 × H100 with 48k tokens of device KV each (Llama-3.1-8B, vLLM)",
    figures: ["device-cache hit rate", "host-tier hit rate", "TTFT p50 (s)", "TTFT p99 (s)"],
    names: { device_only: "device cache only", host_tier: "+ 64 GB host tier" },
    bars: (variant, { summary: s }) => {
      const host = s.prefixCache?.hostHitTokens !== undefined
        ? s.prefixCache.hostHitTokens / s.prefixCache.promptTokens
        : 0;
      const ttft = s.perMetric["TTFT(s)"];
      return [
        { variant, figure: "device-cache hit rate", value: hitRate(s), label: `${(hitRate(s) * 100).toFixed(0)}%` },
        { variant, figure: "host-tier hit rate", value: host, label: `${(host * 100).toFixed(0)}%` },
        { variant, figure: "TTFT p50 (s)", value: ttft.MEDIAN, label: ms(ttft.MEDIAN) },
        { variant, figure: "TTFT p99 (s)", value: ttft.P99, label: ms(ttft.P99) },
      ];
    },
  },
];

/** The SVG of `f`, from its scenario's runs. */
async function draw(f: Figure, root: URL): Promise<{ svg: string; pass: boolean }> {
  const r = runScenario(loadScenario(new URL(f.scenario, root).pathname));
  const values = [...r.runs].flatMap(([name, out]) => f.bars(f.names[name] ?? name, out));
  const svg = await renderSvg({
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: f.title, fontSize: 13 },
    data: { values },
    facet: { column: { field: "figure", type: "nominal", title: null, sort: f.figures } },
    resolve: { scale: { x: "independent" } },
    spec: {
      width: 150,
      height: 90,
      layer: [
        {
          mark: { type: "bar" },
          encoding: {
            y: { field: "variant", type: "nominal", title: null, sort: null },
            x: { field: "value", type: "quantitative", title: null, axis: { tickCount: 3 } },
            color: { field: "variant", type: "nominal", legend: null, sort: null },
          },
        },
        {
          mark: { type: "text", align: "left", dx: 3, fontSize: 10 },
          encoding: {
            y: { field: "variant", type: "nominal", sort: null },
            x: { field: "value", type: "quantitative" },
            text: { field: "label" },
          },
        },
      ],
    },
  });
  return { svg, pass: r.checks.every((c) => c.pass) };
}

/**
 * `deno task docs:figures` in this process, its lines to `io`.
 *
 * @returns the exit code: 0 written (or help), 2 bad arguments
 */
export async function runFigures(argv: readonly string[], io: TaskOutput = CONSOLE_OUTPUT): Promise<number> {
  const args = readTaskArgs({ task: "docs:figures", usage: USAGE }, argv, io);
  if (typeof args === "number") return args;
  const root = new URL("../", import.meta.url);
  for (const f of FIGURES) {
    const { svg, pass } = await draw(f, root);
    Deno.writeTextFileSync(new URL(f.file, root), svg);
    io.out(`wrote ${f.file} (${f.scenario}: ${pass ? "PASS" : "FAIL"})`);
  }
  return 0;
}

if (import.meta.main) Deno.exitCode = await taskMain("docs:figures", () => runFigures(Deno.args));
