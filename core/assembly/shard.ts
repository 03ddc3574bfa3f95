/**
 * Sharded runs: traffic one process cannot hold, split over processes and
 * merged back.
 *
 * Shard `i` of `n` simulates partition `i` of the fleet: the engines whose
 * index is `i` modulo `n` and the requests whose id is `i` modulo `n` (the
 * routing key), routed among those engines by the run's policy. Engines
 * share nothing, so this is a fleet whose front door splits requests over
 * `n` independent partitions. With round-robin routing and `n` dividing the
 * engine count, request `j` lands on engine `j mod E` either way: the
 * shards together are the unsharded run, engine for engine. Each shard
 * writes its figures (the streamed distributions, its engines' counters, its
 * table) to a file; {@link mergeShards} combines the files into the run's
 * summary, every percentile within the sketches' bound of the exact one.
 *
 * A shard draws every request of the run's stream and keeps its own, so
 * the partitions see the same arrivals and lengths as the whole run.
 *
 * @module
 */
import { InputError } from "../config/errors.ts";
import type { AssembledRun } from "./assemble.ts";
import { workloadSource } from "../engine/simulator.ts";
import type { EngineStats, RequestTable, SimulationInput, SimulationResult } from "../engine/types.ts";
import type { RequestDraw, RequestSource } from "../workload/source.ts";
import { RequestStream } from "../metrics/stream.ts";
import type { StreamJson } from "../metrics/stream.ts";
import { streamOf, summarize } from "../metrics/summary.ts";
import type { Summary } from "../metrics/summary.ts";

/** Which shard a process runs: `index` of `count` (0-based). */
export interface Shard {
  /** Which partition (0-based). */
  readonly index: number;
  /** Of how many. */
  readonly count: number;
}

/** The format name a shard file carries (2: the inter-token gaps are the shard's, no longer each engine's). */
export const SHARD_FORMAT = "servingcast-shard/2";

/**
 * Reads `i/n` (0 ≤ i < n).
 *
 * @throws {RangeError} with the reason when it is not one
 */
export function parseShard(text: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text);
  const index = m ? Number(m[1]) : NaN, count = m ? Number(m[2]) : NaN;
  if (!m || !Number.isSafeInteger(count) || count < 1 || index >= count) {
    throw new RangeError(`expected i/n with 0 ≤ i < n (shard 0/4 is the first of 4), got '${text}'`);
  }
  return { index, count };
}

/** Keeps the draws of a source whose position is `index` modulo `count`. */
class PartitionSource implements RequestSource {
  readonly count: number;
  readonly #inner: RequestSource;
  readonly #shard: Shard;
  #drawn = 0;

  constructor(inner: RequestSource, shard: Shard, count: number) {
    this.#inner = inner;
    this.#shard = shard;
    this.count = count;
  }

