/**
 * Dataset shapes (core/workload/datasets.ts) against the figures they were
 * fitted to. The band, fixed before looking at the draws: the median and the
 * P90 of 200,000 draws within 3% of the published ones (draws are rounded to
 * whole tokens and cut at the source's filter, which moves them a little).
 */
import assert from "node:assert/strict";
import { DATASET_SHAPES, datasetLengths } from "../core/workload/datasets.ts";
import { drawLength } from "../core/workload/lengths.ts";
import { Rng } from "../core/workload/rng.ts";
import { DATASET_NAMES } from "../core/config/schema.ts";
import { runFiles } from "../core/assembly/run.ts";
import { memoryFs } from "./_helpers.ts";

/** The q-quantile of sorted values (nearest rank). */
const quantile = (sorted: Float64Array, q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

Deno.test("every dataset shape draws its published median and P90 within 3%, each with its source", () => {
  assert.deepEqual(DATASET_SHAPES.map((d) => d.name), [...DATASET_NAMES]);
  for (const shape of DATASET_SHAPES) {
    assert.match(shape.source, /\(.*(20\d\d)\)/, `${shape.name}: a dated source`);
    const d = datasetLengths(shape.name)!;
    for (const column of ["input", "output"] as const) {
      const rng = new Rng(7, "lengths");
      const draws = new Float64Array(200_000);
      for (let i = 0; i < draws.length; i++) draws[i] = drawLength(d[column], rng);
      draws.sort();
      const p = shape.published[column];
      for (const [name, q, want] of [["median", 0.5, p.median], ["P90", 0.9, p.p90]] as const) {
        const got = quantile(draws, q);
        assert.ok(Math.abs(got / want - 1) <= 0.03, `${shape.name} ${column} ${name}: ${got} against ${want}`);
      }
      assert.ok(draws[draws.length - 1] <= shape.max[column], "cut at the source's filter");
    }
  }
});

Deno.test("load_gen.dataset runs a named shape, described, and refuses lengths beside it", () => {
  const inst = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, device_type: H100_SXM_80G, " +
    "pd_role: both}]";
  const common = (extra: string) =>
    `model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
load_gen: {load_gen_type: synthetic, num_requests: 300, arrival: {request_rate: 2}, dataset: arxiv_summarization${extra}}
serving_config: {engine: vllm}
`;
  const out = runFiles(["i.yaml"], "c.yaml", { fs: memoryFs({ "i.yaml": inst, "c.yaml": common("") }) });
  const median = out.summary.perMetric.INPUT_TOKENS.MEDIAN;
  assert.ok(Math.abs(median / 7059 - 1) < 0.15, `300 prompts' median ${median} near the published 7059`);
  assert.match(out.summary.perMetric.INPUT_TOKENS.MAX.toString(), /^\d+$/);
  assert.throws(
    () =>
      runFiles(["i.yaml"], "c.yaml", {
        fs: memoryFs({ "i.yaml": inst, "c.yaml": common(", input_tokens: {dist: fixed, value: 10}") }),
      }),
    /c\.yaml:\d+:\d+: load_gen\.input_tokens: give either dataset \(arxiv_summarization\) or input_tokens and output_tokens$/,
  );
  assert.throws(
    () =>
      runFiles(["i.yaml"], "c.yaml", {
        fs: memoryFs({ "i.yaml": inst, "c.yaml": common("").replace("arxiv_summarization", "the_pile") }),
      }),
    /load_gen\.dataset: expected one of sharegpt4_chat, arxiv_summarization, azure_code, got "the_pile"/,
  );
});
