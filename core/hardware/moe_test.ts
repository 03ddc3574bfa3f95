import assert from "node:assert/strict";
import { MODEL_CATALOG } from "../model/catalog.ts";
import { modelSpecFromHf } from "../model/model_spec.ts";
import { decodeBatch } from "./batch.ts";
import type { StepBreakdown } from "./batch.ts";
import { DEVICE_CATALOG } from "./devices.ts";
import { expectedTouched } from "./ffn.ts";
import type { EngineLayout } from "./layout.ts";
import { linearQuant } from "./quant.ts";
import { RooflineCostModel } from "./roofline.ts";

const spec = (id: string) => modelSpecFromHf(id, MODEL_CATALOG[id], (f) => assert.fail(f));

function cost(id: string, device: string, layout: Partial<EngineLayout>, quant = "FP8") {
  const d = DEVICE_CATALOG[device];
  const tp = layout.tp ?? 1;
  const full: EngineLayout = {
    tp,
    dp: 1,
    dcp: 1,
    mlpTp: tp,
    mlpDp: layout.dp ?? 1,
    lmheadTp: tp,
    lmheadDp: layout.dp ?? 1,
    ep: 1,
    moeTp: 1,
    moeDp: 1,
    ...layout,
  };
  return new RooflineCostModel({
    model: spec(id),
    device: d,
    layout: full,
    linear: linearQuant(quant, 32, d),
    lmheadWeightBytes: 2,
    kvBytes: 2,
    host2deviceBandwidth: 0,
    blockSize: 64,
  });
}

const decode = decodeBatch;

Deno.test("expectedTouched() counts distinct experts under uniform top-k routing", () => {
  assert.equal(expectedTouched(256, 8, 1), 8);
  assert.ok(Math.abs(expectedTouched(256, 8, 2) - (256 - 256 * (248 / 256) ** 2)) < 1e-9);
  assert.ok(expectedTouched(256, 8, 1000) > 255.99);
  assert.ok(Math.abs(expectedTouched(8, 2, 4) - 8 * (1 - 0.75 ** 4)) < 1e-12);
});

Deno.test("MLA stores 576 values per token per layer on every TP rank, split only by DCP", () => {
  const tp8 = cost("deepseek-ai/DeepSeek-V3", "H800_SXM_80G", { tp: 8, ep: 8, moeTp: 1, moeDp: 1 });
  assert.equal(tp8.shapes.kvBytesPerTokenPerLayer, 576 * 2);
  const dcp2 = cost("deepseek-ai/DeepSeek-V3", "H800_SXM_80G", { tp: 8, dcp: 2, ep: 8, moeTp: 1, moeDp: 1 });
  assert.equal(dcp2.shapes.kvBytesPerTokenPerLayer, 576);
});

Deno.test("MoE weights per device: experts split by EP, dense-first layers and shared experts kept", () => {
  const ep8 = cost("mistralai/Mixtral-8x7B-Instruct-v0.1", "H100_SXM_80G", { tp: 8, ep: 8, moeTp: 1 }, "DISABLED");
  // One expert per device: 3 × 4096 × 14336 BF16 weights, plus the BF16 router.
  assert.equal(ep8.shapes.moeFfnWeightBytes, 3 * 4096 * 14336 * 2 + 4096 * 8 * 2);
  const ds = cost("deepseek-ai/DeepSeek-V3", "H800_SXM_80G", { tp: 1, dp: 32, ep: 32, moeTp: 1, moeDp: 1 });
  // 8 routed experts (FP8) and one shared expert (FP8) per MoE layer, router in BF16.
  assert.equal(ds.shapes.moeFfnWeightBytes, 8 * 3 * 7168 * 2048 + 3 * 7168 * 2048 + 7168 * 256 * 2);
  assert.equal(ds.shapes.denseFfnWeightBytes, 3 * 7168 * 18432);
});

Deno.test("MoE decode reads more expert weights as the batch touches more experts", () => {
  const c = cost("Qwen/Qwen3-30B-A3B", "H100_SXM_80G", { tp: 1 }, "DISABLED");
  const one = {} as StepBreakdown;
  const many = {} as StepBreakdown;
  c.stepTime(decode(1, 1000), one);
  c.stepTime(decode(64, 1000), many);
  // Batch 1 touches 8 of 128 experts; batch 64 nearly all: the linear time grows several-fold.
  assert.ok(many.linear / one.linear > 4, `${many.linear / one.linear}`);
});

Deno.test("EP all-to-all across nodes costs more than inside a node", () => {
  const inside = {} as StepBreakdown;
  const across = {} as StepBreakdown;
  cost("deepseek-ai/DeepSeek-V3", "H800_SXM_80G", { tp: 1, dp: 8, ep: 8, moeDp: 1 }).stepTime(
    decode(128, 2000),
    inside,
  );
  cost("deepseek-ai/DeepSeek-V3", "H800_SXM_80G", { tp: 1, dp: 64, ep: 64, moeDp: 1 }).stepTime(
    decode(128, 2000),
    across,
  );
  assert.ok(across.communication > 2 * inside.communication);
});

Deno.test("DeepSeek-V3 decode on 9 × 8 H100 (EP72), 256 sequences per GPU at 2K context: within 30% of SGLang's 22,282 tok/s per node", () => {
  const c = cost("deepseek-ai/DeepSeek-V3", "H100_SXM_80G", { tp: 1, dp: 72, ep: 72, moeDp: 1 });
  const perNode = (8 * 256) / c.stepTime(decode(256, 2048));
  assert.ok(Math.abs(perNode / 22282 - 1) < 0.3, `${perNode.toFixed(0)} tok/s per node`);
});

Deno.test("MTP drafting costs a draft-module pass per draft and verifies 1 + drafts tokens per sequence", () => {
  const d = DEVICE_CATALOG.H800_SXM_80G;
  const mk = (drafts: number) =>
    new RooflineCostModel({
      model: spec("deepseek-ai/DeepSeek-V3"),
      device: d,
      layout: { tp: 1, dp: 16, dcp: 1, mlpTp: 1, mlpDp: 16, lmheadTp: 1, lmheadDp: 16, ep: 16, moeTp: 1, moeDp: 1 },
      linear: linearQuant("FP8", 32, d),
      lmheadWeightBytes: 2,
      kvBytes: 2,
      host2deviceBandwidth: 0,
      blockSize: 64,
      draftTokens: drafts,
    });
  const plain = mk(0);
  const mtp = mk(1);
  const b = decode(64, 4000);
  const verify = { ...b, tokens: 128, decodeTokens: 128 };
  assert.ok(mtp.stepTime(verify) > plain.stepTime(b));
  assert.ok(mtp.stepTime(verify) < 2 * plain.stepTime(b), "far cheaper than two plain steps");
  assert.ok(mtp.weightBytesPerDevice > plain.weightBytesPerDevice);
});
