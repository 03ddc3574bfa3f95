/**
 * Prediction intervals: the strata and weights they are made from, the
 * table's and the JSON's interval section on engine runs, and scenario
 * bounds that must hold at a confidence (`ttft.median: "< 2s @ 90%"`).
 * Their coverage on the held-out rows is tested in
 * scenarios/validation_test.ts.
 */
import assert from "node:assert/strict";
import { MIN_STRATUM_SOURCES, predictionBound, predictionInterval } from "../core/metrics/intervals.ts";
import type { Residual } from "../core/metrics/intervals.ts";
import { loadScenario, runScenario } from "../core/scenario/mod.ts";
import { INSTANCE_OK, runCli, writeTemp } from "./_helpers.ts";

const res = (source: string, logRatio: number, over: Partial<Residual> = {}): Residual => ({
  id: `${source}-${logRatio}`,
  source,
  engine: "vllm",
  vendor: "NVIDIA",
  architecture: "dense",
  kind: "TTFT",
  logRatio,
  ...over,
});
const ctx = { engine: "vllm", vendor: "NVIDIA", architecture: "dense" };

Deno.test("an interval takes the narrowest stratum with enough rows from enough sources; each source weighs one", () => {
  // Eight vLLM rows of one source: too few sources for the vLLM stratum, so the next (NVIDIA dense, any engine) sets it.
  const narrow = Array.from({ length: 8 }, (_, i) => res("one", -0.01 * i));
  const wide = Array.from({ length: 8 }, (_, i) => res(`s${i}`, i % 2 ? 0.5 : -0.5, { engine: "sglang" }));
  const i = predictionInterval(1, "TTFT", ctx, 0.8, [...narrow, ...wide])!;
  assert.equal(i.stratum, "NVIDIA · dense · TTFT");
  assert.equal(i.rows, 16);
  // The kind alone, the widest, needs only the rows: the single source's eight.
  assert.equal(predictionInterval(1, "TTFT", ctx, 0.8, narrow)!.stratum, "TTFT");
  // From MIN_STRATUM_SOURCES sources on, the vLLM stratum is used.
  const many = Array.from({ length: MIN_STRATUM_SOURCES }, (_, k) => res(`v${k}`, 0.1 * (k - 4)));
  assert.equal(predictionInterval(1, "TTFT", ctx, 0.8, [...many, ...wide])!.stratum, "vllm · NVIDIA · dense · TTFT");
  // Weights: one source with 90 rows at +1 and nine sources with one row at 0 each. Counted by rows, the 50%
  // interval would sit at +1; by sources, the median source is at 0, so the interval reaches 0.
  const skewed = [
    ...Array.from({ length: 90 }, () => res("big", 1)),
    ...Array.from({ length: 9 }, (_, k) => res(`small${k}`, 0)),
  ];
  const w = predictionInterval(1, "TTFT", ctx, 0.5, skewed)!;
  assert.ok(w.high >= 0.99, `${w.low}-${w.high}`); // simulated / e^0: a measured value as high as the simulated one
  // A measured value is simulated / e^(logRatio): a model that runs slow (positive log ratios) has intervals below.
  const slow = predictionInterval(1, "TTFT", ctx, 0.8, many.map((r) => ({ ...r, logRatio: r.logRatio + 1 })))!;
  assert.ok(slow.high < 1);
  // The row's own source is left out when asked (the coverage check); nothing at all: no interval.
  assert.equal(predictionInterval(1, "TTFT", ctx, 0.8, narrow, "one"), undefined);
  assert.equal(predictionInterval(1, "TTFT", ctx, 0.8, narrow.slice(0, 7)), undefined);
  // A one-sided 90% bound is an end of the 80% interval.
  const i80 = predictionInterval(1, "TTFT", ctx, 0.8, [...many, ...wide])!;
  assert.equal(predictionBound(1, "TTFT", ctx, 0.9, "upper", [...many, ...wide]), i80.high);
  assert.equal(predictionBound(1, "TTFT", ctx, 0.9, "lower", [...many, ...wide]), i80.low);
});

const INSTANCE = INSTANCE_OK; // one H100
const COMMON = (engine: string) =>
  `model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
load_gen: {num_requests: 40, num_input_tokens: 512, num_output_tokens: 64, request_rate: 4.0}
serving_config: {max_concurrency: 64${engine}}
`;

