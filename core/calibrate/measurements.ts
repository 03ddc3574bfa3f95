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
import { describeValue, InputError, quoteString } from "../config/errors.ts";
import type { SourceLocation } from "../config/errors.ts";
import { TASK_LIMITS } from "../config/limits.ts";
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
  /**
   * Where each of the fields above came from in the user's file (line,
   * column and the file's own key, e.g. `completed`), so that a run the
   * simulator cannot repeat is an error at that key, not at the
   * configuration calibration makes of it.
   */
  readonly origin?: Readonly<
    Partial<Record<"requests" | "input" | "output" | "rate" | "maxConcurrency", SourceLocation>>
  >;
}

/**
 * The range of a measured latency, in seconds (1 ns to 1e9 s, about 30
 * years), and of an output throughput, in tokens per second: far beyond any
 * real run on both sides; outside, the unit is wrong, and the fit's ratios
 * of simulated to measured figures would overflow.
 */
const METRIC_RANGE = { seconds: { min: 1e-9, max: 1e9 }, throughput: { min: 1e-9, max: 1e12 } } as const;

/** Texts longer than this are not parsed again as YAML for the positions of their keys (only the file is named). */
const LOCATE_CHARS = 16 * 2 ** 20;

/** A metric's value checked against {@link METRIC_RANGE}; the message when it is out of range. */
function metricProblem(
  kind: keyof typeof METRIC_RANGE,
  value: number,
  scale: number,
  unit: string,
): string | undefined {
  const { min, max } = METRIC_RANGE[kind];
  const x = value * scale;
  if (x >= min && x <= max) return undefined;
  const show = (v: number) => {
    const x = Number((v / scale).toPrecision(3));
    return x >= 1e6 || x < 1e-3 ? x.toExponential().replace("e+", "e") : String(x);
  };
  return `expected a figure from ${show(min)} to ${show(max)} ${unit}, got ${value}`;
}

/**
 * Where the keys of one JSON object are: line and column from a YAML parse
 * of its text (JSON is YAML), moved down by `lineOffset` lines; the file
 * alone (with the key) when the text does not parse as YAML (duplicate
 * keys, say) or is too large to parse twice.
 */
function keyLocator(
  file: string,
  text: string,
  lineOffset = 0,
): (path: readonly PathPart[]) => SourceLocation {
  let src: YamlSource | undefined;
  if (text.length <= LOCATE_CHARS) {
    try {
      src = new YamlSource(file, text);
    } catch {
      src = undefined;
    }
  }
  const keyPath = (path: readonly PathPart[]) =>
    path.map((p, i) => (typeof p === "number" ? `[${p}]` : `${i ? "." : ""}${p}`)).join("");
  return (path) => {
    if (!src) return { file, line: lineOffset + 1, col: 1, keyPath: keyPath(path) };
    const at = src.locate(path);
    return { ...at, line: (at.line ?? 1) + lineOffset };
  };
}

const isPositiveInt = (x: unknown): x is number => typeof x === "number" && Number.isInteger(x) && x >= 1;
const isPositive = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x) && x > 0;

/**
 * One run from a vLLM or SGLang result object: the totals give the mean
 * lengths; medians are in ms. A metric that is absent, null or 0 was not
 * measured (vLLM writes a TPOT of 0 for one-token outputs); any other value
 * must be a positive number in range.
 */
