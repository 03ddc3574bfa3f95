/**
 * Profiling output, as text: a Chrome trace (opens in Perfetto and
 * chrome://tracing) and a per-request CSV, both written as a stream of
 * chunks (see {@link ChromeTraceWriter}, {@link TraceRecorder}) so that a
 * profile of a long run never sits in memory.
 *
 * Trace layout: process 1 holds one thread per engine with a span per step
 * (args: batch size, prefill and decode tokens) and counters for KV blocks
 * in use and waiting requests; process 2 holds the requests as async
 * slices, one track per request, a slice per phase (client queue, prefill,
 * decode); process 3 (PD-disaggregated runs) holds the KV transfers as
 * async slices, with a flow arrow from the sending to the receiving engine.
 *
 * What is written can be narrowed (a {@link TraceSelection}): to a window
 * of simulated time (only events overlapping it) and to a sample of
 * requests (their phases, their transfers and the steps of the engines that
 * served them while they were there).
 *
 * @module
 */
import type { RequestTable, StepRecord, TransferRecord } from "../engine/types.ts";
import { ChunkedTextWriter, fileSink, GzipSink, RecordSpool } from "./trace_writer.ts";
import type { WriteGuard } from "./trace_writer.ts";

/** Where trace or CSV text goes (a {@link ChunkedTextWriter}, or a string being built). */
export interface TextOut {
  /** Appends text. */
  write(text: string): void;
}

/** Process ids of the trace: engines, requests, KV transfers. */
const PID_ENGINES = 1;
const PID_REQUESTS = 2;
const PID_TRANSFERS = 3;

/*
 * Thread ids. Steps, counters and flow arrows sit on their engine's thread
 * (tid = engine index, in process 1): Perfetto draws a track per thread.
 * Async slices ('b'/'e': request phases, KV transfers) are placed by
 * Perfetto on tracks of their own, keyed by process, category, id and name;
 * their tid only says which thread emitted them, and each distinct tid adds
 * a row to Perfetto's thread table. So they carry tid = pid, the process's
 * main thread, which Perfetto creates for every process anyway (and assumes
 * when an event has no tid): the tracks look exactly as before, no thread is
 * added. A request id (100,000 threads in a large run) or an engine index
 * (phantom engine threads in processes 2 and 3: Perfetto resolves a
 * thread_name by tid alone, so those could take an engine's name) would not.
 * Metadata events carry the tid of the process or thread they name.
 */
const TID_REQUESTS = PID_REQUESTS;
const TID_TRANSFERS = PID_TRANSFERS;

/** A span of simulated time, in µs, both ends included. */
export interface TraceWindow {
  /** First µs. */
  readonly start: number;
  /** Last µs. */
  readonly end: number;
}

/** What a trace keeps of a run (everything when empty). */
export interface TraceSelection {
  /** Only events overlapping this span (steps, counters, transfers, request phases). */
  readonly window?: TraceWindow;
  /**
   * Only this many requests, picked by {@link sampleRequests}: their phases,
   * their KV transfers, and the steps of the engines that served them while
   * they were there.
   */
  readonly sample?: number;
}

/** What a trace holds, for the command line's closing line. */
export interface TraceCounts {
  /** Step spans written. */
  readonly steps: number;
  /** Requests with at least one phase written. */
  readonly requests: number;
  /** KV transfers written. */
  readonly transfers: number;
}

/** Whether [from, to] overlaps the window (always, without one). */
function overlaps(window: TraceWindow | undefined, from: number, to: number): boolean {
  return window === undefined || (to >= window.start && from <= window.end);
}

