/**
 * Speculative decoding besides MTP (`serving_config.speculative_config`):
 * EAGLE's draft head and n-gram lookup, with per-position acceptance rates.
 * The token-per-step arithmetic is checked by hand, the verify and draft
 * costs against the cost model, and the config's mistakes as located errors.
 */
import assert from "node:assert/strict";
import { simulate } from "../core/engine/simulator.ts";
import { expectedDrafts } from "../core/engine/step_accounting.ts";
import { input, linearCost } from "../core/engine/_fixtures.ts";
import type { RooflineCostModel } from "../core/hardware/roofline.ts";
import { catalogCost } from "../core/hardware/_fixtures.ts";
import { decodeBatch } from "../core/hardware/batch.ts";
import { runFiles } from "../core/assembly/run.ts";
import { memoryFs } from "./_helpers.ts";
import { launchSettings } from "../core/launch/settings.ts";
import { sglangCommands, vllmCommands } from "../core/launch/commands.ts";
import type { Command } from "../core/launch/commands.ts";

Deno.test("expected accepted drafts: the running products of the per-position rates, MTP's geometric sum", () => {
  // Draft 1 accepted with 0.75; draft 2 with 0.75 × 0.5 (it needs draft 1).
  assert.equal(expectedDrafts(0, [0.75, 0.5], 2), 0.75 + 0.375);
  assert.equal(expectedDrafts(0, [0.75, 0.5], 1), 0.75);
  assert.equal(expectedDrafts(0, [0.75, 0.5, 0], 3), 1.125, "a draft after a rate of 0 is never accepted");
  // One rate a at every position: a + a² + a³.
  assert.ok(Math.abs(expectedDrafts(0.85, undefined, 3) - (0.85 + 0.85 ** 2 + 0.85 ** 3)) < 1e-12);
  assert.equal(expectedDrafts(1, undefined, 4), 4);
});

Deno.test("a request's decode steps with 2 drafts accepted at 0.75 and then 0.5, counted by hand", () => {
  // 100 prompt tokens, 221 output tokens. The prefill step gives token 1. Each decode step verifies the last token and
  // 2 drafts, crediting 0.75 + 0.75 × 0.5 = 1.125 drafts: after s steps floor(1.125 s) drafts have joined, so
  // 1 + s + floor(1.125 s) tokens. After 103 steps: 1 + 103 + 115 = 219 (credit left 0.875). Step 104 may verify only
  // 221 − 219 − 1 = 1 draft: credit 0.875 + 0.75 = 1.625, one more draft, and the request has its 221 tokens.
  const steps: number[] = [];
  const result = simulate(
    input({ inputTokens: 100, outputTokens: 221 }, {
      cost: linearCost(1),
      draftTokens: 2,
      draftAcceptance: 0,
      draftAcceptances: [0.75, 0.5],
    }),
    { onStep: (s) => steps.push(s.shape.decodeTokens) },
  );
  assert.equal(steps.length, 1 + 104, "one prefill step and 104 decode steps");
  assert.equal(steps[0], 0, "the prefill step decodes nothing");
  assert.deepEqual(steps.slice(1, 104), Array(103).fill(3), "the last token and 2 drafts");
  assert.equal(steps[104], 2, "the last token and 1 draft");
  // Tokens per decode step: 220 after the first / 104 steps.
  assert.equal(result.requests.output[0], 221);
  assert.equal(result.requests.finish[0], 105 * 1000, "105 steps of 1 ms");
});

/** Llama-3.1-8B on one H100 with `draftTokens` drafts from `drafter`. */
function cost(draftTokens: number, drafter?: "module" | "none"): RooflineCostModel {
  return catalogCost("meta-llama/Llama-3.1-8B-Instruct", "H100_SXM_80G", {
    draftTokens,
    ...(drafter ? { drafter } : {}),
  });
}

