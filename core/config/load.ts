/**
 * Reads the user's files: the instance file(s), the common file, and what
 * they point to (a local model `config.json`, a device file). This and
 * `cli.ts` are the only places that touch the filesystem.
 *
 * @module
 */
import { dirname, isAbsolute, join } from "node:path";
import { DEVICE_CATALOG } from "../hardware/devices.ts";
import type { DeviceSpec } from "../hardware/device.ts";
import { MODEL_ALIASES, MODEL_CATALOG } from "../model/catalog.ts";
import type { HfConfig } from "../model/catalog.ts";
import { modelSpecFromHf } from "../model/model_spec.ts";
import type { ModelSpec } from "../model/model_spec.ts";
import { DeviceFileSchema, deviceFromFile } from "./device_schema.ts";
import { clip, InputError } from "./errors.ts";
import { CommonFileSchema, DEFAULT_LIMITS, HfConfigSchema, IGNORED_MODEL_KEYS, InstanceFileSchema } from "./schema.ts";
import type { CommonFile, InstanceGroupConfig, RunLimits, TraceLoadGen } from "./types.ts";
import { isTraceError, parseCsvLine, parseJsonLine, splitCsv } from "../workload/trace.ts";
import type { TraceFieldError, TraceRecord } from "../workload/trace.ts";
import type { PathPart } from "./source.ts";
import { YamlSource } from "./source.ts";
import { closest, validate } from "./validate.ts";
import { showLimit } from "./errors.ts";

/** How files are read; tests pass an in-memory map. */
export interface FileSystem {
  /** The text of a file; throws Deno.errors.NotFound (or any error) when it cannot. */
  readText(path: string): string;
  /** True when `path` is a directory. */
  isDirectory(path: string): boolean;
  /** The lines of a file, read as they are consumed (default: `readText` split). */
  lines?(path: string): Iterable<string>;
}

/** Size limits of what the real file system reads. */
export interface ReadLimits {
  /** Largest file read whole (YAML, config.json, device and result files), bytes. */
  readonly maxFileBytes: number;
  /** Largest file read line by line (a trace), bytes. */
  readonly maxStreamBytes: number;
  /** Longest line of a file read line by line, characters. */
  readonly maxLineChars: number;
}

/** The defaults: 256 MiB files, 64 GiB traces, lines of 16 Mi characters. */
export const DEFAULT_READ_LIMITS: ReadLimits = {
  maxFileBytes: 256 * 2 ** 20,
  maxStreamBytes: 64 * 2 ** 30,
  maxLineChars: 16 * 2 ** 20,
};

const mib = (b: number) =>
  b < 2 ** 20
    ? `${b.toLocaleString("en-US")} bytes`
    : `${Number((b / 2 ** 20).toPrecision(3)).toLocaleString("en-US")} MiB`;

/**
 * The regular file at `path`, or an error saying why it is not read: a
 * FIFO, device or socket (which could block or never end) or a file above
 * `maxBytes`. Checked before opening: opening a FIFO blocks.
 */
function checkRegular(path: string, maxBytes: number): void {
  const st = Deno.statSync(path);
  if (st.isDirectory) throw new Deno.errors.IsADirectory(path);
  if (!st.isFile) {
    const kind = st.isFifo ? "a FIFO" : st.isCharDevice || st.isBlockDevice ? "a device" : "not a regular file";
    throw new Error(`${kind.startsWith("a ") ? `is ${kind}` : kind}; only regular files are read`);
  }
  if (st.size > maxBytes) throw new Error(`file of ${mib(st.size)} is larger than the limit of ${mib(maxBytes)}`);
}

/** Thrown by the line reader for a line over the limit, with its 1-based number. */
export class LongLineError extends Error {
  /** The line. */
  readonly line: number;
  /**
   * @param line the line number
   * @param max the limit, characters
   */
  constructor(line: number, max: number) {
    super(`line longer than ${max.toLocaleString("en-US")} characters (a trace holds one request per line)`);
    this.name = "LongLineError";
    this.line = line;
  }
}

/**
 * Streams a file's lines in 1 MiB chunks: time linear in its size, memory
 * bounded by the longest line (at most `maxLineChars`, else {@link LongLineError}).
 */
