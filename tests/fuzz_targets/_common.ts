/**
 * What every fuzz target shares (tests/fuzz.ts runs them): the case result,
 * the target interface, hostile values, and the judge of a task run by the
 * promise every task makes on bad input: exit 0 (or the task's own "check
 * failed" code) or one located exit-2 line; never an exception, an
 * internal error, a line longer than the message cap, NaN or Infinity, or a
 * GitHub workflow command the task did not make.
 *
 * @module
 */
import type { TaskOutput } from "../../scenarios/_args.ts";
import { TASK_LIMITS } from "../../core/config/limits.ts";
import { parse, stringify } from "yaml";

/** How a case ended. */
export type Outcome = "ok" | "located" | "finding";

/** One fuzz case's result. */
export interface CaseResult {
  readonly outcome: Outcome;
  /** What went wrong (findings), or the error message (located). */
  readonly detail?: string;
  /** The mutated files, to reproduce a finding. */
  readonly files?: Record<string, string>;
}

/**
 * A fuzz target: one entry point. `run` builds a case from the random
 * stream `r` in the empty temporary folder `dir` (removed afterwards), runs
 * the entry point in-process and judges it.
 */
export interface FuzzTarget {
  /** The entry point, as a finding names it (`plan --merge`). */
  readonly name: string;
  /** How often a case picks this target, relative to the others. */
  readonly weight: number;
  /** Builds, runs and judges one case. */
  run(r: () => number, dir: string): CaseResult | Promise<CaseResult>;
}

/** Values a mutation puts in place of a scalar. */
export const HOSTILE: readonly unknown[] = [
  0,
  -1,
  1,
  0.5,
  1e308,
  -1e308,
  5e-324,
  1e-13,
  4294967297,
  1e20,
  9007199254740991,
  "NaN",
  "Infinity",
  "constructor",
  "toString",
  "__proto__",
  "../../x",
  "",
  "x".repeat(300),
  "\u0000\u0007\u001b[2J",
  "H100\n::error::injected\ninstance_groups: []",
  true,
  null,
  [],
  {},
  [1, [2]],
];

/** One of `xs`, by the stream `r`. */
export function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)];
}

/** What a task printed and returned, or what it threw. */
export interface TaskRun {
  /** The exit code (undefined when it threw). */
  readonly code?: number;
  /** Its stdout lines. */
  readonly out: string[];
  /** Its stderr lines. */
  readonly err: string[];
  /** What escaped it: an uncaught exception is the CLI's exit 1 with a stack trace. */
  readonly thrown?: unknown;
}

/** Runs a task's in-process entry point (`runPlan`, `runCompare`, …) with `argv`, capturing its lines. */
export async function runTask(
  task: (argv: readonly string[], io: TaskOutput) => number | Promise<number>,
  argv: readonly string[],
): Promise<TaskRun> {
  const out: string[] = [];
  const err: string[] = [];
  const io: TaskOutput = { out: (l) => out.push(l), err: (l) => err.push(l) };
  try {
    return { code: await task(argv, io), out, err };
  } catch (thrown) {
    return { out, err, thrown };
  }
}

/** How to judge a task run. */
export interface JudgeOptions {
  /** Exit codes that are not findings besides 0 and 2 (e.g. 1: "nothing met the SLOs"). */
  readonly alsoOk?: readonly number[];
  /** Strings of the case's own files a task may echo (a NaN there is not computed). */
  readonly echoed?: readonly string[];
  /** Words one of which an exit-2 line must name (the case's file names and flags). */
  readonly located: readonly string[];
  /** The case's files, kept with a finding to reproduce it. */
  readonly files?: Record<string, string>;
}

/**
 * The verdict on a task run: `finding` for an exception, an internal error,
 * an unexpected exit code, an exit-2 line that names none of the case's
 * files or flags, an over-long line, NaN or Infinity in what it computed,
 * or a workflow command (`::error`) on stdout; else `located` (exit 2) or
 * `ok`.
 */