Deno.test("n-gram drafts cost only their verification; EAGLE's draft head adds a layer and the LM head per draft", () => {
  // 32 sequences verifying 1 + 3 tokens each at 2,000 tokens of context.
  const verify = { ...decodeBatch(32, 2000), tokens: 128, decodeTokens: 128 };
  const plain = cost(0).stepTime(verify);
  const ngram = cost(3, "none");
  const eagle = cost(3, "module");
  assert.equal(ngram.stepTime(verify), plain, "n-gram: the verify step alone");
  assert.equal(ngram.weightBytesPerDevice, cost(0).weightBytesPerDevice);
  const oneDraft = cost(1, "module").stepTime(verify) - plain;
  assert.ok(oneDraft > 0);
  // Three drafts cost three times one (the draft head runs once per draft on the 32 sequences).
  assert.ok(Math.abs(eagle.stepTime(verify) - plain - 3 * oneDraft) < 1e-12);
  // Its weights: one decoder layer and the 2·hidden × hidden projection (BF16).
  const h = 4096;
  const layer = (cost(0).weightBytesPerDevice - 2 * 128256 * h * 2 - h * 2) / 32;
  assert.ok(Math.abs(eagle.weightBytesPerDevice - cost(0).weightBytesPerDevice - layer - 2 * h * h * 2) < 1e6);
});

const INSTANCES = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, device_type: H100_SXM_80G, " +
  "pd_role: both}]";
const common = (spec: string, mtp = 0) =>
  `model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED, num_mtp_tokens: ${mtp}}
load_gen: {load_gen_type: fixed_length, num_requests: 200, num_input_tokens: 512, num_output_tokens: 256, request_rate: 4}
serving_config:
  engine: vllm
  speculative_config: ${spec}
`;

Deno.test("EAGLE and n-gram runs: TPOT falls with the tokens each step lands, n-gram's more (no draft model to run)", () => {
  const run = (spec?: string) =>
    runFiles(["i.yaml"], "c.yaml", {
      fs: memoryFs({
        "i.yaml": INSTANCES,
        "c.yaml": spec ? common(spec) : common("null").replace("  speculative_config: null\n", ""),
      }),
    });
  const tpot = (o: ReturnType<typeof run>) => o.summary.perMetric["TPOT(s)"].MEDIAN;
  const base = tpot(run());
  const eagle = tpot(run("{method: eagle, num_speculative_tokens: 3, acceptance_rates: [0.8, 0.7, 0.6]}"));
  const ngram = tpot(run("{method: ngram, num_speculative_tokens: 3, acceptance_rates: [0.8, 0.7, 0.6]}"));
  // 1 + 0.8 + 0.56 + 0.336 = 2.696 tokens per decode step; a step verifying 4 tokens a sequence costs little more than
  // one of 1 at these batch sizes (the weights' read dominates), so TPOT falls to about 1 / 2.696 of itself, less the
  // draft head's 3 layers and LM heads for EAGLE.
  assert.ok(ngram < 0.45 * base, `n-gram TPOT ${ngram} against ${base}`);
  assert.ok(eagle < 0.6 * base && eagle > ngram, `EAGLE TPOT ${eagle} against ${base} (n-gram ${ngram})`);
});

Deno.test("speculative_config's mistakes are located errors", () => {
  const fail = (c: string) => {
    const fs = memoryFs({ "i.yaml": INSTANCES, "c.yaml": c });
    try {
      runFiles(["i.yaml"], "c.yaml", { fs });
    } catch (e) {
      return (e as Error).message;
    }
    return "no error";
  };
  assert.match(
    fail(common("{method: eagle, num_speculative_tokens: 3, acceptance_rates: [0.8, 0.7]}")),
    /^c\.yaml:\d+:\d+: serving_config\.speculative_config\.acceptance_rates: expected one rate per draft token \(3\), got 2$/,
  );
  assert.match(
    fail(common("{method: ngram, num_speculative_tokens: 1, acceptance_rates: [0.5]}", 2)),
    /serving_config\.speculative_config: speculate one way: model_config\.num_mtp_tokens is 2/,
  );
  assert.match(
    fail(common("{method: medusa, num_speculative_tokens: 1, acceptance_rates: [0.5]}")),
    /serving_config\.speculative_config\.method: expected one of eagle, ngram, got "medusa"/,
  );
  assert.match(
    fail(common("{method: ngram, num_speculative_tokens: 1, acceptance_rates: [1.5]}")),
    /speculative_config\.acceptance_rates\[0\]: expected a number in \[0, 1\], got 1\.5$/,
  );
});

