/**
 * The `servingcast` command line (`deno task sim`): argument parsing, file
 * output and the terminal. Everything else is in `core/`.
 *
 * Run it from a clone (`deno task sim`), or from its import specifier
 * without a clone, e.g. the published package:
 *
 * ```sh
 * deno run --allow-read --allow-write=out \
 *   --allow-env=SERVINGCAST_DEBUG,LOG_TOKENS,LOG_STREAM,NO_COLOR,FORCE_COLOR,CLICOLOR_FORCE,VERBOSE \
 *   jsr:@servingcast/servingcast/cli \
 *   --instance_config_path instances.yaml --common_config_path common.yaml --report out/report.html
 * ```
 *
 * (`-P` would use the permission sets of the caller's own deno.json, not
 * this package's; `--allow-write` is needed only for `--output_json`,
 * `--report`, `--dump_requests` and `--enable_profiling`.) With no
 * configuration it runs the bundled example: from a local copy (a clone, or
 * a `file:` URL from any working directory) it reads the example's files
 * beside this module; from a remote one (`jsr:`, `https:`) it fetches them
 * from there, which needs `--allow-net` to that host (`--allow-net=jsr.io`),
 * and without it prints one line saying to pass
 * `--instance_config_path` and `--common_config_path`.
 *
 * Exit codes: 0 success; 1 an unexpected failure; 2 bad input (usage, file,
 * YAML, schema, impossible deployment).
 *
 * @module
 */
import { Command, CommanderError, Option } from "commander";
import { InputError } from "./core/config/errors.ts";
import { fileURLToPath } from "node:url";
import { describeRun, diagnostics, pools, runFiles, runSources } from "./core/assembly/run.ts";
import type { RunOptions } from "./core/assembly/run.ts";
import { YamlSource } from "./core/config/source.ts";
import { denoFileSystem, loadConfig, loadConfigSources } from "./core/config/load.ts";
import type { FileSystem } from "./core/config/load.ts";
import { runJson } from "./core/report/run_json.ts";
import { runReportHtml } from "./core/report/run_report.ts";
import { formatExtSection } from "./core/report/ext_table.ts";
import { formatGroupTable } from "./core/report/groups.ts";
import { formatIntervalSection, headlineIntervals } from "./core/report/intervals.ts";
import type { RunOutput } from "./core/assembly/run.ts";
import type { AssembledRun } from "./core/assembly/assemble.ts";
import type { GoodputSlos } from "./core/metrics/summary.ts";
import { EXACT_UP_TO } from "./core/metrics/sketch.ts";
import { mergeShards, parseShard, runIdentity, shardFile } from "./core/assembly/shard.ts";
import type { Shard, ShardFile } from "./core/assembly/shard.ts";
import { assemble } from "./core/assembly/assemble.ts";
import { formatSummaryTable } from "./core/report/table.ts";
import { formatRequestCsv, ProfilingFiles } from "./core/report/profiling.ts";
import type { TraceCounts } from "./core/report/profiling.ts";
import { formatTraceLine } from "./core/workload/trace.ts";
import { outputDirProblem, OutputError, outputFileProblem, writeFor, writeOutput } from "./cli_output.ts";
import { progressBar } from "./cli_progress.ts";
import { capMessage } from "./core/config/limits.ts";
import { deviceTable, formatCatalogText, modelTable } from "./core/report/catalog.ts";
import denoJson from "./deno.json" with { type: "json" };

/**
 * The bundled example, used when no file is named: `examples/instances.yaml`
 * and `examples/common.yaml` beside this module (`file:` URLs in a clone,
 * `https:` ones when run from the published package).
 */
export const EXAMPLE: { readonly instance: URL; readonly common: URL } = {
  instance: new URL("./examples/instances.yaml", import.meta.url),
  common: new URL("./examples/common.yaml", import.meta.url),
};

/** What a run reads: files by path, or sources already read (the remote example). */
type RunInputs =
  | { readonly kind: "files"; readonly instances: readonly string[]; readonly common: string }
  | { readonly kind: "sources"; readonly instances: readonly YamlSource[]; readonly common: YamlSource };

