/**
 * A user's own benchmark results, read into runs the simulator can repeat:
 * vLLM's `bench serve --save-result` JSON (also `benchmark_serving.py`),
 * SGLang's `bench_serving` JSONL (one run per line), NVIDIA GenAI-Perf's
 * `profile_export_genai_perf.json` and AIPerf's `profile_export_aiperf.json`,
 * and a plain CSV; {@link detectFormat} tells them apart by content.
 * A file that is not what it should be is an {@link InputError} at its line.
 *
 * @module
 */
import { InputError } from "../config/errors.ts";
import type { SourceLocation } from "../config/errors.ts";
import { YamlSource } from "../config/source.ts";
import type { PathPart } from "../config/source.ts";

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

/**
 * GenAI-Perf and AIPerf summary exports. Both write one JSON object whose
 * metrics are objects `{unit, avg, p50, p99, min, max, std, …}` keyed by
 * name (`time_to_first_token`, `inter_token_latency`, `output_token_throughput`,
 * `input_sequence_length`, `output_sequence_length`, `request_count`, …) and
 * whose `input_config` holds the settings of the run: GenAI-Perf copies its
 * command-line arguments flat (`concurrency`, `request_rate`, `request_count`),
 * AIPerf nests the load under `input_config.loadgen` (`concurrency`,
 * `request_rate`). Sources of the format: GenAI-Perf's
 * `genai_perf/export_data/json_exporter.py` and its test
 * `tests/test_exporters/test_json_exporter.py` (triton-inference-server/perf_analyzer);
 * AIPerf's `docs/tutorials/working-with-profile-exports.md` (ai-dynamo/aiperf).
 */
const PROFILE_METRICS = ["time_to_first_token", "inter_token_latency", "output_token_throughput"] as const;

/** Seconds per unit of a latency metric. */
const TIME_UNITS: Record<string, number> = { ns: 1e-9, us: 1e-6, "µs": 1e-6, ms: 1e-3, s: 1, sec: 1 };

/** The benchmark tools whose results calibration reads. */
export type MeasurementFormat = "vllm" | "sglang" | "csv" | "genai_perf" | "aiperf";

const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === "object" && !Array.isArray(x);

/** A number, or a numeric string (GenAI-Perf writes some averages as strings). */
function numberOf(x: unknown): number | undefined {
  const n = typeof x === "string" && x.trim() !== "" ? Number(x) : x;
  return typeof n === "number" && Number.isFinite(n) ? n : undefined;
}

/** Whether a parsed JSON object is a GenAI-Perf or AIPerf summary (metric objects with a unit). */
function profileFormat(o: Record<string, unknown>): "genai_perf" | "aiperf" | undefined {
  const hasMetric = [...PROFILE_METRICS, "request_throughput", "output_sequence_length"].some((k) =>
    isObject(o[k]) && typeof (o[k] as Record<string, unknown>).unit === "string"
  );
  if (!hasMetric) return undefined;
  // AIPerf nests its load settings (input_config.loadgen) and stamps the run's start time; GenAI-Perf copies its flat CLI arguments.
  const cfg = o.input_config;
  return (isObject(cfg) && isObject(cfg.loadgen)) || "start_time" in o || "error_summary" in o
    ? "aiperf"
    : "genai_perf";
}

/**
 * Which benchmark tool wrote `text`, judged by content: a JSON object with
 * GenAI-Perf/AIPerf metric objects, a vLLM result (`completed`, token
 * totals), JSON lines of such results (SGLang), or a CSV whose header names
 * {@link CSV_COLUMNS}. Undefined when it is none of them.
 *
 * @example Tell benchmark results apart by content
 * ```ts
 * import { detectFormat } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const csv = "num_prompts,input_len,output_len,request_rate,median_ttft_ms,median_tpot_ms\n4,128,8,inf,20,8\n";
 * const profile = JSON.stringify({
 *   time_to_first_token: { unit: "ms", p50: 30 },
 *   input_sequence_length: { unit: "tokens", avg: 200 },
 *   output_sequence_length: { unit: "tokens", avg: 100 },
 *   input_config: { request_count: 50, concurrency: 8 },
 * });
 * assert.equal(detectFormat(csv), "csv");
 * assert.equal(detectFormat(profile), "genai_perf");
 * assert.equal(detectFormat('{"completed": 10}'), "vllm");
 * assert.equal(detectFormat("hello"), undefined);
 * ```
 */