/**
 * Writes Chrome trace events (the JSON object format,
 * `{"traceEvents":[...],"displayTimeUnit":"ms"}`) to a text stream, one
 * event at a time, an event a line. Events are built as text directly (no
 * object per event); names are escaped with `JSON.stringify`, numbers are
 * the simulator's finite integers (µs, tokens, blocks, bytes).
 *
 * @example A trace with one step, read back
 * ```ts
 * import { ChromeTraceWriter } from "./profiling.ts";
 * import assert from "node:assert/strict";
 *
 * let text = "";
 * const w = new ChromeTraceWriter({ write: (t) => void (text += t) }, ["engine 0"], false);
 * w.step(0, 1000, 250, 4, 512, 3, 40, 2);
 * w.end();
 * const trace = JSON.parse(text);
 * assert.equal(trace.displayTimeUnit, "ms");
 * const step = trace.traceEvents.find((e: { ph: string }) => e.ph === "X");
 * assert.deepEqual(step, {
 *   name: "step (mixed)", cat: "step", ph: "X", pid: 1, tid: 0, ts: 1000, dur: 250,
 *   args: { batch_size: 4, prefill_tokens: 512, decode_tokens: 3 },
 * });
 * assert.equal(w.steps, 1);
 * ```
 */
export class ChromeTraceWriter {
  readonly #out: TextOut;
  /** Engine labels. */
  readonly #names: readonly string[];
  /** Engine labels, JSON-escaped (with their quotes). */
  readonly #labels: string[];
  /** Per engine: the start of its two counter events, up to the timestamp. */
  readonly #kvCounter: string[];
  readonly #queueCounter: string[];
  #first = true;
  #steps = 0;
  #transfers = 0;
  #requests = 0;