export function judge(run: TaskRun, o: JudgeOptions): CaseResult {
  const finding = (detail: string): CaseResult => ({
    outcome: "finding",
    detail: detail.slice(0, 300),
    ...(o.files ? { files: o.files } : {}),
  });
  if (run.thrown !== undefined) {
    const e = run.thrown;
    return finding(`uncaught ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
  }
  const lines = [...run.out, ...run.err];
  const long = lines.find((l) => l.length > TASK_LIMITS.messageChars + 200);
  if (long !== undefined) return finding(`a line of ${long.length} characters`);
  if (run.err.some((l) => /internal error/.test(l))) return finding(run.err.join(" | "));
  const injected = run.out.find((l) => /^::[a-z-]+( |::)/.test(l));
  if (injected !== undefined) return finding(`workflow command on stdout: ${injected}`);
  let computed = lines.join("\n");
  for (const x of o.echoed ?? []) if (x) computed = computed.split(x).join("");
  if (/\bNaN\b|Infinity/.test(computed)) return finding(`NaN or Infinity printed: ${computed.slice(0, 200)}`);
  const code = run.code!;
  if (code === 2) {
    if (run.err.length === 0) return finding("exit 2 without a message");
    const text = run.err.join("\n");
    if (!o.located.some((w) => w && text.includes(w))) return finding(`unlocated: ${text}`);
    return { outcome: "located", detail: text };
  }
  if (code === 0 || o.alsoOk?.includes(code)) return { outcome: "ok" };
  return finding(`exit ${code}: ${run.err.join(" | ")}`);
}

/** Every file under `dir` with its text (symbolic links as `-> target`), to see what a task wrote. */
export function treeOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const e of Deno.readDirSync(rel ? `${dir}/${rel}` : dir)) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (e.isSymlink) out[path] = `-> ${Deno.readLinkSync(`${dir}/${path}`)}`;
      else if (e.isDirectory) walk(path);
      else if (e.isFile) out[path] = Deno.readTextFileSync(`${dir}/${path}`);
    }
  };
  walk("");
  return out;
}

export type Node = Record<string, unknown> | unknown[];

/** Every path to a value in a parsed document. */
function paths(v: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (v !== null && typeof v === "object") {
    for (const [k, x] of Object.entries(v as Node)) {
      const p = [...at, Array.isArray(v) ? Number(k) : k];
      out.push(p);
      paths(x, p, out);
    }
  }
  return out;
}

function parentOf(doc: unknown, p: (string | number)[]): Node {
  let v = doc as Node;
  for (const k of p.slice(0, -1)) v = (v as Record<string, unknown>)[k as string] as Node;
  return v;
}

/** One mutation of a YAML text: structural when it parses, raw otherwise or by chance. */
export function mutate(text: string, r: () => number): string {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
  const roll = r();
  if (roll < 0.15) {
    // Raw: cut, insert a character, or swap two lines.
    const lines = text.split("\n");
    const op = pick(["cut", "insert", "swap"]);
    if (op === "cut") return text.slice(0, Math.floor(r() * text.length));
    if (op === "insert") {
      const at = Math.floor(r() * text.length);
      return text.slice(0, at) + pick([":", "- ", "{", "[", "&a ", "*a", "\t", "'", "\u0000"]) + text.slice(at);
    }
    const i = Math.floor(r() * lines.length);
    const j = Math.floor(r() * lines.length);
    [lines[i], lines[j]] = [lines[j], lines[i]];
    return lines.join("\n");
  }
  const doc = parse(text);
  const all = paths(doc);
  if (all.length === 0) return text;
  const p = pick(all);
  const parent = parentOf(doc, p);
  const key = p[p.length - 1];
  if (roll < 0.3) {
    if (Array.isArray(parent)) parent.splice(key as number, 1);
    else delete (parent as Record<string, unknown>)[key as string];
  } else if (roll < 0.38 && Array.isArray(parent)) {
    parent.push(structuredClone(parent[key as number]));
  } else {
    (parent as Record<string, unknown>)[key as string] = structuredClone(pick(HOSTILE));
  }
  return stringify(doc);
}