export function detectFormat(text: string): MeasurementFormat | undefined {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    try {
      const o = JSON.parse(trimmed);
      if (isObject(o)) return profileFormat(o) ?? ("completed" in o ? "vllm" : undefined);
    } catch {
      // Not one object: perhaps JSON lines.
    }
    const first = trimmed.split("\n")[0];
    try {
      const o = JSON.parse(first);
      return isObject(o) && "completed" in o ? "sglang" : undefined;
    } catch {
      return undefined;
    }
  }
  const head = trimmed.split("\n")[0].split(",").map((h) => h.trim());
  return head.includes("num_prompts") && head.includes("request_rate") ? "csv" : undefined;
}

/**
 * Reads a GenAI-Perf `profile_export_genai_perf.json` or AIPerf
 * `profile_export_aiperf.json` (one run): median TTFT (`time_to_first_token.p50`),
 * median TPOT (`inter_token_latency.p50`), output throughput
 * (`output_token_throughput.avg`), the mean prompt and output lengths
 * (`input_sequence_length.avg`, `output_sequence_length.avg`), the request
 * count (`request_count.avg`, else `input_config`'s), and the load: a
 * request rate (Poisson) or a concurrency (requests sent as others finish).
 *
 * @throws {InputError} at the offending key's line when the file is not such an export or lacks what a run needs
 *
 * @example A GenAI-Perf export at concurrency 8
 * ```ts
 * import { readProfileExport } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const profile = JSON.stringify({
 *   time_to_first_token: { unit: "ms", p50: 30 },
 *   input_sequence_length: { unit: "tokens", avg: 200 },
 *   output_sequence_length: { unit: "tokens", avg: 100 },
 *   input_config: { request_count: 50, concurrency: 8 },
 * });
 * const [run] = readProfileExport("profile.json", profile);
 * assert.equal(run.requests, 50);
 * assert.equal(run.maxConcurrency, 8);
 * assert.deepEqual(run.metrics, { ttft: 0.03 });
 * ```
 */
