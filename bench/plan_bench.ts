/**
 * Planner speed (issue 12's target: under 60 s on a 2-core machine):
 * Llama-3.1-70B (BF16) at 20 req/s of 2,048-token prompts and 256-token
 * answers (Poisson, 1,000 requests per run) over H100, H200 and MI300X ×
 * TP 1, 2, 4, 8 × aggregated and disaggregated, p99 TTFT ≤ 2 s and p99
 * TPOT ≤ 50 ms.
 *
 * @module
 */
import { planDeployments } from "../core/planner/planner.ts";

const commonFile = new URL("../examples/plan/llama70b_chat.yaml", import.meta.url).pathname;

Deno.bench("plan: Llama-3.1-70B, 3 devices × TP 1-8 × agg/disagg, 20 req/s", { n: 1, warmup: 0 }, () => {
  const r = planDeployments({
    commonFile,
    targetRate: 20,
    slos: [{ key: "ttft.p99", bound: "<= 2" }, { key: "tpot.p99", bound: "<= 0.05" }],
    devices: ["H100_SXM_80G", "H200_SXM_141G", "MI300X_192G"],
    tpSizes: [1, 2, 4, 8],
    topologies: ["agg", "disagg"],
    maxDevices: 64,
  });
  if (r.ranked.length === 0) throw new Error("no deployment planned");
});