  /**
   * Writes the opening and the metadata: process names, a thread name per
   * engine (all before any other event, so that Perfetto names each thread
   * when it first meets it).
   *
   * @param out where the text goes
   * @param engines engine labels, by index
   * @param hasTransfers whether to name process 3 (KV transfers)
   */
  constructor(out: TextOut, engines: readonly string[], hasTransfers: boolean) {
    this.#out = out;
    this.#names = engines;
    this.#labels = engines.map((l) => JSON.stringify(l));
    this.#kvCounter = engines.map((l, i) =>
      `{"name":${JSON.stringify(`${l} kv_blocks_in_use`)},"ph":"C","pid":${PID_ENGINES},"tid":${i},"ts":`
    );
    this.#queueCounter = engines.map((l, i) =>
      `{"name":${JSON.stringify(`${l} queue`)},"ph":"C","pid":${PID_ENGINES},"tid":${i},"ts":`
    );
    out.write('{"traceEvents":[\n');
    const processName = (pid: number, name: string) =>
      this.#event(`{"name":"process_name","ph":"M","pid":${pid},"tid":${pid},"args":{"name":"${name}"}}`);
    processName(PID_ENGINES, "engines");
    processName(PID_REQUESTS, "requests");
    if (hasTransfers) processName(PID_TRANSFERS, "KV transfers");
    this.#labels.forEach((label, i) => {
      this.#event(`{"name":"thread_name","ph":"M","pid":${PID_ENGINES},"tid":${i},"args":{"name":${label}}}`);
    });
  }

  /** Number of engines (threads of process 1). */
  get engines(): number {
    return this.#labels.length;
  }

  /** Step spans written. */
  get steps(): number {
    return this.#steps;
  }

  /** KV transfers written. */
  get transfers(): number {
    return this.#transfers;
  }

  /** Requests with at least one phase written. */
  get requests(): number {
    return this.#requests;
  }

  /**
   * A step: its span on the engine's thread, and the engine's two counters
   * (KV blocks in use; waiting and running requests) at its start.
   */
  step(
    engine: number,
    start: number,
    duration: number,
    seqs: number,
    prefillTokens: number,
    decodeTokens: number,
    kvBlocks: number,
    waiting: number,
  ): void {
    const kind = prefillTokens > 0 ? (decodeTokens > 0 ? "mixed" : "prefill") : "decode";
    this.#event(
      `{"name":"step (${kind})","cat":"step","ph":"X","pid":${PID_ENGINES},"tid":${engine},"ts":${start},` +
        `"dur":${duration},"args":{"batch_size":${seqs},"prefill_tokens":${prefillTokens},` +
        `"decode_tokens":${decodeTokens}}},\n` +
        `${this.#kvCounter[engine]}${start},"args":{"blocks":${kvBlocks}}},\n` +
        `${this.#queueCounter[engine]}${start},"args":{"waiting":${waiting},"running":${seqs}}}`,
    );
    this.#steps++;
  }

  /**
   * A KV transfer: an async slice in process 3, and a flow arrow from the
   * sending engine's step to the receiving engine's.
   *
   * @param id the transfer's number in the run (its order of completion)
   */
  transfer(id: number, request: number, from: number, to: number, start: number, end: number, bytes: number): void {
    const name = JSON.stringify(`KV ${this.#names[from]} → ${this.#names[to]}`);
    const head = `{"name":${name},"cat":"transfer","id":${id},"pid":${PID_TRANSFERS},"tid":${TID_TRANSFERS}`;
    const flow = `{"name":"kv transfer","cat":"transfer","id":${id},"pid":${PID_ENGINES}`;
    this.#event(
      `${head},"ph":"b","ts":${start},"args":{"request":${request},"bytes":${bytes},` +
        `"from":${this.#labels[from]},"to":${this.#labels[to]}}},\n` +
        `${head},"ph":"e","ts":${end}},\n` +
        `${flow},"ph":"s","tid":${from},"ts":${start},"bp":"e"},\n` +
        `${flow},"ph":"f","tid":${to},"ts":${end},"bp":"e"}`,
    );
    this.#transfers++;
  }

  /**
   * A finished request's phases (client queue, prefill, decode) that are
   * not empty and overlap the window; nothing for an unserved request.
   *
   * @returns whether a phase was written
   */
  request(requests: RequestTable, i: number, window?: TraceWindow): boolean {
    const engine = requests.engine[i];
    if (engine < 0 || requests.finish[i] < 0) return false;
    const args = `"args":{"request":${i},"engine":${this.#labels[engine]}}`;
    let wrote = false;
    const phase = (name: string, from: number, to: number) => {
      if (to <= from || !overlaps(window, from, to)) return;
      const head = `{"name":"${name}","cat":"request","id":${i},"pid":${PID_REQUESTS},"tid":${TID_REQUESTS}`;
      this.#event(`${head},"ph":"b","ts":${from},${args}},\n${head},"ph":"e","ts":${to}}`);
      wrote = true;
    };
    phase("client queue", requests.arrival[i], requests.send[i]);
    phase("prefill", requests.send[i], requests.firstToken[i]);
    phase("decode", requests.firstToken[i], requests.finish[i]);
    if (wrote) this.#requests++;
    return wrote;
  }

  /** Writes the closing; nothing may be written after. */
  end(): void {
    this.#out.write('\n],"displayTimeUnit":"ms"}\n');
  }

  #event(text: string): void {
    this.#out.write(this.#first ? text : `,\n${text}`);
    this.#first = false;
  }
}

/**
 * The requests a sampled trace follows: `n` of the candidates (requests
 * served, whose span from arrival to finish overlaps the window when there
 * is one), evenly spaced by rank in id order: the k-th of n (k = 0 … n−1)
 * is the candidate of rank ⌊(2k + 1)·M / 2n⌋ among the M candidates, the
 * middle of the k-th of n equal slices. No randomness: the same run gives
 * the same ids. All candidates when n ≥ M.
 *
 * @returns the sampled ids, ascending
 *
 * @example 3 of 10 requests
 * ```ts
 * import { sampleRequests } from "./profiling.ts";
 * import assert from "node:assert/strict";
 *
 * const n = 10;
 * const times = (f: (i: number) => number) => Float64Array.from({ length: n }, (_, i) => f(i));
 * const table = {
 *   count: n, arrival: times((i) => i * 1e6), send: times((i) => i * 1e6),
 *   firstToken: times((i) => i * 1e6 + 5e5), finish: times((i) => i * 1e6 + 9e5),
 *   input: new Int32Array(n), output: new Int32Array(n), preemptions: new Int32Array(n), engine: new Int32Array(n),
 * };
 * assert.deepEqual([...sampleRequests(table, 3)], [1, 5, 8]);
 * // In the window 2–5 s the candidates are requests 2 to 5 (request 1 is done at 1.9 s): ranks 1 and 3 of 4.
 * assert.deepEqual([...sampleRequests(table, 2, { start: 2e6, end: 5e6 })], [3, 5]);
 * ```
 */
