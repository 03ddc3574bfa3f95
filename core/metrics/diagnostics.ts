/**
 * One-line diagnoses of a run for stderr: a deployment that does not keep
 * up with its load, and one whose KV cache is too small for its workload.
 *
 * @module
 */
import type { Summary } from "./summary.ts";

const secs = (x: number) => `${Number(x.toPrecision(3))} s`;
const rate = (x: number) => `${x.toFixed(1)} req/s`;

/**
 * Says how the deployment fell behind, or undefined when it kept up: the
 * achieved and offered rates, where requests waited, and the p99 TTFT from
 * arrival beside the one from send.
 *
 * @param s the run's summary
 * @param maxConcurrency the client's `max_concurrency`
 *
 * @example 20 requests at 1,000 req/s, one at a time
 * ```ts
 * import { overloadSummary, runSources, YamlSource } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const busy = c.replace("num_output_tokens: 8", "num_output_tokens: 8, num_requests: 20, request_rate: 1000")
 *   .replace("num_requests: 4, ", "") + "\nserving_config: {max_concurrency: 1}";
 * const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", busy));
 * assert.match(overloadSummary(out.summary, 1)!, /^the deployment does not keep up .* of 1000\.0 req\/s offered/);
 * const calm = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", c));
 * assert.equal(overloadSummary(calm.summary, 256), undefined);
 * ```
 */
export function overloadSummary(s: Summary, maxConcurrency: number): string | undefined {
  const l = s.load;
  if (l.keepsUp) return undefined;
  const wait = s.extMetric["CLIENT_WAIT(s)"];
  const ttft = s.extMetric["TTFT_FROM_ARRIVAL(s)"];
  const unservable = s.unservable.reduce((n, u) => n + u.count, 0);
  const where = [
    ...(wait.MAX > 0
      ? [`clients waited up to ${secs(wait.MAX)} (p99 ${secs(wait.P99)}) under max_concurrency ${maxConcurrency}`]
      : []),
    ...(unservable > 0 ? [`${unservable} requests can never be served`] : []),
  ].join("; ") || "requests queued in the engines";
  return `the deployment does not keep up with the offered load: achieved ${rate(l.achievedRate)} of ${
    rate(l.offeredRate)
  } offered; ${where}${
    Number.isNaN(ttft.P99)
      ? ""
      : `; p99 TTFT from arrival ${secs(ttft.P99)} (from send ${secs(s.perMetric["TTFT(s)"].P99)})`
  }`;
}

/** KV capacity of one instance group. */
export interface GroupKv {
  /** Group name. */
  readonly group: string;
  /** KV tokens one engine holds. */
  readonly tokensPerEngine: number;
}

/**
 * Names a KV-starved deployment (requests that can never fit, or
 * preemptions), or undefined when the KV cache was not a limit.
 *
 * @param s the run's summary
 * @param kv each group's KV capacity
 * @param tokensPerRequest mean prompt + output tokens of the workload's requests
 *
 * @example Preemptions name the KV capacity
 * ```ts
 * import { kvStarvedLine, runSources, YamlSource } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", c));
 * const kv = [{ group: "group0", tokensPerEngine: 512 }];
 * assert.equal(kvStarvedLine(out.summary, kv, 136), undefined); // no preemption: not starved
 * const line = kvStarvedLine({ ...out.summary, preemptions: 3 }, kv, 136);
 * assert.match(line!, /^KV cache holds 512 tokens per engine \(3 requests of this workload\)/);
 * assert.match(line!, /: 0 unservable, 3 preemptions; /);
 * ```
 */
export function kvStarvedLine(s: Summary, kv: readonly GroupKv[], tokensPerRequest: number): string | undefined {
  const unservable = s.unservable.filter((u) => u.reason.includes("KV cache")).reduce((n, u) => n + u.count, 0);
  if (unservable === 0 && s.preemptions === 0) return undefined;
  const holds = kv.map((g) =>
    `${g.tokensPerEngine.toLocaleString("en-US")} tokens per engine${kv.length > 1 ? ` (${g.group})` : ""} (${
      Math.floor(g.tokensPerEngine / tokensPerRequest).toLocaleString("en-US")
    } requests of this workload)`
  ).join(", ");
  return `KV cache holds ${holds}: ${unservable} unservable, ${s.preemptions} preemptions; raise kv_cache_memory_fraction, TP, or quantize the KV cache`;
}
