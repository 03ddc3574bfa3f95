/**
 * Recorded traces: one request per line, JSONL or CSV, in the Mooncake
 * format — `timestamp` (ms), `input_length`, `output_length`, optional
 * `hash_ids` (one id per `hash_block_tokens` tokens of the prompt; equal ids
 * mean equal content). Lines are parsed one at a time so that a trace of
 * millions of lines replays without holding its text.
 *
 * @module
 */
import type { PrefixIds, RequestDraw, RequestSource } from "./source.ts";

/** One parsed trace line. */
export interface TraceRecord {
  /** Arrival, ms since an arbitrary origin. */
  readonly timestamp: number;
  /** Prompt tokens. */
  readonly input: number;
  /** Output tokens. */
  readonly output: number;
  /** Prefix content ids. */
  readonly hashIds?: number[];
}

/** A problem with one field of a line. */
export interface TraceFieldError {
  /** The field. */
  readonly field: string;
  /** What is wrong. */
  readonly message: string;
}

const FIELDS = ["timestamp", "input_length", "output_length"] as const;

/** A CSV cell as a number: plain decimal digits only (no exponent, no sign, no hex). */
const CSV_NUMBER = /^(\d+\.?\d*|\.\d+)$/;

/**
 * A field's number: in JSON a number (not `true`, `[100]` or `"1e1"`), in
 * CSV a plain decimal; NaN otherwise.
 */
function numberOf(v: unknown, csv: boolean): number {
  if (typeof v === "number") return v;
  return csv && typeof v === "string" && CSV_NUMBER.test(v) ? Number(v) : NaN;
}

function checkRecord(v: Record<string, unknown>, csv: boolean): TraceRecord | TraceFieldError {
  for (const f of FIELDS) {
    if (v[f] === undefined || v[f] === "") return { field: f, message: "missing" };
  }
  const ts = numberOf(v.timestamp, csv);
  if (!Number.isFinite(ts) || ts < 0) {
    return { field: "timestamp", message: `expected milliseconds ≥ 0, got ${JSON.stringify(v.timestamp)}` };
  }
  const input = numberOf(v.input_length, csv);
  if (!Number.isInteger(input) || input < 1) {
    return { field: "input_length", message: `expected a positive integer, got ${JSON.stringify(v.input_length)}` };
  }
  const output = numberOf(v.output_length, csv);
  if (!Number.isInteger(output) || output < 1) {
    return { field: "output_length", message: `expected a positive integer, got ${JSON.stringify(v.output_length)}` };
  }
  let ids: unknown = v.hash_ids;
  if (typeof ids === "string") {
    const t = ids.trim();
    try {
      ids = t === "" ? [] : t.startsWith("[") ? JSON.parse(t) : t.split(/[;\s]+/).map(Number);
    } catch {
      return { field: "hash_ids", message: "expected a list of integers" };
    }
  }
  if (ids !== undefined && ids !== null) {
    if (!Array.isArray(ids) || !ids.every((x) => Number.isSafeInteger(x))) {
      return { field: "hash_ids", message: "expected a list of integers" };
    }
    return { timestamp: ts, input, output, hashIds: ids as number[] };
  }
  return { timestamp: ts, input, output };
}

/** Parses one JSONL line. */
export function parseJsonLine(line: string): TraceRecord | TraceFieldError {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch (e) {
    return { field: "(line)", message: `not JSON: ${(e as Error).message.split("\n")[0]}` };
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    return { field: "(line)", message: "expected a JSON object" };
  }
  return checkRecord(v as Record<string, unknown>, false);
}

/** Splits one CSV line (RFC 4180 quoting). */
export function splitCsv(line: string): string[] {
  const out: string[] = [];
  let cur = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      out.push(cur);
      cur = "";
    } else cur += ch;
  }
  out.push(cur);
  return out.map((s) => s.trim());
}

/** Parses one CSV data line against the header's column names. */
export function parseCsvLine(line: string, header: readonly string[]): TraceRecord | TraceFieldError {
  const cells = splitCsv(line);
  if (cells.length !== header.length) {
    return { field: "(line)", message: `expected ${header.length} columns, got ${cells.length}` };
  }
  return checkRecord(Object.fromEntries(header.map((h, i) => [h, cells[i]])), true);
}

/** True when a parse result is an error. */
export function isTraceError(r: TraceRecord | TraceFieldError): r is TraceFieldError {
  return "field" in r;
}

/** How trace timestamps become simulated arrivals. */
export interface TraceTiming {
  /** Timestamp of the first replayed line, ms. */
  readonly origin: number;
  /** Multiplies every gap (time_scale, or the factor that reaches a target request_rate). */
  readonly scale: number;
}

/**
 * Replays parsed records: arrival = (timestamp − origin) × scale, in µs.
 * The records come from a line reader that parses as it goes.
 */
export class TraceSource implements RequestSource {
  readonly count: number;
  #records: Iterator<TraceRecord>;
  #timing: TraceTiming;
  #hashBlockTokens: number;

  /**
   * @param records parsed lines, in file order (already validated)
   * @param count lines to replay
   * @param timing origin and scale
   * @param hashBlockTokens tokens each hash id stands for
   */
  constructor(records: Iterator<TraceRecord>, count: number, timing: TraceTiming, hashBlockTokens: number) {
    this.count = count;
    this.#records = records;
    this.#timing = timing;
    this.#hashBlockTokens = hashBlockTokens;
  }

  next(): RequestDraw {
    const r = this.#records.next();
    if (r.done) throw new RangeError("trace ended early");
    const rec = r.value;
    const arrival = Math.round((rec.timestamp - this.#timing.origin) * this.#timing.scale * 1000);
    const prefix: PrefixIds | undefined = rec.hashIds?.length
      ? { ids: rec.hashIds, blockTokens: this.#hashBlockTokens }
      : undefined;
    return prefix
      ? { arrival, input: rec.input, output: rec.output, prefix }
      : { arrival, input: rec.input, output: rec.output };
  }
}

/** A request as one JSONL trace line (what `--dump_requests` writes): timestamp in ms to the µs. */
export function formatTraceLine(d: RequestDraw): string {
  const ts = (d.arrival / 1000).toFixed(3);
  const ids = d.prefix ? `, "hash_ids": [${d.prefix.ids.join(", ")}]` : "";
  return `{"timestamp": ${ts}, "input_length": ${d.input}, "output_length": ${d.output}${ids}}`;
}