export function sampleRequests(requests: RequestTable, n: number, window?: TraceWindow): Int32Array {
  const candidate = (i: number) =>
    requests.engine[i] >= 0 && requests.finish[i] >= 0 && overlaps(window, requests.arrival[i], requests.finish[i]);
  let m = 0;
  for (let i = 0; i < requests.count; i++) if (candidate(i)) m++;
  const take = Math.min(n, m);
  const ids = new Int32Array(take);
  // Walk the candidates once, taking the one whose rank is the next target.
  let k = 0;
  let rank = 0;
  let target = take > 0 ? Math.floor(m / (2 * take)) : -1;
  for (let i = 0; i < requests.count && k < take; i++) {
    if (!candidate(i)) continue;
    if (rank === target) {
      ids[k++] = i;
      target = Math.floor(((2 * k + 1) * m) / (2 * take));
    }
    rank++;
  }
  return ids;
}

/** Numbers per spooled step: engine, start, duration, seqs, prefill tokens, decode tokens, KV blocks, waiting. */
export const STEP_RECORD_WIDTH = 8;
/** Numbers per spooled transfer: request, from, to, start, end, bytes. */
export const TRANSFER_RECORD_WIDTH = 6;

/** Where a sampled trace keeps the run's steps and transfers until the sample is known. */
export interface TraceSpools {
  /** Steps ({@link STEP_RECORD_WIDTH} numbers each). */
  readonly steps: RecordSpool;
  /** KV transfers ({@link TRANSFER_RECORD_WIDTH} numbers each). */
  readonly transfers: RecordSpool;
}

/**
 * Feeds a run into a {@link ChromeTraceWriter} as it happens: pass
 * {@link onStep} and {@link onTransfer} as the simulation's hooks, then
 * {@link finish} with the run's request table.
 *
 * Without a sample, steps and transfers are written as the run produces
 * them (those overlapping the window, if any) and request phases at the
 * end. With a sample, which steps to write is known only once every request
 * has finished: steps (in the window) and transfers go to spool files
 * during the run, and are read back and filtered at the end. Either way
 * memory does not grow with the run.
 *
 * @example The first 50 ms of a run: one request's 8 steps
 * ```ts
 * import { runSources, YamlSource } from "../../mod.ts";
 * import { ChromeTraceWriter, TraceRecorder } from "./profiling.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8, " +
 *   "request_rate: 10}"; // a request every 100 ms, each done in about 57 ms
 * let text = "";
 * const trace = new ChromeTraceWriter({ write: (t) => void (text += t) }, ["engine 0"], false);
 * const recorder = new TraceRecorder(trace, { window: { start: 0, end: 50_000 } }); // µs
 * const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", c), { onStep: recorder.onStep });
 * assert.equal(out.result.engines[0].steps, 32);
 * assert.deepEqual(recorder.finish(out.result.requests), { steps: 8, requests: 1, transfers: 0 });
 * const events: { ph: string; ts: number; dur?: number }[] = JSON.parse(text).traceEvents;
 * const steps = events.filter((e) => e.ph === "X");
 * assert.deepEqual(steps.map((e) => e.ts), [0, 8779, 15627, 22475, 29324, 36173, 43022, 49871]);
 * ```
 */
export class TraceRecorder {
  readonly #trace: ChromeTraceWriter;
  readonly #window: TraceWindow | undefined;
  readonly #sample: number | undefined;
  readonly #spools: TraceSpools | undefined;
  /** Transfers seen so far: the next one's number (the same with or without a window or sample). */
  #transferSeq = 0;

  /** Receives every step (the simulation's `onStep`). */
  readonly onStep: (s: StepRecord) => void;
  /** Receives every KV transfer (the simulation's `onTransfer`). */
  readonly onTransfer: (t: TransferRecord) => void;