function* fileLines(path: string, limits: ReadLimits): Generator<string> {
  checkRegular(path, limits.maxStreamBytes);
  const f = Deno.openSync(path, { read: true });
  try {
    const buf = new Uint8Array(1 << 20);
    const dec = new TextDecoder();
    let pending: string[] = []; // pieces of the line not yet ended
    let pendingLen = 0;
    let lineNo = 0;
    const take = (piece: string): string => {
      const line = pending.length ? pending.join("") + piece : piece;
      pending = [];
      pendingLen = 0;
      lineNo++;
      if (line.length > limits.maxLineChars) throw new LongLineError(lineNo, limits.maxLineChars);
      return line.endsWith("\r") ? line.slice(0, -1) : line;
    };
    const add = (piece: string) => {
      if (piece === "") return;
      pending.push(piece);
      pendingLen += piece.length;
      if (pendingLen > limits.maxLineChars) throw new LongLineError(lineNo + 1, limits.maxLineChars);
    };
    for (;;) {
      const n = f.readSync(buf);
      if (n === null) break;
      const text = dec.decode(buf.subarray(0, n), { stream: true });
      let start = 0;
      for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", start)) {
        yield take(text.slice(start, nl));
        start = nl + 1;
      }
      add(text.slice(start));
    }
    add(dec.decode());
    if (pendingLen > 0) yield take("");
  } finally {
    f.close();
  }
}

/** The real file system, with these size limits. */
export function realFileSystem(limits: ReadLimits = DEFAULT_READ_LIMITS): FileSystem {
  return {
    readText: (p) => {
      checkRegular(p, limits.maxFileBytes);
      return Deno.readTextFileSync(p);
    },
    isDirectory: (p) => {
      try {
        return Deno.statSync(p).isDirectory;
      } catch {
        return false;
      }
    },
    lines: (p) => fileLines(p, limits),
  };
}

/** The real filesystem (default limits: {@link DEFAULT_READ_LIMITS}). */
export const denoFileSystem: FileSystem = realFileSystem();

/** A validated trace: what the first pass learned, and a way to read it again. */
export interface LoadedTrace {
  /** The trace file as resolved. */
  readonly file: string;
  /** Lines to replay (after `num_requests`). */
  readonly count: number;
  /** First timestamp, ms. */
  readonly origin: number;
  /** Last replayed timestamp, ms. */
  readonly last: number;
  /** Longest prompt. */
  readonly maxInput: number;
  /** Longest output. */
  readonly maxOutput: number;
  /** Mean prompt and output lengths. */
  readonly meanInput: number;
  /** Mean output length. */
  readonly meanOutput: number;
  /** Parses the file again, line by line. */
  records(): Iterator<TraceRecord>;
}

function* traceRecords(
  lines: Iterable<string>,
  csv: boolean,
  limit: number,
  fail?: (line: number, e: TraceFieldError) => never,
  check?: (r: TraceRecord, n: number, line: number) => void,
): Generator<TraceRecord> {
  let header: string[] | undefined;
  let n = 0;
  let lineNo = 0;
  let prev = -Infinity;
  for (const raw of lines) {
    lineNo++;
    if (n >= limit) return;
    const line = raw.trim();
    if (line === "") continue;
    if (csv && !header) {
      header = splitCsv(line);
      for (const f of ["timestamp", "input_length", "output_length"]) {
        if (!header.includes(f)) fail?.(lineNo, { field: f, message: "missing column in the CSV header" });
      }
      continue;
    }
    const r = header ? parseCsvLine(line, header) : parseJsonLine(line); // a header only in a CSV
    if (isTraceError(r)) {
      if (fail) fail(lineNo, r);
      throw new SyntaxError(`line ${lineNo}: ${r.field}: ${r.message}`);
    }
    if (r.timestamp < prev) {
      fail?.(lineNo, { field: "timestamp", message: `goes back in time (${r.timestamp} after ${prev})` });
    }
    prev = r.timestamp;
    check?.(r, n, lineNo);
    n++;
    yield r;
  }
}

/**
 * Reads a trace once to validate every line and learn its size and span.
 *
 * @throws {InputError} at the first malformed line (file:line and the field)
 */
