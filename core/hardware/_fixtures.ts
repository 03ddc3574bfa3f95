/**
 * Test fixtures: a catalog model's cost model on one catalog device.
 *
 * @module
 */
import { MODEL_CATALOG } from "../model/catalog.ts";
import { modelSpecFromHf } from "../model/model_spec.ts";
import { DEVICE_CATALOG } from "./devices.ts";
import { tensorParallel } from "./layout.ts";
import { linearQuant } from "./quant.ts";
import { RooflineCostModel } from "./roofline.ts";
import type { CostModelInput } from "./roofline.ts";

/**
 * Model `id` (from the catalog) on `tp` × `device` with weights `quant`
 * (BF16 LM head and KV cache, 16-token blocks, no host copy), `extra`
 * set beside.
 */
export function catalogCost(
  id: string,
  device = "H100_SXM_80G",
  { tp = 1, quant = "DISABLED", ...extra }: Partial<CostModelInput> & { tp?: number; quant?: string } = {},
): RooflineCostModel {
  const d = DEVICE_CATALOG[device];
  return new RooflineCostModel({
    model: modelSpecFromHf(id, MODEL_CATALOG[id], (f) => {
      throw new Error(f);
    }),
    device: d,
    layout: tensorParallel(tp),
    linear: linearQuant(quant, 32, d),
    lmheadWeightBytes: 2,
    kvBytes: 2,
    host2deviceBandwidth: 0,
    blockSize: 16,
    ...extra,
  });
}