  /**
   * @param trace the trace being written (its metadata already out)
   * @param selection window and sample
   * @param spools needed with a sample
   * @throws {RangeError} when a sample has no spools
   */
  constructor(trace: ChromeTraceWriter, selection: TraceSelection = {}, spools?: TraceSpools) {
    this.#trace = trace;
    const window = this.#window = selection.window;
    this.#sample = selection.sample;
    if (this.#sample !== undefined && !spools) throw new RangeError("TraceRecorder: a sample needs spools");
    this.#spools = spools;
    if (spools) {
      const steps = spools.steps;
      const transfers = spools.transfers;
      this.onStep = (s) => {
        if (!overlaps(window, s.start, s.start + s.duration)) return;
        const at = steps.next();
        const b = steps.buffer;
        b[at] = s.engine;
        b[at + 1] = s.start;
        b[at + 2] = s.duration;
        b[at + 3] = s.seqs;
        b[at + 4] = s.prefillTokens;
        b[at + 5] = s.decodeTokens;
        b[at + 6] = s.kvBlocks;
        b[at + 7] = s.waiting;
      };
      // Every transfer is kept (one per request at most): a sampled request's engines are known from it even
      // when the transfer itself lies outside the window.
      this.onTransfer = (t) => {
        const at = transfers.next();
        const b = transfers.buffer;
        b[at] = t.request;
        b[at + 1] = t.from;
        b[at + 2] = t.to;
        b[at + 3] = t.start;
        b[at + 4] = t.end;
        b[at + 5] = t.bytes;
      };
    } else {
      this.onStep = (s) => {
        if (!overlaps(window, s.start, s.start + s.duration)) return;
        trace.step(s.engine, s.start, s.duration, s.seqs, s.prefillTokens, s.decodeTokens, s.kvBlocks, s.waiting);
      };
      this.onTransfer = (t) => {
        const id = this.#transferSeq++;
        if (overlaps(window, t.start, t.end)) trace.transfer(id, t.request, t.from, t.to, t.start, t.end, t.bytes);
      };
    }
  }

  /**
   * Writes what is left (sampled steps and transfers, request phases) and
   * the closing of the trace (the text stream itself is the caller's to
   * close).
   *
   * @param requests the run's request table
   */
  finish(requests: RequestTable): TraceCounts {
    const trace = this.#trace;
    const engines = trace.engines;
    const window = this.#window;
    if (this.#sample === undefined) {
      for (let i = 0; i < requests.count; i++) trace.request(requests, i, window);
    } else {
      const ids = sampleRequests(requests, this.#sample, window);
      const sampled = new Uint8Array(requests.count);
      for (const i of ids) sampled[i] = 1;
      // Each sampled request's time on each engine: [send, finish] on the engine that served it, or, when its
      // prompt's KV moved, [send, first token] on the prefill engine and [landed, finish] on the decode engine.
      const spans: number[][] = Array.from({ length: engines }, () => []);
      const span = (engine: number, from: number, to: number) => {
        const a = window ? Math.max(from, window.start) : from;
        const b = window ? Math.min(to, window.end) : to;
        if (a <= b) spans[engine].push(a, b);
      };
      const moved = new Set<number>();
      let seq = 0;
      this.#spools!.transfers.read((r, at) => {
        const id = seq++;
        const req = r[at];
        if (!sampled[req]) return;
        const [from, to, start, end] = [r[at + 1], r[at + 2], r[at + 3], r[at + 4]];
        if (overlaps(window, start, end)) trace.transfer(id, req, from, to, start, end, r[at + 5]);
        moved.add(req);
        span(from, requests.send[req], requests.firstToken[req]);
        span(to, end, requests.finish[req]);
      });
      for (const i of ids) if (!moved.has(i)) span(requests.engine[i], requests.send[i], requests.finish[i]);
      const merged = spans.map(mergeSpans);
      // Steps come back in start order, so each engine's spans are walked once.
      const next = new Int32Array(engines);
      this.#spools!.steps.read((r, at) => {
        const e = r[at];
        const start = r[at + 1];
        const end = start + r[at + 2];
        const m = merged[e];
        let k = next[e];
        while (k < m.length && m[k + 1] < start) k += 2;
        next[e] = k;
        if (k < m.length && m[k] <= end) {
          trace.step(e, start, r[at + 2], r[at + 3], r[at + 4], r[at + 5], r[at + 6], r[at + 7]);
        }
      });
      for (const i of ids) trace.request(requests, i, window);
    }
    trace.end();
    return { steps: trace.steps, requests: trace.requests, transfers: trace.transfers };
  }
}

