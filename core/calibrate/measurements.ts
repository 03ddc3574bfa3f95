/**
 * A user's own benchmark results, read into runs the simulator can repeat:
 * vLLM's `bench serve --save-result` JSON (also `benchmark_serving.py`),
 * SGLang's `bench_serving` JSONL (one run per line), and a plain CSV.
 * A file that is not what it should be is an {@link InputError} at its line.
 *
 * @module
 */
import { InputError } from "../config/errors.ts";
import type { SourceLocation } from "../config/errors.ts";

/** Metrics a run may report (seconds, or output tokens per second). */
export interface MeasuredMetrics {
  /** Median TTFT, s. */
  ttft?: number;
  /** Median TPOT, s. */
  tpot?: number;
  /** Output tokens per second over the run. */
  throughput?: number;
}

/** One measured benchmark run. */
export interface MeasuredRun {
  /** `file` or `file:line`, for messages. */
  readonly where: string;
  /** Requests completed. */
  readonly requests: number;
  /** Mean prompt tokens. */
  readonly input: number;
  /** Mean output tokens. */
  readonly output: number;
  /** Requests per second (Infinity: all at once). */
  readonly rate: number;
  /** The client's max concurrency, when it set one. */
  readonly maxConcurrency?: number;
  /** What was measured. */
  readonly metrics: MeasuredMetrics;
}

const positive = (x: unknown) => typeof x === "number" && Number.isFinite(x) && x > 0;

/**
 * One run from a vLLM or SGLang result object: the totals give the mean
 * lengths; medians are in ms.
 */
function fromBenchObject(o: Record<string, unknown>, at: SourceLocation): MeasuredRun {
  const where = at.line ? `${at.file}:${at.line}` : at.file;
  const fail = (msg: string): never => {
    throw new InputError(at, msg);
  };
  const completed = o.completed;
  if (!positive(completed)) fail(`expected 'completed' (requests finished) as a positive number`);
  for (const k of ["total_input_tokens", "total_output_tokens"]) {
    if (!positive(o[k])) fail(`expected '${k}' as a positive number`);
  }
  const n = completed as number;
  const rateRaw = o.request_rate;
  const rate = rateRaw === "inf" || rateRaw === null || rateRaw === undefined || rateRaw === Infinity
    ? Infinity
    : positive(rateRaw)
    ? rateRaw as number
    : fail(`expected 'request_rate' as a positive number or "inf", got ${JSON.stringify(rateRaw)}`);
  const mc = o.max_concurrency;
  const metrics: MeasuredMetrics = {};
  if (positive(o.median_ttft_ms)) metrics.ttft = (o.median_ttft_ms as number) / 1000;
  if (positive(o.median_tpot_ms)) metrics.tpot = (o.median_tpot_ms as number) / 1000;
  if (positive(o.output_throughput)) metrics.throughput = o.output_throughput as number;
  if (Object.keys(metrics).length === 0) {
    fail("no metric to compare: expected median_ttft_ms, median_tpot_ms or output_throughput");
  }
  return {
    where,
    requests: n,
    input: (o.total_input_tokens as number) / n,
    output: (o.total_output_tokens as number) / n,
    rate,
    ...(positive(mc) ? { maxConcurrency: mc as number } : {}),
    metrics,
  };
}

function parseJson(text: string, at: SourceLocation): Record<string, unknown> {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch (e) {
    throw new InputError(at, `not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (o === null || typeof o !== "object" || Array.isArray(o)) {
    throw new InputError(at, "expected a JSON object of benchmark results");
  }
  return o as Record<string, unknown>;
}

/** Reads vLLM's `--save-result` JSON (one run). */
export function readVllmResult(file: string, text: string): MeasuredRun[] {
  return [fromBenchObject(parseJson(text, { file }), { file })];
}

/** Reads SGLang's `bench_serving` JSONL (one run per line; blank lines skipped). */
export function readSglangResults(file: string, text: string): MeasuredRun[] {
  const runs: MeasuredRun[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    const at = { file, line: i + 1, col: 1 };
    runs.push(fromBenchObject(parseJson(line, at), at));
  });
  if (runs.length === 0) throw new InputError({ file }, "no benchmark run in the file");
  return runs;
}

/** The columns of a measurement CSV. */
export const CSV_COLUMNS = [
  "num_prompts",
  "input_len",
  "output_len",
  "request_rate",
  "max_concurrency",
  "median_ttft_ms",
  "median_tpot_ms",
  "output_throughput",
] as const;

/**
 * Reads a CSV with a header of {@link CSV_COLUMNS} (any order; the metric
 * columns and max_concurrency may be empty; request_rate may be `inf`).
 */
export function readMeasurementCsv(file: string, text: string): MeasuredRun[] {
  const lines = text.split("\n");
  const head = lines[0].split(",").map((h) => h.trim());
  for (const c of ["num_prompts", "input_len", "output_len", "request_rate"]) {
    if (!head.includes(c)) throw new InputError({ file, line: 1, col: 1 }, `missing column '${c}'`);
  }
  const runs: MeasuredRun[] = [];
  for (let i = 1; i < lines.length; i++) {
    if (lines[i].trim() === "") continue;
    const cells = lines[i].split(",").map((c) => c.trim());
    const at = (c: string) => cells[head.indexOf(c)] ?? "";
    const where = `${file}:${i + 1}`;
    const num = (c: string, optional: boolean): number | undefined => {
      const v = at(c);
      if (v === "" && optional) return undefined;
      const x = c === "request_rate" && v === "inf" ? Infinity : Number(v);
      if (!(x > 0) || Number.isNaN(x)) {
        throw new InputError({ file, line: i + 1, col: 1 }, `${c}: expected a positive number, got '${v}'`);
      }
      return x;
    };
    const metrics: MeasuredMetrics = {};
    const ttft = num("median_ttft_ms", true);
    const tpot = num("median_tpot_ms", true);
    const tput = num("output_throughput", true);
    if (ttft !== undefined) metrics.ttft = ttft / 1000;
    if (tpot !== undefined) metrics.tpot = tpot / 1000;
    if (tput !== undefined) metrics.throughput = tput;
    if (Object.keys(metrics).length === 0) {
      throw new InputError(
        { file, line: i + 1, col: 1 },
        "no metric: fill median_ttft_ms, median_tpot_ms or output_throughput",
      );
    }
    const mc = num("max_concurrency", true);
    runs.push({
      where,
      requests: num("num_prompts", false)!,
      input: num("input_len", false)!,
      output: num("output_len", false)!,
      rate: num("request_rate", false)!,
      ...(mc !== undefined ? { maxConcurrency: mc } : {}),
      metrics,
    });
  }
  if (runs.length === 0) throw new InputError({ file }, "no benchmark run in the file");
  return runs;
}