/**
 * The bundled example to run, or the one line saying why it cannot be read.
 *
 * A local module's example is read from its files by path (`fileURLToPath`,
 * so a clone in a folder with spaces, or a `file:` specifier from another
 * working directory, still works). A remote module's files exist only on the
 * host that served it: they are fetched from there, since the user who runs
 * `deno run jsr:@servingcast/servingcast/cli` with no argument expects the
 * same demonstration as `deno task sim`; it needs `--allow-net` to that host
 * (Deno prompts for it on a terminal). Without that permission, or offline,
 * the run stops with one line naming both ways forward, rather than
 * falling back to something the user did not ask for.
 */
async function bundledExample(): Promise<RunInputs | string> {
  const { instance, common } = EXAMPLE;
  if (instance.protocol === "file:") {
    return { kind: "files", instances: [fileURLToPath(instance)], common: fileURLToPath(common) };
  }
  try {
    const read = async (url: URL) => {
      const res = await fetch(url);
      if (!res.ok) {
        await res.body?.cancel();
        throw new Error(`HTTP ${res.status} ${res.statusText} for ${url.href}`);
      }
      return new YamlSource(url.href, await res.text());
    };
    const [i, c] = await Promise.all([read(instance), read(common)]);
    return { kind: "sources", instances: [i], common: c };
  } catch (e) {
    if (e instanceof InputError) throw e; // the package's own example does not parse: a bug, exit 1
    const where = new URL(".", instance).href;
    if (e instanceof Deno.errors.NotCapable) {
      return `servingcast: error: the bundled example is at ${where}: pass --instance_config_path and ` +
        `--common_config_path, or let it be read with --allow-net=${instance.host}`;
    }
    // fetch's TypeError says "fetch failed"; its cause says why (refused, DNS, TLS).
    const cause = e instanceof Error && typeof e.cause === "object" ? (e.cause as { message?: unknown }).message : "";
    const why = e instanceof Error ? e.message + (typeof cause === "string" && cause ? `: ${cause}` : "") : String(e);
    return `servingcast: error: cannot fetch the bundled example from ${where} (${why}): ` +
      "pass --instance_config_path and --common_config_path";
  }
}

/** Flags renamed in 0.2 (their old names still work, with a note): the Chrome trace is "profiling" throughout. */
const RENAMED = [
  ["profile_window", "profiling_window"],
  ["profile_requests", "profiling_requests"],
  ["profile_gzip", "profiling_gzip"],
] as const;

interface CliOptions {
  instance_config_path?: string[];
  common_config_path?: string;
  enable_profiling?: boolean;
  profiling_output_path: string;
  /** `--profiling_window`, in simulated seconds. */
  profiling_window?: { start: number; end: number };
  profiling_requests?: number;
  profiling_gzip?: boolean;
  /** The profiling flags' names before 0.2 (see {@link RENAMED}). */
  profile_window?: { start: number; end: number };
  profile_requests?: number;
  profile_gzip?: boolean;
  output_json?: string;
  report?: string;
  seed?: number;
  dump_requests?: string;
  quiet?: boolean;
  format: "table" | "json" | "csv";
  goodput?: GoodputSlos;
  saturation_probe?: boolean;
  /** `--exact_up_to`: requests whose figures stay exact. */
  exact_up_to?: number;
  /** `--shard i/n`. */
  shard?: Shard;
  /** `--shard_output`: where a shard writes its figures. */
  shard_output?: string;
  /** `--merge`: shard files to combine instead of simulating. */
  merge?: string[];
  listModels?: boolean;
  listDevices?: boolean;
}

/**
 * Parses one `--goodput` SLO as vLLM's benchmark takes it: `ttft:500`,
 * `tpot:50`, `e2el:3000` in milliseconds, or with a unit (`ttft:0.5s`).
 */
function goodputSlo(v: string, prev: GoodputSlos | undefined): GoodputSlos {
  const m = /^(ttft|tpot|e2el|e2e):\s*(\d+\.?\d*|\.\d+)(ms|s)?$/.exec(v.trim());
  if (!m || !(Number(m[2]) > 0)) {
    throw new CommanderError(
      2,
      "goodput",
      `--goodput: expected KEY:VALUE with KEY one of ttft, tpot, e2el and VALUE a positive number of milliseconds (or with a unit: 0.5s), got '${v}'`,
    );
  }
  const seconds = Number(m[2]) / (m[3] === "s" ? 1 : 1000);
  return { ...prev, [m[1] === "e2el" ? "e2e" : m[1]]: seconds };
}

/**
 * Parses `--profiling_window START,END`: simulated seconds, 0 ≤ START < END
 * (a bad value is one line and exit 2, before any simulation).
 */