/** Sorts flat [from, to, from, to, …] spans by start and merges the overlapping ones. */
function mergeSpans(flat: number[]): Float64Array {
  const order = Array.from({ length: flat.length / 2 }, (_, k) => k).sort((a, b) => flat[2 * a] - flat[2 * b]);
  const out: number[] = [];
  for (const k of order) {
    const [a, b] = [flat[2 * k], flat[2 * k + 1]];
    if (out.length && a <= out[out.length - 1]) out[out.length - 1] = Math.max(out[out.length - 1], b);
    else out.push(a, b);
  }
  return Float64Array.from(out);
}

/**
 * Builds the Chrome trace JSON of a whole run in memory (the command line
 * streams it instead, through {@link TraceRecorder}; the events are the
 * same).
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
 * assert.ok(trace.traceEvents.every((e: { tid?: number }) => Number.isInteger(e.tid)));
 * ```
 */
export function formatChromeTrace(
  engines: readonly string[],
  steps: readonly StepRecord[],
  requests: RequestTable,
  transfers: readonly TransferRecord[] = [],
): string {
  const parts: string[] = [];
  const trace = new ChromeTraceWriter({ write: (t) => void parts.push(t) }, engines, transfers.length > 0);
  const recorder = new TraceRecorder(trace);
  for (const t of transfers) recorder.onTransfer(t);
  for (const s of steps) recorder.onStep(s);
  recorder.finish(requests);
  return parts.join("");
}

const CSV_HEADER = "id,arrival_s,send_s,first_token_s,finish_s,input_tokens,output_tokens,preemptions,engine";

/** Seconds with 6 decimals from µs; empty for -1 (never). */
const csvSeconds = (us: number) => (us < 0 ? "" : (us / 1e6).toFixed(6));

/**
 * Writes the per-request CSV (see {@link formatRequestCsv}) to a text
 * stream, a row at a time.
 */
export function writeRequestCsv(requests: RequestTable, out: TextOut): void {
  out.write(CSV_HEADER + "\n");
  for (let i = 0; i < requests.count; i++) {
    out.write(
      `${i},${csvSeconds(requests.arrival[i])},${csvSeconds(requests.send[i])},${csvSeconds(requests.firstToken[i])},${
        csvSeconds(requests.finish[i])
      },${requests.input[i]},${requests.output[i]},${requests.preemptions[i]},${requests.engine[i]}\n`,
    );
  }
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
  const parts: string[] = [];
  writeRequestCsv(requests, { write: (t) => void parts.push(t) });
  return parts.join("");
}

/** Options of {@link ProfilingFiles}. */
export interface ProfilingFilesOptions {
  /** Engine labels, by index. */
  readonly engines: readonly string[];
  /** Whether the run can move KV between engines (then process 3 is named). */
  readonly hasTransfers: boolean;
  /** Window and sample (default: everything). */
  readonly selection?: TraceSelection;
  /** Write `trace.json.gz` instead of `trace.json`. */
  readonly gzip?: boolean;
  /** Wraps each file operation (the command line's turns file-system errors into its own). */
  readonly guard?: WriteGuard;
}