Deno.test("an engine run's table and JSON carry the 80% intervals of its headline figures; a generic run none", async () => {
  const dir = writeTemp({
    "i.yaml": INSTANCE,
    "e.yaml": COMMON(", engine: vllm, engine_version: 0.10.0"),
    "g.yaml": COMMON(""),
  });
  const engine = await runCli(["--instance_config_path", `${dir}i.yaml`, "--common_config_path", `${dir}e.yaml`]);
  assert.equal(engine.code, 0, engine.stderr);
  assert.match(engine.stdout, /\n======== Prediction Intervals, 80% \(ext\) ========\n/);
  assert.match(engine.stdout, /\nTTFT\(s\)\.MEDIAN +[\d.]+ +[\d.]+ +[\d.]+ +\S.* \(\d+ rows\)\n/);
  const json = await runCli([
    "--instance_config_path",
    `${dir}i.yaml`,
    "--common_config_path",
    `${dir}e.yaml`,
    "--format",
    "json",
  ]);
  const doc = JSON.parse(json.stdout);
  const ttft = doc.prediction_intervals.metrics["TTFT(s).MEDIAN"];
  assert.equal(doc.prediction_intervals.confidence, 0.8);
  assert.ok(ttft.low < ttft.high && ttft.simulated > 0, JSON.stringify(ttft));
  const generic = await runCli(["--instance_config_path", `${dir}i.yaml`, "--common_config_path", `${dir}g.yaml`]);
  assert.doesNotMatch(generic.stdout, /Prediction Intervals/);
});

Deno.test("a scenario bound at a confidence judges the end of the interval it faces, and says so", () => {
  const probe = writeTemp({ "i.yaml": INSTANCE, "c.yaml": COMMON(", engine: vllm, engine_version: 0.10.0") });
  const s = (bound: string, common = "c.yaml") =>
    `instance_config: i.yaml\ncommon_config: ${common}\nexpect:\n  ttft.median: "${bound}"\n`;
  Deno.writeTextFileSync(`${probe}s.yaml`, s("< 100s @ 90%"));
  const first = runScenario(loadScenario(`${probe}s.yaml`)).checks[0];
  assert.ok(first.pass, first.message);
  const upper = first.actual;
  // The simulated value lies below the 90% upper end.
  const simulated = Number(/simulated ([\d.]+)/.exec(first.message)![1]);
  assert.ok(simulated < upper, `${simulated} < ${upper}`);
  // A bound between the two fails on the interval, though the simulated value meets it.
  const between = ((simulated + upper) / 2).toFixed(4);
  Deno.writeTextFileSync(`${probe}s.yaml`, s(`< ${between}s @ 90%`));
  const failed = runScenario(loadScenario(`${probe}s.yaml`)).checks[0];
  assert.equal(failed.pass, false);
  assert.match(
    failed.message,
    new RegExp(
      `s\\.yaml:4:\\d+: expect\\.ttft\\.median: expected TTFT_FROM_ARRIVAL\\(s\\)\\.MEDIAN < ${between}s @ 90%, got [\\d.]+s, the upper end of its 90% interval \\(simulated [\\d.]+s\\)`,
    ),
  );
  // Without the confidence the same bound passes.
  Deno.writeTextFileSync(`${probe}s.yaml`, s(`< ${between}s`));
  assert.ok(runScenario(loadScenario(`${probe}s.yaml`)).checks[0].pass);
  // A run without an engine has no interval: the bound fails and says why.
  Deno.writeTextFileSync(`${probe}g.yaml`, COMMON(""));
  Deno.writeTextFileSync(`${probe}s.yaml`, s("< 100s @ 90%", "g.yaml"));
  const generic = runScenario(loadScenario(`${probe}s.yaml`)).checks[0];
  assert.equal(generic.pass, false);
  assert.match(generic.message, /got no 90% bound: the run names no engine \(simulated [\d.]+s\)/);
});

Deno.test("a capacity search at a confidence finds a lower rate: the interval's upper end meets the SLO later", () => {
  const dir = writeTemp({
    "i.yaml": INSTANCE,
    "c.yaml": COMMON(", engine: vllm, engine_version: 0.10.0").replace("num_requests: 40", "num_requests: 400"),
  });
  const capacity = (bound: string) => {
    Deno.writeTextFileSync(
      `${dir}s.yaml`,
      `instance_config: i.yaml\ncommon_config: c.yaml\nsweep:\n  load_gen.request_rate: [2, 4, 8, 16, 32, 64]\nmax_rate_meeting:\n  ttft.p99: "${bound}"\n`,
    );
    return runScenario(loadScenario(`${dir}s.yaml`)).capacity!;
  };
  // A bound that the interval's upper end meets below the deployment's sustainable rate (where both searches stop).
  const plain = capacity("<= 0.07");
  const sure = capacity("<= 0.07 @ 90%");
  assert.ok(sure.value! < plain.value!, `${sure.value} at 90% vs ${plain.value}`);
  assert.ok(sure.value! >= 8, `${sure.value}`);
});