function profilingWindow(v: string): { start: number; end: number } {
  const fail = (why: string) => {
    throw new CommanderError(2, "profiling_window", `--profiling_window: ${why}, got '${v}'`);
  };
  const parts = v.split(",").map((p) => p.trim());
  const [start, end] = parts.map(Number);
  // Decimal numbers only (Number() would also take 0x10 or 1e3_0).
  const decimal = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
  if (parts.length !== 2 || !parts.every((p) => decimal.test(p)) || !Number.isFinite(start) || !Number.isFinite(end)) {
    fail("expected START,END in simulated seconds (e.g. 60,120)");
  }
  if (start < 0) fail("START must not be negative");
  if (!(end > start)) fail("END must be greater than START");
  return { start, end };
}

/** Parses `--profiling_requests N`: a positive integer. */
function profilingRequests(v: string): number {
  const n = Number(v);
  if (!/^\s*\d+\s*$/.test(v) || !Number.isSafeInteger(n) || n < 1) {
    throw new CommanderError(2, "profiling_requests", `--profiling_requests: expected a positive integer, got '${v}'`);
  }
  return n;
}

/**
 * Where {@link main} writes: its standard output and standard error (the
 * process's by default; a test passes its own to read them in-process).
 */
export interface CliOutput {
  /** Writes text to standard output. */
  stdout(text: string): void;
  /** Writes text to standard error. */
  stderr(text: string): void;
  /** Whether standard error is a terminal (the progress bar shows only there); false when absent. */
  isTerminal?(): boolean;
}

const encoder = new TextEncoder();

/** Writes all of `text` to `file`. */
function writeAllSync(file: { writeSync(p: Uint8Array): number }, text: string): void {
  const bytes = encoder.encode(text);
  for (let off = 0; off < bytes.length;) off += file.writeSync(bytes.subarray(off));
}

/** The process's standard output and standard error. */
export const PROCESS_OUTPUT: CliOutput = {
  stdout: (text) => writeAllSync(Deno.stdout, text),
  stderr: (text) => writeAllSync(Deno.stderr, text),
  isTerminal: () => Deno.stderr.isTerminal(),
};

