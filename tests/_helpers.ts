/**
 * Helpers shared by the cross-module tests: running the CLI as a user
 * would, and writing throwaway config files.
 *
 * @module
 */

import denoJson from "../deno.json" with { type: "json" };
import type { TaskOutput } from "../scenarios/_args.ts";
import { loadConfig } from "../core/config/load.ts";
import { assemble } from "../core/assembly/assemble.ts";
import type { AssembledRun } from "../core/assembly/assemble.ts";
import { memoryFs } from "../core/calibrate/_memory_fs.ts";

// The command line (cli.ts) and `deno task check` (scenarios/check.ts) are imported when a test first runs them, not
// here: a suite (tests/suites/) or a module run alone that only wants ROOT or writeTemp would load them (and
// commander) for nothing, about 0.05 s of CPU each time.

/** The repository root. */
export const ROOT = new URL("..", import.meta.url).pathname;

/** What deno.json keeps out of tests (`exclude`, `test.exclude`), relative to {@link ROOT}; folders end in `/`. */
export const NOT_TESTED: readonly string[] = [...denoJson.exclude, ...denoJson.test.exclude];

/** What a CLI run printed. */
export interface CliRun {
  /** Exit code. */
  code: number;
  /** Standard output. */
  stdout: string;
  /** Standard error. */
  stderr: string;
}

/** Runs `deno ...args` from `cwd` (default: the repository root), without colours and with `env` added. */
export async function runDeno(args: string[], cwd = ROOT, env: Record<string, string> = {}): Promise<CliRun> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/**
 * Runs the command line in this process, `main(args)` of cli.ts with its output captured: the exit code, stdout and
 * stderr exactly as `deno task sim` prints them. The entry point itself (Deno starting cli.ts, its exit code) is
 * covered by {@link runTask} (`deno task sim`).
 */
export async function runCli(args: string[]): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const { main } = await import("../cli.ts");
  const code = await main(args, { stdout: (s) => void (stdout += s), stderr: (s) => void (stderr += s) });
  return { code, stdout, stderr };
}

/** A task's in-process entry point: its arguments and where its lines go, to its exit code. */
export type TaskEntry = (args: string[], io: TaskOutput) => number;

/** Runs an asynchronous task entry point in this process with its lines captured. */
export async function captureTaskAsync(
  entry: (args: string[], io: TaskOutput) => Promise<number>,
  args: string[],
): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await entry(args, { out: (l) => out.push(`${l}\n`), err: (l) => err.push(`${l}\n`) });
  return { code, stdout: out.join(""), stderr: err.join("") };
}

/** Runs a task's entry point in this process with its lines captured: what it prints and its exit code. */
export function captureTask(entry: TaskEntry, args: string[]): CliRun {
  const out: string[] = [];
  const err: string[] = [];
  const code = entry(args, { out: (l) => out.push(`${l}\n`), err: (l) => err.push(`${l}\n`) });
  return { code, stdout: out.join(""), stderr: err.join("") };
}

/**
 * Runs `deno task check ...args` in this process (`runCheck` of scenarios/check.ts). The task's permission set is what
 * a process run adds; a few tests keep that.
 */
export async function runCheckTask(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  // Only the variables a test gives: a suite run inside GitHub Actions must not append to the job's real summary.
  const { runCheck } = await import("../scenarios/check.ts");
  return captureTaskAsync((a, io) => runCheck(a, io, (name) => env[name]), args);
}

/** Runs `deno task <name> ...args` (quietly) from the repository root. */
export function runTask(name: string, args: string[]): Promise<CliRun> {
  return runDeno(["task", "--quiet", name, ...args]);
}

/** Writes `files` (name → text) into a new temporary folder and returns its path (with a trailing slash). */
export function writeTemp(files: Record<string, string>): string {
  const dir = Deno.makeTempDirSync({ prefix: "servingcast-test-" }) + "/";
  for (const [name, text] of Object.entries(files)) Deno.writeTextFileSync(dir + name, text);
  return dir;
}

/** A file system over an in-memory map of path → text (no folders): core/calibrate/_memory_fs.ts's, which core's own tests use. */
export { memoryFs };

/**
 * The plan of one instance of `devices` × `chip`, TP (and MoE TP) across them all, serving `model` with weights as
 * `quant` and `serving` as the serving_config's keys (`engine: vllm, …`), for a one-request workload.
 */
export function planOne(chip: string, devices: number, model: string, quant: string, serving: string): AssembledRun {
  const i = `instance_groups:
  - {num_instances: 1, num_devices_per_instance: ${devices}, device_type: ${chip}, pd_role: both, parallel_config: {tp_size: ${devices}, moe_tp_size: ${devices}}}
`;
  const c = `model_config: {name: ${model}, quantize_linear_action: ${quant}}
load_gen: {num_requests: 1, num_input_tokens: 128, num_output_tokens: 8}
serving_config: {${serving}}
`;
  return assemble(loadConfig(["i.yaml"], "c.yaml", memoryFs({ "i.yaml": i, "c.yaml": c })));
}

/** A minimal valid instance file. */
export const INSTANCE_OK = `instance_groups:
  - num_instances: 1
    num_devices_per_instance: 1
    device_type: H100_SXM_80G
    pd_role: both
`;

/** A minimal valid common file (small and fast). */
export const COMMON_OK = `model_config:
  name: meta-llama/Llama-3.1-8B-Instruct
  quantize_linear_action: DISABLED
load_gen:
  load_gen_type: fixed_length
  num_requests: 50
  num_input_tokens: 512
  num_output_tokens: 64
  request_rate: 10.0
serving_config:
  max_concurrency: 16
  block_size: 16
  max_tokens_budget: 4096
`;