Deno.test("without acceptance_rates: the published rates for the method and model, the source said", () => {
  const run = (model: string, spec: string) =>
    runFiles(["i.yaml"], "c.yaml", {
      fs: memoryFs({
        "i.yaml": INSTANCES,
        "c.yaml": common(spec).replace("meta-llama/Llama-3.1-8B-Instruct", model).replace(
          "num_requests: 200",
          "num_requests: 5",
        ),
      }),
    });
  const llama2 = run("meta-llama/Llama-2-7b-chat-hf", "{method: eagle, num_speculative_tokens: 3}");
  assert.deepEqual(llama2.assembled.input.engines[0].draftAcceptances, [0.76, 0.69, 0.67]);
  assert.ok(
    llama2.assembled.notices.some((n) =>
      /eagle acceptance per draft position 0\.76, 0\.69, 0\.67: .*Table 2.*LLaMA2-Chat 7B/.test(n)
    ),
  );
  // Any other model: the median of the paper's six models per position.
  const llama3 = run("meta-llama/Llama-3.1-8B-Instruct", "{method: eagle, num_speculative_tokens: 2}");
  assert.deepEqual(llama3.assembled.input.engines[0].draftAcceptances, [0.765, 0.69]);
  const ngram = run("meta-llama/Llama-3.1-8B-Instruct", "{method: ngram, num_speculative_tokens: 5}");
  assert.deepEqual(ngram.assembled.input.engines[0].draftAcceptances, [0.69, 0.826, 0.877, 0.9, 0.933]);
  assert.throws(
    () => run("meta-llama/Llama-3.1-8B-Instruct", "{method: ngram, num_speculative_tokens: 6}"),
    /speculative_config\.num_speculative_tokens: published ngram rates cover 5 draft tokens .*give acceptance_rates for 6$/,
  );
});

/** Aggregated: no disaggregated servers to pair. */
const NO_PD = () => ({ count: 0, urls: [] });

Deno.test("launch commands carry EAGLE and n-gram speculation (vLLM, SGLang) or say they do not", () => {
  const assembled = (spec: string) =>
    runFiles(["i.yaml"], "c.yaml", {
      fs: memoryFs({ "i.yaml": INSTANCES, "c.yaml": common(spec).replace("num_requests: 200", "num_requests: 2") }),
    }).assembled;
  const eagle = launchSettings(
    assembled("{method: eagle, num_speculative_tokens: 3, draft_model: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B}"),
  );
  const line = (c: Command) => c.flags.map((f) => `${f.name} ${f.value ?? ""}`).join(" ");
  const vllm = vllmCommands(eagle, ["both"])[0];
  assert.ok(
    line(vllm).includes(
      `--speculative-config {"method":"eagle","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B","num_speculative_tokens":3}`,
    ),
  );
  const sglang = line(sglangCommands(eagle, ["both"], NO_PD)[0]);
  assert.match(
    sglang,
    /--speculative-algorithm EAGLE --speculative-draft-model-path yuhuili\/EAGLE3-LLaMA3\.1-Instruct-8B --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4/,
  );
  const ngram = launchSettings(assembled("{method: ngram, num_speculative_tokens: 4}"));
  assert.ok(line(vllmCommands(ngram, ["both"])[0]).includes(`"method":"ngram","num_speculative_tokens":4`));
  assert.ok(sglangCommands(ngram, ["both"], NO_PD)[0].notes.some((n) => /n-gram speculation was simulated/.test(n)));
  const anonymous = launchSettings(assembled("{method: eagle, num_speculative_tokens: 2}"));
  assert.ok(vllmCommands(anonymous, ["both"])[0].notes.some((n) => /name its draft model/.test(n)));
});
