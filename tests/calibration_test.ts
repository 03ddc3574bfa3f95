/**
 * Sanity of the hardware model against measurements in
 * shared/reference/calibration.md, through full simulations (the issue's
 * acceptance bounds: within 30%).
 */
import assert from "node:assert/strict";
import { runFiles } from "../core/assembly/run.ts";
import { memoryFs } from "./_helpers.ts";

const a100 = `instance_groups:
  - {num_instances: 1, num_devices_per_instance: 1, device_type: A100_SXM_80G, pd_role: both}
`;
const llama2 = (input: number, output: number) =>
  `model_config:
  name: meta-llama/Llama-2-7b-hf
  quantize_linear_action: DISABLED
load_gen: {num_requests: 1, num_input_tokens: ${input}, num_output_tokens: ${output}, request_rate: 1.0}
serving_config: {block_size: 16, max_tokens_budget: 8192}
`;

function within(actual: number, measured: number, tolerance: number, what: string) {
  const err = actual / measured - 1;
  assert.ok(
    Math.abs(err) <= tolerance,
    `${what}: simulated ${actual.toFixed(2)} vs measured ${measured} (${(err * 100).toFixed(1)}%)`,
  );
}

Deno.test("Llama-2-7B FP16 on one A100: TTFT of a 2,048-token prompt within 30% of 133 ms (TensorRT-LLM)", () => {
  const out = runFiles(["i.yaml"], "c.yaml", { fs: memoryFs({ "i.yaml": a100, "c.yaml": llama2(2048, 2) }) });
  within(out.summary.perMetric["TTFT(s)"].MEDIAN * 1000, 133, 0.3, "TTFT ms");
});

Deno.test("Llama-2-7B FP16 on one A100: batch-1 decode within 30% of 9.53 ms per token (gpt-fast, 104.9 tok/s)", () => {
  const out = runFiles(["i.yaml"], "c.yaml", { fs: memoryFs({ "i.yaml": a100, "c.yaml": llama2(5, 200) }) });
  within(out.summary.perMetric["TPOT(s)"].MEDIAN * 1000, 1000 / 104.9, 0.3, "TPOT ms");
});

Deno.test("Llama-2-70B FP16 on 8 × A100 (TP8): batch-1 decode within 30% of 16.0 ms per token (gpt-fast, 62.5 tok/s)", () => {
  const tp8 = `instance_groups:
  - num_instances: 1
    num_devices_per_instance: 8
    device_type: A100_SXM_80G
    pd_role: both
    parallel_config: {tp_size: 8}
`;
  const c = llama2(5, 200).replace("Llama-2-7b-hf", "Llama-2-70b-hf");
  const out = runFiles(["i.yaml"], "c.yaml", { fs: memoryFs({ "i.yaml": tp8, "c.yaml": c }) });
  within(out.summary.perMetric["TPOT(s)"].MEDIAN * 1000, 1000 / 62.5, 0.3, "TPOT ms");
});