export function loadTrace(
  src: YamlSource,
  lg: TraceLoadGen,
  fs: FileSystem,
  limits: RunLimits = DEFAULT_LIMITS,
): LoadedTrace {
  const file = resolveFrom(src.file, lg.trace_path);
  const csv = (lg.format ?? (/\.csv$/i.test(file) ? "csv" : "jsonl")) === "csv";
  const lines = () => {
    try {
      return fs.lines ? fs.lines(file) : fs.readText(file).split("\n");
    } catch (e) {
      return src.fail(["load_gen", "trace_path"], `cannot read ${file}: ${why(e)}`);
    }
  };
  const limit = lg.num_requests ?? Infinity;
  const fail = (line: number, e: TraceFieldError): never => {
    throw new InputError({ file, line, col: 1, keyPath: e.field }, e.message);
  };
  let count = 0, origin = 0, last = 0, maxInput = 0, maxOutput = 0, sumIn = 0, sumOut = 0;
  // Bounds as the lines come: request count, and (unless request_rate rescales them) the span of the arrivals.
  const check = (r: TraceRecord, n: number, line: number) => {
    if (n >= limits.max_requests) {
      const limit = showLimit(limits.max_requests);
      const message =
        `more than limits.max_requests (${limit}) requests; replay fewer with load_gen.num_requests or raise the limit in the common file`;
      fail(line, { field: "(line)", message });
    }
    const span = n === 0 ? 0 : (r.timestamp - origin) * lg.time_scale / 1000;
    if (lg.request_rate === undefined && !(span <= limits.max_arrival_seconds)) {
      const limit = showLimit(limits.max_arrival_seconds);
      const after = `${Number(span.toPrecision(3))} s after the first line (time_scale ${lg.time_scale})`;
      fail(line, {
        field: "timestamp",
        message: `${r.timestamp} ms is ${after}, more than limits.max_arrival_seconds (${limit} s)`,
      });
    }
  };
  try {
    for (const r of traceRecords(lines(), csv, limit, fail, check)) {
      if (count === 0) origin = r.timestamp;
      last = r.timestamp;
      count++;
      maxInput = Math.max(maxInput, r.input);
      maxOutput = Math.max(maxOutput, r.output);
      sumIn += r.input;
      sumOut += r.output;
    }
  } catch (e) {
    if (e instanceof InputError) throw e;
    if (e instanceof LongLineError) throw new InputError({ file, line: e.line, col: 1 }, e.message);
    src.fail(["load_gen", "trace_path"], `cannot read ${file}: ${why(e)}`);
  }
  if (count === 0) src.fail(["load_gen", "trace_path"], `${file} holds no requests`);
  return {
    file,
    count,
    origin,
    last,
    maxInput,
    maxOutput,
    meanInput: sumIn / count,
    meanOutput: sumOut / count,
    records: () => traceRecords(lines(), csv, count)[Symbol.iterator](),
  };
}

/** One instance group with where it came from. */
export interface LoadedGroup {
  /** The group's validated settings. */
  readonly config: InstanceGroupConfig;
  /** The file it came from (for error positions). */
  readonly source: YamlSource;
  /** Path of the group in its file: `["instance_groups", i]`. */
  readonly path: readonly PathPart[];
  /** The resolved accelerator. */
  readonly device: DeviceSpec;
  /**
   * Where it came from: the `catalog` (it takes the calibrated constants and
   * its engine's host costs), a device `file` (taken as it is: its constants
   * are the user's own), or `given` by the caller (a calibration's trial
   * device, taken as it is).
   */
  readonly deviceOrigin: "catalog" | "file" | "given";
}

/** The validated input of one run. */
export interface LoadedConfig {
  /** The validated trace, for `load_gen_type: trace`. */
  readonly trace?: LoadedTrace;
  /** All instance groups of all instance files, in order. */
  readonly groups: readonly LoadedGroup[];
  /** The validated common file. */
  readonly common: CommonFile;
  /** The common file (for error positions). */
  readonly commonSource: YamlSource;
  /** The resolved model architecture. */
  readonly model: ModelSpec;
  /** Lines to show the user (ignored upstream knobs and the like). */
  readonly notices: readonly string[];
}

function why(e: unknown): string {
  if (e instanceof Deno.errors.NotFound) return "file not found";
  if (e instanceof Deno.errors.PermissionDenied) return "permission denied";
  if (e instanceof Deno.errors.IsADirectory) return "is a directory";
  return e instanceof Error ? e.message.split("\n")[0] : String(e);
}