/**
 * A run's profiling files in a folder: `trace.json` (or `trace.json.gz`),
 * written while the run goes ({@link recorder} holds the hooks), and
 * `requests.csv`, written by {@link finish}. With a sample, two spool files
 * (`.steps.spool`, `.transfers.spool`) hold the run's steps and transfers
 * until then, and are removed.
 *
 * @example A gzipped, windowed profile of a small run
 * ```ts
 * import { runSources, YamlSource } from "../../mod.ts";
 * import { ProfilingFiles } from "./profiling.ts";
 * import { gunzipSync } from "node:zlib";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8, " +
 *   "request_rate: 10}";
 * const dir = Deno.makeTempDirSync();
 * const files = new ProfilingFiles(dir, {
 *   engines: ["engine 0"],
 *   hasTransfers: false,
 *   selection: { window: { start: 100_000, end: 150_000 }, sample: 1 }, // µs: request 1 only
 *   gzip: true,
 * });
 * const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", c), files.recorder);
 * assert.deepEqual(files.finish(out.result.requests), { steps: 8, requests: 1, transfers: 0 });
 * assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name).sort(), ["requests.csv", "trace.json.gz"]);
 * const trace = JSON.parse(new TextDecoder().decode(gunzipSync(Deno.readFileSync(`${dir}/trace.json.gz`))));
 * const phases = trace.traceEvents.filter((e: { ph: string }) => e.ph === "b");
 * assert.deepEqual(phases.map((e: { id: number; name: string }) => `${e.id} ${e.name}`), ["1 prefill", "1 decode"]);
 * Deno.removeSync(dir, { recursive: true });
 * ```
 */
export class ProfilingFiles {
  /** The trace's file name in the folder. */
  readonly traceFile: string;
  /** The simulation hooks (`onStep`, `onTransfer`). */
  readonly recorder: TraceRecorder;
  readonly #dir: string;
  readonly #guard: WriteGuard | undefined;
  readonly #text: ChunkedTextWriter;
  readonly #spools: TraceSpools | undefined;
  #closed = false;

  /**
   * Opens the trace (and the spools) in `dir` and writes the trace's
   * metadata.
   *
   * @param dir an existing folder
   * @param options engines, selection, compression
   */
  constructor(dir: string, options: ProfilingFilesOptions) {
    const guard = options.guard;
    this.#dir = dir;
    this.#guard = guard;
    this.traceFile = options.gzip ? "trace.json.gz" : "trace.json";
    const file = fileSink(`${dir}/${this.traceFile}`, guard);
    this.#text = new ChunkedTextWriter(options.gzip ? new GzipSink(file) : file);
    if (options.selection?.sample !== undefined) {
      const steps = new RecordSpool(`${dir}/.steps.spool`, STEP_RECORD_WIDTH, guard);
      const transfers = new RecordSpool(`${dir}/.transfers.spool`, TRANSFER_RECORD_WIDTH, guard);
      this.#spools = { steps, transfers };
    }
    const trace = new ChromeTraceWriter(this.#text, options.engines, options.hasTransfers);
    this.recorder = new TraceRecorder(trace, options.selection, this.#spools);
  }

  /**
   * Ends the trace and writes `requests.csv` (every request, whatever the
   * selection); the spools are removed.
   *
   * @returns what the trace holds
   */
  finish(requests: RequestTable): TraceCounts {
    try {
      const counts = this.recorder.finish(requests);
      this.#closed = true;
      this.#text.close();
      this.#removeSpools();
      const csv = new ChunkedTextWriter(fileSink(`${this.#dir}/requests.csv`, this.#guard));
      try {
        writeRequestCsv(requests, csv);
      } finally {
        csv.close();
      }
      return counts;
    } catch (e) {
      this.abort();
      throw e;
    }
  }

  /** Closes what is open and removes the spools, ignoring errors (the caller removes the folder). */
  abort(): void {
    if (!this.#closed) {
      this.#closed = true;
      try {
        this.#text.close();
      } catch {
        // The write that failed already said why; a partial file is removed with its folder.
      }
    }
    try {
      this.#removeSpools();
    } catch {
      // As above.
    }
  }

  #removeSpools(): void {
    this.#spools?.steps.remove();
    this.#spools?.transfers.remove();
  }
}
