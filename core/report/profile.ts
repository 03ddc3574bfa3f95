/**
 * Profiling output, as text: a Chrome trace (opens in Perfetto and
 * chrome://tracing) and a per-request CSV.
 *
 * Trace layout: process 1 holds one thread per engine with a span per step
 * (args: batch size, prefill and decode tokens) and counters for KV blocks
 * in use and waiting requests; process 2 holds the requests as async
 * slices, one track per request, a slice per phase (client queue, prefill,
 * decode).
 *
 * @module
 */
import type { RequestTable, StepRecord, TransferRecord } from "../engine/types.ts";

/** A Chrome trace event (the JSON array format's fields that are used). */
interface TraceEvent {
  name: string;
  ph: "X" | "C" | "M" | "b" | "e" | "s" | "f";
  id?: number;
  bp?: "e";
  pid: number;
  tid?: number;
  ts?: number;
  dur?: number;
  args?: Record<string, unknown>;
  cat?: string;
}

/**
 * Builds the Chrome trace JSON.
 *
 * @param engines engine labels, by index
 * @param steps every recorded step
 * @param requests per-request times
 * @param transfers KV transfers (PD-disaggregated runs): an async slice each
 *   in process 3, and a flow arrow from the sending to the receiving engine
 *
 * @example A trace of each request's phases
 * ```ts
 * import { formatChromeTrace, runSources, YamlSource } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", c));
 * const trace = JSON.parse(formatChromeTrace(["engine 0"], [], out.result.requests));
 * const begins = trace.traceEvents.filter((e: { ph: string }) => e.ph === "b");
 * assert.deepEqual(begins.slice(0, 2).map((e: { name: string }) => e.name), ["prefill", "decode"]);
 * ```
 */
export function formatChromeTrace(
  engines: readonly string[],
  steps: readonly StepRecord[],
  requests: RequestTable,
  transfers: readonly TransferRecord[] = [],
): string {
  const ev: TraceEvent[] = [
    { name: "process_name", ph: "M", pid: 1, args: { name: "engines" } },
    { name: "process_name", ph: "M", pid: 2, args: { name: "requests" } },
  ];
  if (transfers.length) ev.push({ name: "process_name", ph: "M", pid: 3, args: { name: "KV transfers" } });
  transfers.forEach((t, i) => {
    const name = `KV ${engines[t.from]} → ${engines[t.to]}`;
    const args = { request: t.request, bytes: t.bytes, from: engines[t.from], to: engines[t.to] };
    ev.push({ name, cat: "transfer", ph: "b", id: i, pid: 3, ts: t.start, args });
    ev.push({ name, cat: "transfer", ph: "e", id: i, pid: 3, ts: t.end });
    ev.push({ name: "kv transfer", cat: "transfer", ph: "s", id: i, pid: 1, tid: t.from, ts: t.start, bp: "e" });
    ev.push({ name: "kv transfer", cat: "transfer", ph: "f", id: i, pid: 1, tid: t.to, ts: t.end, bp: "e" });
  });
  engines.forEach((label, i) => {
    ev.push({ name: "thread_name", ph: "M", pid: 1, tid: i, args: { name: label } });
  });
  for (const s of steps) {
    const kind = s.prefillTokens > 0 ? (s.decodeTokens > 0 ? "mixed" : "prefill") : "decode";
    ev.push({
      name: `step (${kind})`,
      cat: "step",
      ph: "X",
      pid: 1,
      tid: s.engine,
      ts: s.start,
      dur: s.duration,
      args: { batch_size: s.seqs, prefill_tokens: s.prefillTokens, decode_tokens: s.decodeTokens },
    });
    ev.push({
      name: `${engines[s.engine]} kv_blocks_in_use`,
      ph: "C",
      pid: 1,
      tid: s.engine,
      ts: s.start,
      args: { blocks: s.kvBlocks },
    });
    ev.push({
      name: `${engines[s.engine]} queue`,
      ph: "C",
      pid: 1,
      tid: s.engine,
      ts: s.start,
      args: { waiting: s.waiting, running: s.seqs },
    });
  }
  // Request phases are async slices (one track per request id), so that
  // overlapping requests never break the nesting of a thread track.
  for (let i = 0; i < requests.count; i++) {
    if (requests.engine[i] < 0 || requests.finish[i] < 0) continue;
    const args = { request: i, engine: engines[requests.engine[i]] };
    const phase = (name: string, from: number, to: number) => {
      if (to <= from) return;
      ev.push({ name, cat: "request", ph: "b", id: i, pid: 2, ts: from, args });
      ev.push({ name, cat: "request", ph: "e", id: i, pid: 2, ts: to });
    };
    phase("client queue", requests.arrival[i], requests.send[i]);
    phase("prefill", requests.send[i], requests.firstToken[i]);
    phase("decode", requests.firstToken[i], requests.finish[i]);
  }
  return JSON.stringify({ traceEvents: ev, displayTimeUnit: "ms" }) + "\n";
}

/**
 * The per-request CSV: one row per request, times in seconds (empty when
 * the request was never served).
 *
 * @example One CSV row per request
 * ```ts
 * import { formatRequestCsv, runSources, YamlSource } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", c));
 * const rows = formatRequestCsv(out.result.requests).trimEnd().split("\n");
 * assert.equal(rows.length, 1 + 4);
 * assert.match(rows[0], /^id,arrival_s,send_s,first_token_s,finish_s,input_tokens,output_tokens/);
 * assert.match(rows[1], /^0,0\.000000,0\.000000,[\d.]+,[\d.]+,128,8,0,0$/);
 * ```
 */
export function formatRequestCsv(requests: RequestTable): string {
  const sec = (us: number) => (us < 0 ? "" : (us / 1e6).toFixed(6));
  const rows = ["id,arrival_s,send_s,first_token_s,finish_s,input_tokens,output_tokens,preemptions,engine"];
  for (let i = 0; i < requests.count; i++) {
    rows.push(
      [
        i,
        sec(requests.arrival[i]),
        sec(requests.send[i]),
        sec(requests.firstToken[i]),
        sec(requests.finish[i]),
        requests.input[i],
        requests.output[i],
        requests.preemptions[i],
        requests.engine[i],
      ].join(","),
    );
  }
  return rows.join("\n") + "\n";
}