export function readProfileExport(file: string, text: string): MeasuredRun[] {
  const o = parseJson(text, { file });
  // JSON is YAML: its parse gives every key's line for messages.
  let src: YamlSource | undefined;
  try {
    src = new YamlSource(file, text);
  } catch {
    src = undefined;
  }
  const fail = (path: readonly PathPart[], msg: string): never => {
    if (src) src.fail(path, msg);
    throw new InputError({ file, line: 1, col: 1 }, msg);
  };
  if (!profileFormat(o)) {
    fail(
      [],
      "not a GenAI-Perf or AIPerf summary: expected metric objects such as time_to_first_token: {unit, avg, p50}",
    );
  }
  /** A statistic of a metric object, checked. */
  const stat = (name: string, key: string, required: boolean): number | undefined => {
    const m = o[name];
    if (m === undefined || m === null) {
      return required ? fail([], `missing '${name}' (expected {unit, ${key}, …})`) : undefined;
    }
    if (!isObject(m)) return fail([name], `expected a metric object {unit, ${key}, …}, got ${JSON.stringify(m)}`);
    const v = numberOf(m[key]);
    if (v === undefined) {
      if (!required && m[key] === undefined) return undefined;
      return fail(
        [name, ...(m[key] === undefined ? [] : [key])],
        `expected '${key}' as a number, got ${JSON.stringify(m[key])}`,
      );
    }
    if (!(v > 0)) return fail([name, key], `expected a positive ${name}.${key}, got ${v}`);
    return v;
  };
  const seconds = (name: string): number | undefined => {
    const v = stat(name, "p50", false);
    if (v === undefined) return undefined;
    const unit = String((o[name] as Record<string, unknown>).unit ?? "");
    const scale = TIME_UNITS[unit];
    if (scale === undefined) {
      fail([name, "unit"], `expected a time unit (${Object.keys(TIME_UNITS).join(", ")}), got "${unit}"`);
    }
    return v * scale;
  };
  const metrics: MeasuredMetrics = {};
  const ttft = seconds("time_to_first_token");
  const tpot = seconds("inter_token_latency");
  const tput = stat("output_token_throughput", "avg", false);
  if (ttft !== undefined) metrics.ttft = ttft;
  if (tpot !== undefined) metrics.tpot = tpot;
  if (tput !== undefined) metrics.throughput = tput;
  if (Object.keys(metrics).length === 0) {
    fail([], "no metric to compare: expected time_to_first_token, inter_token_latency or output_token_throughput");
  }
  const input = stat("input_sequence_length", "avg", true)!;
  const output = stat("output_sequence_length", "avg", true)!;
  const cfg = isObject(o.input_config) ? o.input_config : {};
  const load = isObject(cfg.loadgen) ? cfg.loadgen : cfg;
  const loadPath: PathPart[] = isObject(cfg.loadgen) ? ["input_config", "loadgen"] : ["input_config"];
  const counted = stat("request_count", "avg", false);
  const configured = numberOf(load.request_count);
  const requests = counted ?? (configured !== undefined && configured > 0 ? configured : undefined) ??
    fail([], "missing 'request_count' (expected {unit, avg} or input_config's request_count)");
  const rate = numberOf(load.request_rate);
  const concurrency = numberOf(load.concurrency);
  if (load.request_rate !== undefined && load.request_rate !== null && !(rate !== undefined && rate > 0)) {
    fail([...loadPath, "request_rate"], `expected a positive request_rate, got ${JSON.stringify(load.request_rate)}`);
  }
  if (load.concurrency !== undefined && load.concurrency !== null && !(concurrency !== undefined && concurrency > 0)) {
    fail([...loadPath, "concurrency"], `expected a positive concurrency, got ${JSON.stringify(load.concurrency)}`);
  }
  if (rate === undefined && concurrency === undefined) {
    fail(isObject(o.input_config) ? loadPath : [], "expected the load in input_config: concurrency or request_rate");
  }
  return [{
    where: file,
    requests: Math.round(requests),
    input,
    output,
    rate: rate ?? Infinity,
    ...(concurrency !== undefined ? { maxConcurrency: concurrency } : {}),
    metrics,
  }];
}

/**
 * Reads a results file of any supported tool, chosen by {@link detectFormat}.
 *
 * @param expected the format the manifest declared, if any (it picks the reader; a GenAI-Perf/AIPerf export
 *   declared as another tool's, or the reverse, is an error naming both)
 * @throws {InputError} when the format is unknown or not the declared one, or the file is bad
 *
 * @example Read a CSV of runs
 * ```ts
 * import { readMeasurements } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const csv = "num_prompts,input_len,output_len,request_rate,median_ttft_ms,median_tpot_ms\n4,128,8,inf,20,8\n";
 * const [run] = readMeasurements("r.csv", csv);
 * assert.equal(run.where, "r.csv:2");
 * assert.equal(run.rate, Infinity);
 * assert.deepEqual(run.metrics, { ttft: 0.02, tpot: 0.008 });
 * ```
 */
export function readMeasurements(file: string, text: string, expected?: MeasurementFormat): MeasuredRun[] {
  const found = detectFormat(text);
  const profile = (f: MeasurementFormat | undefined) => f === "genai_perf" || f === "aiperf";
  if (expected && found && profile(found) !== profile(expected)) {
    throw new InputError({ file, line: 1, col: 1 }, `declared as ${expected}, but the content is a ${found} file`);
  }
  const format = expected ?? found;
  switch (format) {
    case "vllm":
      return readVllmResult(file, text);
    case "sglang":
      return readSglangResults(file, text);
    case "csv":
      return readMeasurementCsv(file, text);
    case "genai_perf":
    case "aiperf":
      return readProfileExport(file, text);
    default:
      throw new InputError(
        { file, line: 1, col: 1 },
        "unknown results format: expected vLLM --save-result JSON, SGLang bench_serving JSONL, a GenAI-Perf or AIPerf profile export JSON, or a measurement CSV",
      );
  }
}