/**
 * Files parsed lately, by path, with the text they were parsed from. A
 * sweep, a calibration or a test suite runs the same few files hundreds of
 * times: parsing them was a tenth of a calibration's time. A source is
 * immutable (its data is frozen), so one parse serves every reader of the
 * same text; a changed file is parsed again.
 */
const parsed = new Map<string, { text: string; source: YamlSource }>();
/** Files kept in {@link parsed}: a scenario tree's configs, devices and models. */
const PARSED_FILES = 64;

/** Reads and parses a YAML file; a read failure is an {@link InputError} on that file. */
export function readYaml(path: string, fs: FileSystem = denoFileSystem): YamlSource {
  let text: string;
  try {
    text = fs.readText(path);
  } catch (e) {
    throw new InputError({ file: path }, `cannot read: ${why(e)}`);
  }
  const hit = parsed.get(path);
  if (hit !== undefined && hit.text === text) return hit.source;
  const source = new YamlSource(path, text);
  parsed.delete(path);
  if (parsed.size >= PARSED_FILES) parsed.delete(parsed.keys().next().value!);
  parsed.set(path, { text, source });
  return source;
}

/** A path as written in `file`: absolute as it is, else relative to the file's folder. */
export const resolveFrom = (file: string, p: string): string => (isAbsolute(p) ? p : join(dirname(file), p));
/** Explicit paths: `./x`, `../x`, `/x`, `~/x`, or a file name with an extension. */
const looksLikePath = (s: string) => /^(\.{1,2}[\\/]|[\\/]|~)|\.(ya?ml|json)$/i.test(s);

function resolveModel(common: CommonFile, src: YamlSource, fs: FileSystem): ModelSpec {
  const at: PathPart[] = ["model_config", "name"];
  const name = common.model_config.name;
  // Own properties only: a name such as 'constructor' is no catalog entry.
  const id = Object.hasOwn(MODEL_ALIASES, name) ? MODEL_ALIASES[name] : name;
  const known = Object.hasOwn(MODEL_CATALOG, id) ? MODEL_CATALOG[id] : undefined;
  if (known) return modelSpecFromHf(name, known, (f, d) => src.fail(at, `catalog entry ${f}: ${d}`));
  // An HF id has a slash too: only an explicit path, or a folder that exists, is read from disk.
  if (!looksLikePath(name) && !fs.isDirectory(resolveFrom(src.file, name))) {
    const near = closest(name, Object.keys(MODEL_CATALOG));
    const hint = near ? `; did you mean '${near}'?` : " (not in the catalog; give a path to a config.json for others)";
    return src.fail(at, `unknown model '${clip(name)}'${hint}`);
  }
  let file = resolveFrom(src.file, name);
  if (fs.isDirectory(file)) file = join(file, "config.json");
  let cfgSrc: YamlSource;
  try {
    cfgSrc = readYaml(file, fs);
  } catch (e) {
    if (e instanceof InputError && e.location.line === undefined) {
      src.fail(at, `cannot read ${file}: ${e.detail.replace(/^cannot read: /, "")}`);
    }
    throw e;
  }
  if (cfgSrc.data === null || typeof cfgSrc.data !== "object" || Array.isArray(cfgSrc.data)) {
    cfgSrc.fail([], "expected a JSON object (a Hugging Face config.json)");
  }
  validate(cfgSrc, HfConfigSchema);
  return modelSpecFromHf(name, cfgSrc.data as HfConfig, (f, d) => cfgSrc.fail([f], d));
}

function resolveDevice(g: InstanceGroupConfig, src: YamlSource, path: readonly PathPart[], fs: FileSystem): DeviceSpec {
  const at = [...path, "device_type"];
  const known = Object.hasOwn(DEVICE_CATALOG, g.device_type) ? DEVICE_CATALOG[g.device_type] : undefined;
  if (known) return known;
  if (!looksLikePath(g.device_type)) {
    const near = closest(g.device_type, Object.keys(DEVICE_CATALOG));
    const hint = near
      ? `; did you mean '${near}'?`
      : ` (known: ${Object.keys(DEVICE_CATALOG).join(", ")}; or a path to a device file)`;
    return src.fail(at, `unknown device '${clip(g.device_type)}'${hint}`);
  }
  const file = resolveFrom(src.file, g.device_type);
  let devSrc: YamlSource;
  try {
    devSrc = readYaml(file, fs);
  } catch (e) {
    if (e instanceof InputError && e.location.line === undefined) {
      src.fail(at, `cannot read device file ${file}: ${e.detail.replace(/^cannot read: /, "")}`);
    }
    throw e;
  }
  const stem = file.replace(/^.*[\\/]/, "").replace(/\.ya?ml$/i, "");
  return deviceFromFile(validate(devSrc, DeviceFileSchema), stem);
}

