import { runFiles } from "../core/run.ts";
const files: Record<string, string> = {};
const fs = {
  readText: (p: string) => {
    if (!(p in files)) throw new Deno.errors.NotFound(p);
    return files[p];
  },
  isDirectory: () => false,
};
function run(inst: string, common: string) {
  files["i"] = inst;
  files["c"] = common;
  return runFiles(["i"], "c", { fs }).summary;
}
const inst = (dev: string, tp: number) =>
  `instance_groups:\n  - {num_instances: 1, num_devices_per_instance: ${tp}, device_type: ${dev}, pd_role: both}\n`;
const com = (model: string, q: string, lg: string, sc = "", kvq = "DISABLED") =>
  `model_config: {name: ${model}, quantize_linear_action: ${q}, quantize_attention_action: ${kvq}}\nload_gen: ${lg}\nserving_config: {block_size: 16, max_tokens_budget: 8192${sc}}\n`;
const rows: [string, number, number][] = [];
const L2 = "meta-llama/Llama-2-7b-hf", L70 = "meta-llama/Llama-2-70b-hf";
for (
  const [m, tp, q, meas] of [
    [L2, 1, "DISABLED", 104.9],
    [L2, 1, "W8A16_STATIC", 155.6],
    [L2, 2, "DISABLED", 168.8],
    [L2, 4, "DISABLED", 254],
    [L2, 8, "DISABLED", 328.4],
    [L70, 2, "DISABLED", 21.3],
    [L70, 4, "DISABLED", 38],
    [L70, 8, "DISABLED", 62.5],
  ] as const
) {
  const s = run(
    inst("A100_SXM_80G", tp),
    com(m, q, "{num_requests: 1, num_input_tokens: 5, num_output_tokens: 200, request_rate: 1}"),
  );
  rows.push([`§2 ${m.split("/")[1]} TP${tp} ${q} tok/s`, 1 / s.perMetric["TPOT(s)"].MEDIAN, meas]);
}
for (
  const [dev, q, isl, meas] of [
    ["H100_SXM_80G", "FP8", 128, 7],
    ["H100_SXM_80G", "FP8", 2048, 36],
    ["L40S_48G", "FP8", 128, 14],
    ["L40S_48G", "FP8", 2048, 73],
    ["A100_SXM_80G", "DISABLED", 128, 16],
    ["A100_SXM_80G", "DISABLED", 2048, 133],
  ] as const
) {
  const s = run(
    inst(dev, 1),
    com(L2, q, `{num_requests: 1, num_input_tokens: ${isl}, num_output_tokens: 2, request_rate: 1}`),
  );
  rows.push([`§3 ${dev} ${q} ISL${isl} TTFT ms`, s.perMetric["TTFT(s)"].MEDIAN * 1000, meas]);
}
const sat: [number, number, number, number][] = [
  [128, 128, 28312, 30000],
  [128, 2048, 22714, 3000],
  [128, 4096, 14325, 1500],
  [500, 2000, 17660, 3000],
  [1000, 1000, 15220, 3000],
  [1000, 2000, 13899, 1500],
  [2048, 128, 3450, 3000],
  [2048, 2048, 9305, 1500],
  [5000, 500, 3459, 1500],
  [20000, 2000, 1351, 1000],
];
for (const [i, o, meas, n] of sat) {
  if (Deno.args[0] === "fast" && n > 3000) continue;
  const s = run(
    inst("H100_SXM_80G", 1),
    com(
      "meta-llama/Llama-3.1-8B-Instruct",
      "FP8",
      `{num_requests: ${n}, num_input_tokens: ${i}, num_output_tokens: ${o}, request_rate: .inf}`,
      `, max_concurrency: ${n}, max_num_seqs: 2048, kv_cache_memory_fraction: 0.95, admission_policy: guaranteed_no_evict`,
      "FP8",
    ),
  );
  rows.push([`§4 ${i}/${o} out tok/s`, s.overall["output_token_throughput(tok/s)"], meas]);
}
const sg = (n: number, arr: string) => `{load_gen_type: synthetic, num_requests: ${n}, arrival: ${arr}, input_tokens: {dist: lognormal, mean: 217, std: 217, min: 4, max: 1024}, output_tokens: {dist: lognormal, mean: 201, std: 201, min: 4, max: 2048}}`;
const sgs = `, max_concurrency: 10000, max_num_seqs: 4096, mix_prefill_decode: false, kv_cache_memory_fraction: 0.88`;
for (const [rate, n, e2e, ttft, tpot] of [[4, 1200, 1564, 32.0, 13.2], [8, 2400, 2175, 35.7, 17.9]]) {
  const s = run(
    inst("A100_SXM_80G", 1),
    com(
      "meta-llama/Llama-3.1-8B-Instruct",
      "DISABLED",
      sg(n, `{process: poisson, request_rate: ${rate}}`), sgs,
    ),
  );
  rows.push([`§5 rate ${rate} E2E ms`, s.perMetric["E2E_TIME(s)"].MEDIAN * 1000, e2e]);
  rows.push([`§5 rate ${rate} TTFT ms`, s.perMetric["TTFT(s)"].MEDIAN * 1000, ttft]);
  rows.push([`§5 rate ${rate} TPOT ms`, s.perMetric["TPOT(s)"].MEDIAN * 1000, tpot]);
}
{
  const s = run(
    inst("A100_SXM_80G", 1),
    com(
      "meta-llama/Llama-3.1-8B-Instruct",
      "DISABLED",
      sg(5000, "{process: burst}"), sgs,
    ),
  );
  rows.push([`§5 offline req/s`, s.overall["request_throughput(req/s)"], 22.0]);
  rows.push([`§5 offline out tok/s`, s.overall["output_token_throughput(tok/s)"], 4282]);
}
const errs = rows.map(([n, sim, meas]) => {
  const e = sim / meas - 1;
  console.log(
    n.padEnd(45),
    sim.toFixed(2).padStart(10),
    String(meas).padStart(8),
    ((e * 100).toFixed(1) + "%").padStart(8),
  );
  return Math.abs(e);
});
errs.sort((a, b) => a - b);
console.log(
  "median",
  (errs[Math.floor(errs.length / 2)] * 100).toFixed(1),
  "max",
  (errs[errs.length - 1] * 100).toFixed(1),
);
