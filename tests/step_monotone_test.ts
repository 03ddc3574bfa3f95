/**
 * A step never gets faster when a request joins it or a context grows: the
 * step time of every catalog model on every catalog chip, under every
 * engine (each engine's kernel tables and host costs) and the generic path,
 * swept over decode batches, contexts and prefill lengths; and the probe
 * of issue 24 (DeepSeek-R1 FP8 on 8 × H200, whose TPOT once fell from 37 ms
 * at concurrency 8 to 21 ms at 12) through the whole simulator.
 */
import assert from "node:assert/strict";
import { ENGINES } from "../core/config/engine_profiles.ts";
import { InputError } from "../core/config/errors.ts";
import { DEVICE_CATALOG } from "../core/hardware/devices.ts";
import { MODEL_CATALOG } from "../core/model/catalog.ts";
import { decodeBatch, prefillBatch } from "../core/hardware/batch.ts";
import type { RooflineCostModel } from "../core/hardware/roofline.ts";
import { runSources } from "../core/assembly/run.ts";
import { YamlSource } from "../core/config/source.ts";
import { planOne } from "./_helpers.ts";

/** The cost model of `model` on `chip` under `engine` at the first layout and weight format that fits, if any. */
function costOf(model: string, chip: string, engine: string | undefined): RooflineCostModel | undefined {
  for (const tp of [1, 2, 4, 8]) {
    for (const q of ["DISABLED", "FP8", "W8A8_DYNAMIC"]) {
      try {
        return planOne(chip, tp, model, q, `max_concurrency: 8, block_size: 16${engine ? `, engine: ${engine}` : ""}`)
          .groups[0].cost;
      } catch (e) {
        if (!(e instanceof InputError)) throw e;
      }
    }
  }
  return undefined;
}

const decode = decodeBatch;
const prefill = prefillBatch;

const BATCHES = [...Array.from({ length: 64 }, (_, i) => i + 1), 80, 96, 128, 160, 192, 256, 384, 512];
const CONTEXTS = [64, 128, 256, 512, 1024, 2048, 3000, 4096, 8192, 16384, 32768];
const PREFILLS = [1, 8, 16, 32, 64, 100, 128, 256, 512, 1000, 1024, 2048, 4096, 8192, 16384];

/** The first place `times` (of the points named by `at`) decreases, or undefined. */
function firstDrop(times: readonly number[], at: (i: number) => string): string | undefined {
  for (let i = 1; i < times.length; i++) {
    // Equal within rounding is not a drop.
    if (times[i] < times[i - 1] * (1 - 1e-9)) {
      return `${at(i - 1)}: ${(times[i - 1] * 1e3).toFixed(4)} ms -> ${at(i)}: ${(times[i] * 1e3).toFixed(4)} ms`;
    }
  }
  return undefined;
}

Deno.test("step time is monotone in batch, context and prefill length for every engine × chip × catalog model", () => {
  const drops: string[] = [];
  let swept = 0;
  for (const model of Object.keys(MODEL_CATALOG)) {
    for (const chip of Object.keys(DEVICE_CATALOG)) {
      for (const engine of [undefined, ...ENGINES]) {
        const cost = costOf(model, chip, engine);
        if (!cost) continue;
        swept++;
        const what = `${model} on ${chip} (${engine ?? "generic"})`;
        for (const ctx of CONTEXTS) {
          const d = firstDrop(BATCHES.map((b) => cost.stepTime(decode(b, ctx))), (i) => `batch ${BATCHES[i]}`);
          if (d) drops.push(`${what}, decode at context ${ctx}: ${d}`);
        }
        for (const b of [1, 8, 64, 256]) {
          const d = firstDrop(CONTEXTS.map((c) => cost.stepTime(decode(b, c))), (i) => `context ${CONTEXTS[i]}`);
          if (d) drops.push(`${what}, decode batch ${b}: ${d}`);
        }
        const p = firstDrop(PREFILLS.map((t) => cost.stepTime(prefill(t))), (i) => `${PREFILLS[i]} tokens`);
        if (p) drops.push(`${what}, prefill: ${p}`);
      }
    }
  }
  // Every model runs somewhere under every engine: the sweep is not vacuous.
  assert.ok(swept >= Object.keys(MODEL_CATALOG).length * (ENGINES.length + 1), `${swept} deployments swept`);
  assert.deepEqual(drops.slice(0, 20), [], `${drops.length} drops`);
});

Deno.test("the DeepSeek-R1 probe: DeepSeek-R1 FP8 on 8 × H200, 922 in / 922 out, TPOT never falls as concurrency rises", () => {
  for (const engine of ["sglang", "vllm", "trtllm", undefined]) {
    const tpot = [1, 2, 4, 8, 12, 16, 32].map((c) => {
      const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 8, device_type: H200_SXM_141G, " +
        "pd_role: both, parallel_config: {tp_size: 8, moe_tp_size: 8}}]";
      const com = `model_config: {name: deepseek-ai/DeepSeek-R1, quantize_linear_action: FP8}
load_gen: {load_gen_type: fixed_length, num_requests: ${
        c * 2
      }, num_input_tokens: 922, num_output_tokens: 922, request_rate: .inf}
serving_config: {max_concurrency: ${c}${engine ? `, engine: ${engine}` : ""}}`;
      const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", com));
      return out.summary.perMetric["TPOT(s)"].MEDIAN;
    });
    for (let k = 1; k < tpot.length; k++) {
      assert.ok(tpot[k] >= tpot[k - 1] * (1 - 1e-9), `${engine ?? "generic"}: TPOT ${tpot.map((t) => t * 1e3)}`);
    }
  }
});