function program(io: CliOutput): Command {
  return new Command()
    .name("servingcast")
    .description(
      "Run a service inference simulation driven by YAML configuration files.\n" +
        "With no arguments it runs the bundled example (examples/instances.yaml, examples/common.yaml).",
    )
    .helpOption("-h, --help", "show this help message and exit")
    .version(`servingcast ${denoJson.version}`, "--version", "print the version and exit")
    .option("--list-models", "list the built-in models (parameters, weights, KV bytes per token) and exit")
    .option("--list-devices", "list the built-in devices (memory, bandwidth, peak FLOPS, sources) and exit")
    .option(
      "--instance_config_path <paths...>",
      "YAML file(s) declaring one or more instance groups (role, count, device, TP/DP); groups from all files are combined",
    )
    .option("--common_config_path <path>", "YAML file with the model, the request workload and serving limits")
    .option("--enable_profiling", "write a Chrome trace and a per-request CSV (default: False)")
    .option("--profiling_output_path <dir>", "directory for profiling results", "./profiling_results")
    .addOption(
      new Option(
        "--profiling_window <start,end>",
        "profile only what overlaps this span of simulated seconds (steps, counters, transfers, request phases)",
      ).argParser(profilingWindow),
    )
    .addOption(
      new Option(
        "--profiling_requests <n>",
        "profile n requests (evenly spaced ids): their phases, transfers and the steps of their engines meanwhile",
      ).argParser(profilingRequests),
    )
    .option("--profiling_gzip", "write the trace gzipped (trace.json.gz, which Perfetto opens)")
    // Their names before 0.2, still read and hidden from the help: "profile" now means an engine profile only.
    .addOption(new Option("--profile_window <start,end>").argParser(profilingWindow).hideHelp())
    .addOption(new Option("--profile_requests <n>").argParser(profilingRequests).hideHelp())
    .addOption(new Option("--profile_gzip").hideHelp())
    .option("--output_json <file>", "also write the summary as JSON to this file")
    .option(
      "--report <file>",
      "also write a self-contained HTML report: tables, latency CDFs, time series, step-time breakdown, memory sizing",
    )
    .addOption(
      new Option("--seed <n>", "override load_gen.seed").argParser((v) => {
        const n = /^\d+$/.test(v) ? Number(v) : NaN;
        if (!Number.isInteger(n) || n < 0) {
          throw new CommanderError(2, "seed", `--seed: expected a non-negative integer, got '${v}'`);
        }
        if (n >= 2 ** 32) {
          throw new CommanderError(2, "seed", `--seed: expected an integer below 2^32 (4294967296), got '${v}'`);
        }
        return n;
      }),
    )
    .option(
      "--dump_requests <file>",
      "write the generated workload as a JSONL trace (replay it with load_gen_type: trace; hash ids stand for 16 tokens)",
    )
    .addOption(
      new Option(
        "--goodput <slo...>",
        "per-request SLOs for goodput, as vLLM's benchmark takes them: ttft:500 tpot:50 e2el:3000 (ms; TTFT and E2E from arrival)",
      ).argParser(goodputSlo),
    )
    .addOption(
      new Option(
        "--exact_up_to <n>",
        `keep every request's figures exactly up to n requests (default ${EXACT_UP_TO}); a longer run's percentiles come from quantile sketches, each within 0.5%`,
      ).argParser((v) => {
        const n = /^\d+$/.test(v) ? Number(v) : NaN;
        if (!Number.isSafeInteger(n) || n < 1) {
          throw new CommanderError(2, "exact_up_to", `--exact_up_to: expected a positive integer, got '${v}'`);
        }
        return n;
      }),
    )
    .addOption(
      new Option(
        "--shard <i/n>",
        "simulate partition i of n (0-based): engines and requests whose index is i modulo n; needs --shard_output",
      ).argParser((v) => {
        try {
          return parseShard(v);
        } catch (e) {
          throw new CommanderError(2, "shard", `--shard: ${(e as Error).message}`);
        }
      }),
    )
    .option("--shard_output <file>", "where --shard writes its partition's figures, for --merge")
    .option(
      "--merge <file...>",
      "combine the files of every --shard of the run (same config files and flags) into its summary, without simulating",
    )
    .option(
      "--saturation_probe",
      "also run the same deployment with every request arriving at once, and report the rate it serves at as max_sustainable_rate",
    )
    .option("--quiet", "print only the summary (no notes, no description line)")
    .addOption(new Option("--format <format>", "stdout format").choices(["table", "json", "csv"]).default("table"))
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: (s) => io.stderr(s) });
}