  next(): RequestDraw {
    for (;;) {
      const d = this.#inner.next();
      if (this.#drawn++ % this.#shard.count === this.#shard.index) return d;
    }
  }
}

/**
 * Why a deployment cannot be sharded so (undefined: it can): a shard needs
 * an engine, the engines of one partition must not depend on another's
 * (PD handoffs do), and the client must not hold requests back across
 * partitions (`max_concurrency`).
 */
export function unshardable(input: SimulationInput, shard: Shard): string | undefined {
  const w = input.workload;
  if (input.engines.length < shard.count) {
    return `${shard.count} shards need at least ${shard.count} engines; the deployment has ${input.engines.length}`;
  }
  if (input.engines.some((e) => e.role !== "both")) {
    return "a PD-disaggregated deployment hands requests between engines of every partition: shard aggregated ones";
  }
  if (w.maxConcurrency < w.numRequests) {
    return `max_concurrency (${w.maxConcurrency}) holds requests back across partitions: shard open-loop runs ` +
      `(max_concurrency at least num_requests)`;
  }
  if (w.sessions) {
    return "a session's later turns are sent when the turn before finishes, in whichever partition served it: " +
      "shard workloads without sessions";
  }
  return undefined;
}

/** The input of shard `shard` of a run (see the module doc). Precondition: {@link unshardable} found nothing. */
export function shardInput(input: SimulationInput, shard: Shard): SimulationInput {
  const w = input.workload;
  const count = Math.max(0, Math.ceil((w.numRequests - shard.index) / shard.count));
  return {
    ...input,
    engines: input.engines.filter((_, e) => e % shard.count === shard.index),
    workload: { ...w, numRequests: count, source: () => new PartitionSource(workloadSource(w), shard, count) },
  };
}

/**
 * What every shard of one run shares, as a short text: the model, the
 * engines, the routing and the workload (its size, seed, arrivals and
 * lengths). A shard file of another run is refused by it.
 */
export function runIdentity(assembled: AssembledRun): string {
  const { engines, workload: w, routing } = assembled.input;
  const text = JSON.stringify([
    assembled.model.id,
    engines.map((e) => e.label),
    routing,
    [w.numRequests, w.seed, w.maxConcurrency, w.label, w.arrival, w.input, w.output, w.classes, w.sessions],
  ]);
  // FNV-1a, 32 bits: an identity check, not a secret.
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return `${assembled.model.id}, ${engines.length} engines, ${w.numRequests} requests, seed ${w.seed} #${
    h.toString(16).padStart(8, "0")
  }`;
}

/** One engine's counters as JSON. */
export type ShardEngine = EngineStats;

/** The columns of a request table a shard file carries. */
export const TABLE_COLUMNS = [
  "arrival",
  "send",
  "firstToken",
  "finish",
  "input",
  "output",
  "preemptions",
  "engine",
] as const;

/** A shard's table as JSON: every `stride`-th of its requests, column by column. */
export type ShardTable = { readonly stride: number } & { readonly [K in (typeof TABLE_COLUMNS)[number]]: number[] };

/** What a shard writes: its partition's figures. */
export interface ShardFile {
  /** {@link SHARD_FORMAT}. */
  readonly format: typeof SHARD_FORMAT;
  /** Which shard. */
  readonly shard: number;
  /** Of how many. */
  readonly shards: number;
  /** The run it is a shard of: its description and seed, which every shard of it shares. */
  readonly run: string;
  /** Requests of the whole run. */
  readonly requests: number;
  /** Its last event, µs. */
  readonly endTime: number;
  /** Its unservable requests by reason. */
  readonly unservable: [string, number][];
  /** Its engines, in order (global engine `shard + shards × k` is its k-th). */
  readonly engines: ShardEngine[];
  /** Its inter-token gaps, as [µs, count] pairs. */
  readonly itl: [number, number][];
  /** Its table (every `stride`-th of its requests). */
  readonly table: ShardTable;
  /** Its requests' figures. */
  readonly stream: StreamJson;
}

/**
 * The file a shard writes.
 *
 * @param out the shard's run
 * @param shard which shard it was
 * @param run the whole run's identity (its description and seed)
 * @param requests requests of the whole run
 * @param stream the figures it streamed, when it was longer than its exact count
 */
export function shardFile(
  out: { readonly result: SimulationResult; readonly summary: Summary },
  shard: Shard,
  run: string,
  requests: number,
  stream?: RequestStream,
): ShardFile {
  const { result } = out;
  const t = result.requests;
  const figures = stream ?? streamOf(t, out.summary.goodput?.slos);
  return {
    format: SHARD_FORMAT,
    shard: shard.index,
    shards: shard.count,
    run,
    requests,
    endTime: result.endTime,
    unservable: [...result.unservable],
    engines: [...result.engines],
    itl: [...result.itl],
    table: {
      stride: t.stride ?? 1,
      ...Object.fromEntries(TABLE_COLUMNS.map((c) => [c, Array.from(t[c])])) as Omit<ShardTable, "stride">,
    },
    stream: figures.toJSON(),
  };
}

/**
 * The whole run from its shards' files: the summary of every request (the
 * distributions merged), every engine in its place, the tables combined in
 * arrival order.
 *
 * @param run the whole run's identity ({@link runIdentity}), which every file must carry
 * @param files every shard's file, each once
 * @throws {InputError} when the files are not the shards of this run, each once
 */
export function mergeShards(
  run: string,
  files: readonly [string, ShardFile][],
): { readonly result: SimulationResult; readonly summary: Summary } {
  const bad = (path: string, why: string) => new InputError({ file: path }, why);
  const n = files[0]?.[1].shards;
  const seen = new Map<number, string>();
  for (const [path, f] of files) {
    if (f?.format !== SHARD_FORMAT) throw bad(path, `not a shard file (format ${SHARD_FORMAT})`);
    if (f.run !== run) throw bad(path, `a shard of another run: '${f.run}', not '${run}'`);
    if (f.shards !== n) throw bad(path, `shard ${f.shard}/${f.shards}, but ${files[0][0]} is one of ${n}`);
    if (seen.has(f.shard)) throw bad(path, `shard ${f.shard}/${n} again (${seen.get(f.shard)} is it)`);
    seen.set(f.shard, path);
  }
  const missing = Array.from({ length: n }, (_, i) => i).filter((i) => !seen.has(i));
  if (missing.length) throw bad(files[0][0], `shards ${missing.map((i) => `${i}/${n}`).join(", ")} are missing`);
  const shards = files.map(([, f]) => f).sort((a, b) => a.shard - b.shard);
  const stream = RequestStream.fromJSON(shards[0].stream);
  for (const f of shards.slice(1)) stream.merge(RequestStream.fromJSON(f.stream));
  // Engines back in their places: global engine i + n·k is shard i's k-th.
  const engines: EngineStats[] = [];
  shards.forEach((f) => f.engines.forEach((e, k) => engines[f.shard + n * k] = e));
  const unservable = new Map<string, number>();
  for (const f of shards) for (const [why, c] of f.unservable) unservable.set(why, (unservable.get(why) ?? 0) + c);
  const itl = new Map<number, number>();
  for (const f of shards) for (const [gap, c] of f.itl) itl.set(gap, (itl.get(gap) ?? 0) + c);
  const result: SimulationResult = {
    requests: mergeTables(shards),
    unservable,
    endTime: Math.max(...shards.map((f) => f.endTime)),
    engines,
    itl,
  };
  return { result, summary: summarize(result, { goodput: stream.slo, stream }) };
}

/** The shards' tables as one, in arrival order (ties by request id), with their shared stride. */
function mergeTables(shards: readonly ShardFile[]): RequestTable {
  const n = shards[0].shards;
  // Each row: its arrival, its request id in the whole run, and where it is.
  const rows: { arrival: number; id: number; f: ShardFile; r: number }[] = [];
  for (const f of shards) {
    const t = f.table;
    for (let r = 0; r < t.arrival.length; r++) {
      rows.push({ arrival: t.arrival[r], id: f.shard + n * r * t.stride, f, r });
    }
  }
  rows.sort((a, b) => a.arrival - b.arrival || a.id - b.id);
  const count = rows.length;
  const f64 = () => new Float64Array(count), i32 = () => new Int32Array(count);
  const t = {
    count,
    ...(shards[0].table.stride > 1 ? { stride: shards[0].table.stride } : {}),
    arrival: f64(),
    send: f64(),
    firstToken: f64(),
    finish: f64(),
    input: i32(),
    output: i32(),
    preemptions: i32(),
    engine: i32(),
  };
  rows.forEach(({ f, r }, i) => {
    for (const c of TABLE_COLUMNS) t[c][i] = f.table[c][r];
    // The shard's engine index, as the whole run's.
    const e = f.table.engine[r];
    t.engine[i] = e < 0 ? -1 : f.shard + n * e;
  });
  return t;
}