/**
 * Loads and validates a run's files.
 *
 * @param instancePaths one or more instance files (their groups are concatenated)
 * @param commonPath the common file
 * @param fs where to read from (default: the real filesystem)
 * @throws {InputError} for any bad input, located at file:line:col and key path
 *
 * @example Load in-memory files; bad input is located
 * ```ts
 * import { InputError, loadConfig } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const files: Record<string, string> = { "i.yaml": i, "c.yaml": c };
 * const fs = { readText: (p: string) => files[p], isDirectory: () => false };
 * const cfg = loadConfig(["i.yaml"], "c.yaml", fs);
 * assert.equal(cfg.model.id, "meta-llama/Llama-3.1-8B-Instruct");
 * assert.equal(cfg.groups.length, 1);
 * files["c.yaml"] = c.replace("num_requests: 4", "num_requests: 0");
 * assert.throws(() => loadConfig(["i.yaml"], "c.yaml", fs), InputError);
 * assert.throws(() => loadConfig(["i.yaml"], "c.yaml", fs), /^InputError: c\.yaml:2:\d+: load_gen\.num_requests: /);
 * ```
 */
export function loadConfig(
  instancePaths: readonly string[],
  commonPath: string,
  fs: FileSystem = denoFileSystem,
): LoadedConfig {
  return loadConfigSources(instancePaths.map((p) => readYaml(p, fs)), readYaml(commonPath, fs), fs);
}

/**
 * Validates already parsed instance and common sources (files, or inline
 * blocks of a scenario with overrides applied).
 *
 * @throws {InputError} for any bad input
 */
export function loadConfigSources(
  sources: readonly YamlSource[],
  commonSource: YamlSource,
  fs: FileSystem = denoFileSystem,
): LoadedConfig {
  const groups: LoadedGroup[] = [];
  const commonPath = commonSource.file;
  for (const src of sources) {
    const file = validate(src, InstanceFileSchema, {
      label: "the common file (--common_config_path)",
      schema: CommonFileSchema,
    });
    file.instance_groups.forEach((config, i) => {
      const path = ["instance_groups", i];
      const device = resolveDevice(config, src, path, fs);
      const deviceOrigin = Object.hasOwn(DEVICE_CATALOG, config.device_type) ? "catalog" : "file";
      groups.push({ config, source: src, path, device, deviceOrigin });
    });
  }
  const common = validate(commonSource, CommonFileSchema, {
    label: "an instance file (--instance_config_path)",
    schema: InstanceFileSchema,
  });
  const notices: string[] = [];
  const ignored = IGNORED_MODEL_KEYS.filter((k) => common.model_config[k] !== undefined);
  if (ignored.length) {
    notices.push(
      `note: ${commonPath}: upstream estimator settings have no effect here and are ignored: ${ignored.join(", ")}`,
    );
  }
  // Upstream defaults with a large effect say so when they apply unwritten.
  const raw = commonSource.data as { model_config?: Record<string, unknown> } | null;
  const written = new Set(Object.keys(raw?.model_config ?? {}));
  if (!written.has("quantize_linear_action")) {
    notices.push(
      `note: ${commonPath}: model_config.quantize_linear_action is not set: upstream's default W8A8_DYNAMIC applies ` +
        "(8-bit weights, INT8 matmuls); write DISABLED for BF16 weights",
    );
  }
  if (!written.has("enable_kv_transfer_modeling") && groups.some((g) => g.config.pd_role !== "both")) {
    notices.push(
      `note: ${commonPath}: model_config.enable_kv_transfer_modeling is not set: upstream's default false applies, ` +
        "so KV transfers from prefill to decode take no time; write true to model the link",
    );
  }
  const model = resolveModel(common, commonSource, fs);
  const trace = common.load_gen.load_gen_type === "trace"
    ? loadTrace(commonSource, common.load_gen, fs, common.limits)
    : undefined;
  return { groups, common, commonSource, model, notices, trace };
}