/** Writes lines to a file through a buffer (a million-line dump stays fast and small). */
class LineWriter {
  #opened?: Deno.FsFile;
  #buf: string[] = [];
  #size = 0;
  #path: string;
  #inputs: readonly string[];
  /**
   * @param path the file (opened, and so truncated, only at the first flush)
   * @param inputs the files the run reads: by the first flush, all of them; the dump never overwrites one
   */
  constructor(path: string, inputs: readonly string[]) {
    this.#path = path;
    this.#inputs = inputs;
  }
  get #file(): Deno.FsFile {
    if (this.#opened) return this.#opened;
    const problem = outputFileProblem("--dump_requests", this.#path, this.#inputs);
    if (problem) throw new OutputError(problem);
    return this.#opened = writeFor(
      "--dump_requests",
      this.#path,
      () => Deno.openSync(this.#path, { write: true, create: true, truncate: true }),
    );
  }
  write(line: string): void {
    this.#buf.push(line);
    if ((this.#size += line.length) > 1 << 20) this.flush();
  }
  flush(): void {
    if (this.#buf.length) {
      const bytes = new TextEncoder().encode(this.#buf.join("\n") + "\n");
      writeFor("--dump_requests", this.#path, () => {
        for (let off = 0; off < bytes.length;) off += this.#file.writeSync(bytes.subarray(off));
      });
    }
    this.#buf = [];
    this.#size = 0;
  }
  close(): void {
    try {
      this.flush();
    } finally {
      this.#file.close();
    }
  }
}

function timestamp(d: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${
    p(d.getSeconds())
  }`;
}

/** A profile being written: its folder and files. */
interface ProfilingRun {
  /** The run's `<timestamp>/` folder. */
  readonly dir: string;
  /** The trace (written during the run) and the CSV. */
  readonly files: ProfilingFiles;
  /** Closes the files and removes the folder (a failed run leaves no partial profile). */
  abort(): void;
}

/**
 * Creates the run's `<timestamp>/` folder under `--profiling_output_path`
 * and opens the trace in it, before the run: events are written as the run
 * produces them.
 */
function openProfiling(opts: CliOptions, plan: AssembledRun): ProfilingRun {
  // The engines' labels name the trace's threads and counters, written from the first step on: the run hands its
  // plan over (onAssembled) before it simulates.
  const engines = plan.input.engines;
  const flag = "--profiling_output_path";
  const base = opts.profiling_output_path;
  const dir = writeFor(flag, base, () => {
    let target = `${base}/${timestamp(new Date())}`;
    for (
      let i = 1;
      (() => {
        try {
          Deno.statSync(target);
          return true;
        } catch {
          return false;
        }
      })();
      i++
    ) {
      target = `${base}/${timestamp(new Date())}-${i}`;
    }
    Deno.mkdirSync(target, { recursive: true });
    return target;
  });
  const remove = () => {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // Nothing left to clean up.
    }
  };
  const w = opts.profiling_window;
  try {
    const files = new ProfilingFiles(dir, {
      engines: engines.map((e) => e.label),
      hasTransfers: engines.some((e) => e.role === "decode"),
      // Simulated seconds to the simulator's µs.
      selection: {
        window: w && { start: Math.round(w.start * 1e6), end: Math.round(w.end * 1e6) },
        sample: opts.profiling_requests,
      },
      gzip: opts.profiling_gzip,
      guard: (op) => writeFor(flag, base, op),
    });
    return {
      dir,
      files,
      abort: () => {
        files.abort();
        remove();
      },
    };
  } catch (e) {
    remove();
    throw e;
  }
}

/** The closing line's account of a trace: "21,804 steps, 9,613 requests overlapping 60–120 s". */
function describeTrace(opts: CliOptions, counts: TraceCounts): string {
  const n = (x: number) => x.toLocaleString("en-US");
  const w = opts.profiling_window;
  return `${n(counts.steps)} steps, ${n(counts.requests)} requests` +
    (opts.profiling_requests !== undefined ? ` (sample of ${n(opts.profiling_requests)} asked)` : "") +
    (counts.transfers > 0 ? `, ${n(counts.transfers)} KV transfers` : "") +
    (w ? ` overlapping ${w.start}–${w.end} s` : "");
}

/**
 * Runs the command line.
 *
 * @param args the arguments (without the program name)
 * @param io where to write (default: the process's standard output and error)
 * @returns the exit code
 */
export async function main(args: string[], output: CliOutput = PROCESS_OUTPUT): Promise<number> {
  // Every stderr line capped (a 1 MB path in an input never prints a 2 MB line); stdout as it is.
  const io: CliOutput = {
    ...output,
    stderr: (s) => output.stderr(s.split("\n").map(capMessage).join("\n")),
  };
  const err = (s: string) => io.stderr(s + "\n");
  let opts: CliOptions;
  try {
    const cmd = program(io);
    cmd.parse(args, { from: "user" });
    opts = cmd.opts<CliOptions>();
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === "commander.helpDisplayed" || e.code === "commander.version") return 0;
      if (["seed", "goodput", "profiling_window", "profiling_requests", "exact_up_to", "shard"].includes(e.code)) {
        err(`servingcast: ${e.message}`);
      }
      return 2; // commander already printed its message; argparse exits 2 on usage errors
    }
    throw e;
  }
  for (const [was, now] of RENAMED) {
    if (opts[was] === undefined) continue;
    err(`note: --${was} is now --${now}`);
    Object.assign(opts, { [now]: opts[now] ?? opts[was] });
  }
  if (opts.listModels || opts.listDevices) {
    const tables = [...(opts.listModels ? [modelTable()] : []), ...(opts.listDevices ? [deviceTable()] : [])];
    io.stdout(tables.map(formatCatalogText).join("\n"));
    return 0;
  }
  const given = [opts.instance_config_path !== undefined, opts.common_config_path !== undefined];
  if (given[0] !== given[1]) {
    err(
      `servingcast: error: ${
        given[0] ? "--common_config_path" : "--instance_config_path"
      } is required when the other is given`,
    );
    return 2;
  }
  const profilingFlag = opts.profiling_window
    ? "--profiling_window"
    : opts.profiling_requests !== undefined
    ? "--profiling_requests"
    : opts.profiling_gzip
    ? "--profiling_gzip"
    : undefined;
  if (profilingFlag && !opts.enable_profiling) {
    err(`servingcast: error: ${profilingFlag} needs --enable_profiling`);
    return 2;
  }
  if ((opts.shard === undefined) !== (opts.shard_output === undefined)) {
    err(`servingcast: error: ${opts.shard ? "--shard needs --shard_output" : "--shard_output needs --shard"}`);
    return 2;
  }
  if (opts.merge && (opts.shard || opts.enable_profiling || opts.dump_requests || opts.saturation_probe)) {
    err(`servingcast: error: --merge reads finished shards: it does not run --shard, profiling, dumps or probes`);
    return 2;
  }
  // Output paths are checked before the run: a typo costs no simulation, and an input is never overwritten.
  const named = [...opts.instance_config_path ?? [], ...opts.common_config_path ? [opts.common_config_path] : []];
  const badPath = [
    opts.output_json !== undefined ? outputFileProblem("--output_json", opts.output_json, named) : undefined,
    opts.report !== undefined ? outputFileProblem("--report", opts.report, named) : undefined,
    opts.dump_requests !== undefined ? outputFileProblem("--dump_requests", opts.dump_requests, named) : undefined,
    opts.shard_output !== undefined ? outputFileProblem("--shard_output", opts.shard_output, named) : undefined,
    opts.enable_profiling ? outputDirProblem("--profiling_output_path", opts.profiling_output_path) : undefined,
  ].find((x) => x !== undefined);
  if (badPath) {
    err(`servingcast: ${badPath}`);
    return 2;
  }
  try {
    return await runMain(opts, io);
  } catch (e) {
    if (!(e instanceof OutputError)) throw e;
    err(`servingcast: ${e.message}`);
    return 2;
  }
}

async function runMain(opts: CliOptions, io: CliOutput): Promise<number> {
  const err = (s: string) => io.stderr(s + "\n");
  // Both paths or neither (checked in main): none means the bundled example.
  const inputs = opts.instance_config_path && opts.common_config_path
    ? { kind: "files" as const, instances: opts.instance_config_path, common: opts.common_config_path }
    : await bundledExample();
  if (typeof inputs === "string") {
    err(inputs);
    return 2;
  }
  // Every file the run reads (the named ones, and the traces, config.json and device files they name): an output
  // path that is one of them is refused, and the dump is opened only once they are all known (at the first request).
  const read: string[] = inputs.kind === "files" ? [...inputs.instances, inputs.common] : [];
  const fs: FileSystem = {
    readText: (p) => (read.push(p), denoFileSystem.readText(p)),
    isDirectory: (p) => denoFileSystem.isDirectory(p),
    lines: (p) => (read.push(p), denoFileSystem.lines!(p)),
  };
  const run = (options: RunOptions) =>
    inputs.kind === "files"
      ? runFiles(inputs.instances, inputs.common, { ...options, fs })
      : runSources(inputs.instances, inputs.common, options);

  let profile: ProfilingRun | undefined;
  const dump = opts.dump_requests ? new LineWriter(opts.dump_requests, read) : undefined;
  const progress = await progressBar({
    terminal: io.isTerminal?.() ?? false,
    label: "simulating",
    unit: "requests",
    every: 256,
  });
  const wallStart = performance.now();
  let out: RunOutput;
  try {
    out = opts.merge ? merged(inputs, opts.merge, opts, read, fs) : run({
      shard: opts.shard,
      onAssembled: opts.enable_profiling ? (plan) => void (profile = openProfiling(opts, plan)) : undefined,
      seed: opts.seed,
      goodput: opts.goodput,
      saturationProbe: opts.saturation_probe === true,
      // Per-request files list every request.
      exactUpTo: opts.format === "csv" || opts.enable_profiling ? Infinity : opts.exact_up_to,
      // The JSON document and the report carry CDFs and time series (bounded memory).
      timeseries: opts.report !== undefined || opts.output_json !== undefined || opts.format === "json",
      onStep: opts.enable_profiling ? (st) => profile!.files.recorder.onStep(st) : undefined,
      onTransfer: opts.enable_profiling ? (t) => profile!.files.recorder.onTransfer(t) : undefined,
      onArrival: dump ? (d) => dump.write(formatTraceLine(d)) : undefined,
      onProgress: progress.onProgress,
    });
    if (opts.shard) {
      const file = shardFile(
        out,
        opts.shard,
        runIdentity(out.assembled),
        out.assembled.input.workload.numRequests,
        out.stream,
      );
      writeOutput("--shard_output", opts.shard_output!, JSON.stringify(file), read);
    }
  } catch (e) {
    progress.stop();
    profile?.abort();
    if (!(e instanceof OutputError)) dump?.close();
    if (e instanceof InputError) {
      err(e.message);
      return 2;
    }
    throw e;
  }
  progress.stop();
  dump?.close();
  const wall = (performance.now() - wallStart) / 1000;

  if (!opts.quiet) {
    for (const n of out.assembled.notices) err(n);
    const how = opts.merge
      ? `, merged from ${opts.merge.length} shards`
      : opts.shard
      ? ` (shard ${opts.shard.index}/${opts.shard.count}: ${out.result.engines.length} engines, ${out.summary.overall.total_requests} requests)`
      : "";
    err(`${describeRun(out)}${how} in ${wall.toFixed(2)} s wall`);
  }
  for (const u of out.summary.unservable) {
    err(`warning: ${u.count} request(s) can never be served and were left out of the summary: ${u.reason}`);
  }
  for (const line of diagnostics(out)) err(line);
  const sketch = out.summary.sketch;
  if (sketch && !opts.quiet) {
    err(
      `note: percentiles over ${sketch.requests} requests come from quantile sketches, each within ${
        sketch.relativeAccuracy * 100
      }% of the exact value (MIN, MAX and AVERAGE exact); --exact_up_to ${sketch.requests} keeps them exact`,
    );
  }

  const json = () => runJson(out);
  const text = opts.format === "json"
    ? json()
    : opts.format === "csv"
    ? formatRequestCsv(out.result.requests)
    : formatSummaryTable(out.summary) + formatExtSection(out.summary) + formatGroupTable(pools(out).groups) +
      formatIntervalSection(headlineIntervals(out));
  io.stdout(text);
  if (opts.output_json) {
    const path = opts.output_json;
    writeOutput("--output_json", path, json(), read);
  }
  if (opts.report !== undefined) {
    const path = opts.report;
    const html = await runReportHtml(out, describeRun(out));
    writeOutput("--report", path, html, read);
    if (!opts.quiet) err(`report written to ${path}`);
  }
  if (profile) {
    const { dir, files } = profile;
    let counts: TraceCounts;
    try {
      counts = files.finish(out.result.requests);
    } catch (e) {
      profile.abort();
      throw e;
    }
    if (!opts.quiet) {
      err(
        `profiling results written to ${dir}/ (${files.traceFile} opens in https://ui.perfetto.dev, requests.csv): ` +
          describeTrace(opts, counts),
      );
    }
    if (opts.profiling_window && counts.steps === 0) {
      const w = opts.profiling_window;
      err(
        `warning: --profiling_window ${w.start},${w.end} holds no step (the run simulated ${
          out.summary.simulatedSeconds.toFixed(1)
        } s)`,
      );
    }
  }
  return 0;
}

/** The run the shard files of `paths` are the partitions of, merged (InputError: they are not). */
function merged(
  inputs: RunInputs,
  paths: readonly string[],
  opts: CliOptions,
  read: string[],
  fs: FileSystem,
): RunOutput {
  const cfg = inputs.kind === "files"
    ? loadConfig(inputs.instances, inputs.common, fs)
    : loadConfigSources(inputs.instances, inputs.common);
  const assembled = assemble(cfg, { seed: opts.seed });
  const files = paths.map((p): [string, ShardFile] => {
    read.push(p);
    let text: string;
    try {
      text = Deno.readTextFileSync(p);
    } catch (e) {
      throw new InputError({ file: p }, `cannot read: ${(e as Error).message}`);
    }
    try {
      return [p, JSON.parse(text)];
    } catch (e) {
      throw new InputError({ file: p }, `not JSON: ${(e as Error).message}`);
    }
  });
  return { assembled, ...mergeShards(runIdentity(assembled), files) };
}

if (import.meta.main) {
  try {
    Deno.exitCode = await main(Deno.args);
  } catch (e) {
    const err = (s: string) => PROCESS_OUTPUT.stderr(s + "\n");
    err(`servingcast: internal error: ${e instanceof Error ? e.message : String(e)}`);
    if (Deno.env.get("SERVINGCAST_DEBUG")) err(e instanceof Error ? e.stack ?? "" : "");
    Deno.exitCode = 1;
  }
}