function fromBenchObject(
  o: Record<string, unknown>,
  where: string,
  locate: (path: readonly PathPart[]) => SourceLocation,
): MeasuredRun {
  const fail = (key: string | undefined, msg: string): never => {
    throw new InputError(locate(key === undefined ? [] : [key]), msg);
  };
  const completed = o.completed;
  if (!isPositiveInt(completed)) {
    fail("completed", `expected a positive integer (requests finished), got ${describeValue(completed)}`);
  }
  for (const k of ["total_input_tokens", "total_output_tokens"]) {
    if (!isPositive(o[k])) fail(k, `expected a positive number of tokens, got ${describeValue(o[k])}`);
  }
  const n = completed as number;
  const rateRaw = o.request_rate;
  const rate = rateRaw === "inf" || rateRaw === null || rateRaw === undefined
    ? Infinity
    : isPositive(rateRaw)
    ? rateRaw
    : fail("request_rate", `expected a positive number or "inf", got ${describeValue(rateRaw)}`);
  const mc = o.max_concurrency;
  if (mc !== undefined && mc !== null && !isPositiveInt(mc)) {
    fail("max_concurrency", `expected a positive integer or null, got ${describeValue(mc)}`);
  }
  const metric = (key: string, kind: keyof typeof METRIC_RANGE, scale: number, unit: string): number | undefined => {
    const v = o[key];
    if (v === undefined || v === null || v === 0) return undefined;
    if (!isPositive(v)) return fail(key, `expected a positive number (${unit}), got ${describeValue(v)}`);
    const problem = metricProblem(kind, v, scale, unit);
    return problem ? fail(key, problem) : v * scale;
  };
  const metrics: MeasuredMetrics = {};
  const ttft = metric("median_ttft_ms", "seconds", 1e-3, "ms");
  const tpot = metric("median_tpot_ms", "seconds", 1e-3, "ms");
  const throughput = metric("output_throughput", "throughput", 1, "tokens/s");
  if (ttft !== undefined) metrics.ttft = ttft;
  if (tpot !== undefined) metrics.tpot = tpot;
  if (throughput !== undefined) metrics.throughput = throughput;
  if (Object.keys(metrics).length === 0) {
    fail(undefined, "no metric to compare: expected median_ttft_ms, median_tpot_ms or output_throughput");
  }
  const origin = {
    requests: locate(["completed"]),
    input: locate(["total_input_tokens"]),
    output: locate(["total_output_tokens"]),
    ...(rate !== Infinity ? { rate: locate(["request_rate"]) } : {}),
    ...(isPositiveInt(mc) ? { maxConcurrency: locate(["max_concurrency"]) } : {}),
  };
  return {
    where,
    requests: n,
    input: (o.total_input_tokens as number) / n,
    output: (o.total_output_tokens as number) / n,
    rate,
    ...(isPositiveInt(mc) ? { maxConcurrency: mc } : {}),
    metrics,
    origin,
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

/** Fails past {@link TASK_LIMITS}' `fitEntries` runs in one file: a fit takes at most that many figures. */
function checkRunCount(count: number, at: SourceLocation): void {
  if (count <= TASK_LIMITS.fitEntries) return;
  throw new InputError(
    at,
    `more than ${TASK_LIMITS.fitEntries} runs in one file; a fit takes at most ${TASK_LIMITS.fitEntries} measured figures`,
  );
}

/** Reads vLLM's `--save-result` JSON (one run). */
export function readVllmResult(file: string, text: string): MeasuredRun[] {
  return [fromBenchObject(parseJson(text, { file }), file, keyLocator(file, text))];
}

/** Reads SGLang's `bench_serving` JSONL (one run per line; blank lines skipped). */
export function readSglangResults(file: string, text: string): MeasuredRun[] {
  const runs: MeasuredRun[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    const at = { file, line: i + 1, col: 1 };
    checkRunCount(runs.length + 1, at);
    runs.push(fromBenchObject(parseJson(line, at), `${file}:${i + 1}`, keyLocator(file, line, i)));
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
 * A cell that is not what its column takes is an error at its line and
 * column, named by its column.
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
    const raw = lines[i].split(",");
    const cells = raw.map((c) => c.trim());
    const index = (c: string) => head.indexOf(c);
    const at = (c: string) => cells[index(c)] ?? "";
    /** The cell of column `c`: its line, column (1-based, past the spaces) and the column's name. */
    const loc = (c: string): SourceLocation => {
      const k = index(c);
      let col = 1;
      for (let j = 0; j < Math.min(k, raw.length); j++) col += raw[j].length + 1;
      const lead = k < raw.length ? raw[k].length - raw[k].trimStart().length : 0;
      return { file, line: i + 1, col: col + lead, keyPath: c };
    };
    const where = `${file}:${i + 1}`;
    const fail = (c: string, msg: string): never => {
      throw new InputError(loc(c), msg);
    };
    checkRunCount(runs.length + 1, { file, line: i + 1, col: 1 });
    const num = (c: string, optional: boolean, integer = false): number | undefined => {
      const v = at(c);
      if (v === "" && optional) return undefined;
      const x = c === "request_rate" && v === "inf" ? Infinity : v === "" ? NaN : Number(v);
      const ok = c === "request_rate" ? x > 0 : Number.isFinite(x) && x > 0 && (!integer || Number.isInteger(x));
      if (!ok) fail(c, `expected a positive ${integer ? "integer" : "number"}, got ${quoteString(v)}`);
      return x;
    };
    const metric = (c: string, kind: keyof typeof METRIC_RANGE, scale: number, unit: string) => {
      const x = num(c, true);
      if (x === undefined) return undefined;
      const problem = metricProblem(kind, x, scale, unit);
      return problem ? fail(c, problem) : x * scale;
    };
    const metrics: MeasuredMetrics = {};
    const ttft = metric("median_ttft_ms", "seconds", 1e-3, "ms");
    const tpot = metric("median_tpot_ms", "seconds", 1e-3, "ms");
    const tput = metric("output_throughput", "throughput", 1, "tokens/s");
    if (ttft !== undefined) metrics.ttft = ttft;
    if (tpot !== undefined) metrics.tpot = tpot;
    if (tput !== undefined) metrics.throughput = tput;
    if (Object.keys(metrics).length === 0) {
      throw new InputError(
        { file, line: i + 1, col: 1 },
        "no metric: fill median_ttft_ms, median_tpot_ms or output_throughput",
      );
    }
    const mc = num("max_concurrency", true, true);
    runs.push({
      where,
      requests: num("num_prompts", false, true)!,
      input: num("input_len", false)!,
      output: num("output_len", false)!,
      rate: num("request_rate", false)!,
      ...(mc !== undefined ? { maxConcurrency: mc } : {}),
      metrics,
      origin: {
        requests: loc("num_prompts"),
        input: loc("input_len"),
        output: loc("output_len"),
        rate: loc("request_rate"),
        ...(mc !== undefined ? { maxConcurrency: loc("max_concurrency") } : {}),
      },
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
const TIME_UNITS: Readonly<Record<string, number>> = { ns: 1e-9, us: 1e-6, "µs": 1e-6, ms: 1e-3, s: 1, sec: 1 };

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
  const locate = keyLocator(file, text);
  const fail = (path: readonly PathPart[], msg: string): never => {
    throw new InputError(locate(path), msg);
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
    if (!isObject(m)) return fail([name], `expected a metric object {unit, ${key}, …}, got ${describeValue(m)}`);
    const v = numberOf(m[key]);
    if (v === undefined) {
      if (!required && m[key] === undefined) return undefined;
      return fail(
        [name, ...(m[key] === undefined ? [] : [key])],
        `expected '${key}' as a number, got ${describeValue(m[key])}`,
      );
    }
    if (!(v > 0)) return fail([name, key], `expected a positive ${name}.${key}, got ${v}`);
    return v;
  };
  const seconds = (name: string): number | undefined => {
    const v = stat(name, "p50", false);
    if (v === undefined) return undefined;
    const raw = (o[name] as Record<string, unknown>).unit;
    const unit = typeof raw === "string" ? raw : "";
    // Own keys only: a unit such as 'constructor' is no unit.
    if (!Object.hasOwn(TIME_UNITS, unit)) {
      fail(
        [name, "unit"],
        `expected a time unit (${Object.keys(TIME_UNITS).join(", ")}), got ${describeValue(raw ?? null)}`,
      );
    }
    const problem = metricProblem("seconds", v, TIME_UNITS[unit], unit);
    return problem ? fail([name, "p50"], problem) : v * TIME_UNITS[unit];
  };
  const metrics: MeasuredMetrics = {};
  const ttft = seconds("time_to_first_token");
  const tpot = seconds("inter_token_latency");
  const tput = stat("output_token_throughput", "avg", false);
  if (tput !== undefined) {
    const problem = metricProblem("throughput", tput, 1, "tokens/s");
    if (problem) fail(["output_token_throughput", "avg"], problem);
  }
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
  const requestsPath = counted !== undefined ? ["request_count", "avg"] : [...loadPath, "request_count"];
  if (!(Math.round(requests) >= 1)) fail(requestsPath, `expected at least one request, got ${requests}`);
  const rate = numberOf(load.request_rate);
  const concurrency = numberOf(load.concurrency);
  if (load.request_rate !== undefined && load.request_rate !== null && !(rate !== undefined && rate > 0)) {
    fail([...loadPath, "request_rate"], `expected a positive request_rate, got ${describeValue(load.request_rate)}`);
  }
  if (
    load.concurrency !== undefined && load.concurrency !== null &&
    !(concurrency !== undefined && Number.isInteger(concurrency) && concurrency > 0)
  ) {
    fail(
      [...loadPath, "concurrency"],
      `expected a positive integer concurrency, got ${describeValue(load.concurrency)}`,
    );
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
    origin: {
      requests: locate(requestsPath),
      input: locate(["input_sequence_length", "avg"]),
      output: locate(["output_sequence_length", "avg"]),
      ...(rate !== undefined ? { rate: locate([...loadPath, "request_rate"]) } : {}),
      ...(concurrency !== undefined ? { maxConcurrency: locate([...loadPath, "concurrency"]) } : {}),
    },
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
