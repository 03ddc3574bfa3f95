/**
 * Fuzz target `compare`: two run documents (`--output_json`) in a case
 * folder, the second mutated (hostile values at random key paths, keys
 * dropped, arrays made long, numbers beyond a double, `__proto__` keys,
 * deep nesting, cut text) or not a regular file at all (a symbolic link, a
 * FIFO, a folder, nothing), and at times `--report` aimed at an input, at
 * a symbolic link (to an input, or out of the folder: a link the user
 * names is followed, as cli_output.ts rules) or at a folder. `deno task compare`
 * runs in-process; the case is judged by the promise of every task (exit 0
 * or one located exit-2 line, no NaN or Infinity it computed), and nothing
 * but the report it was asked for may change: not the inputs, not
 * `outside/precious.txt` (unless the user's `--report` link names it).
 *
 * @module
 */
import { parse, stringify } from "yaml";
import { denoFileSystem } from "../../core/config/load.ts";
import type { FileSystem } from "../../core/config/load.ts";
import { runFiles } from "../../core/assembly/run.ts";
import { runJson } from "../../core/report/run_json.ts";
import { runCompare } from "../../tools/compare.ts";
import { HOSTILE, judge, pick, runTask, treeOf } from "./_common.ts";
import type { CaseResult, FuzzTarget } from "./_common.ts";

const root = new URL("../../", import.meta.url);

let seedText: string | undefined;

/**
 * The seed: a small run's document with its CDFs and time series (the
 * bundled example, 50 requests), made once per process.
 */
function seedDocument(): string {
  if (seedText !== undefined) return seedText;
  const common = parse(Deno.readTextFileSync(new URL("examples/common.yaml", root))) as {
    load_gen: { num_requests: number };
  };
  common.load_gen.num_requests = 50;
  const files: Record<string, string> = {
    "instances.yaml": Deno.readTextFileSync(new URL("examples/instances.yaml", root)),
    "common.yaml": stringify(common),
  };
  const fs: FileSystem = {
    readText: (p) => (Object.hasOwn(files, p) ? files[p] : denoFileSystem.readText(p)),
    isDirectory: (p) => denoFileSystem.isDirectory(p),
  };
  return seedText = runJson(runFiles(["instances.yaml"], "common.yaml", { fs, timeseries: true }));
}

type Key = string | number;

/** Every key path of a parsed document (its values, nested ones included). */
function pathsOf(doc: unknown): Key[][] {
  const out: Key[][] = [];
  const stack: [unknown, Key[]][] = [[doc, []]];
  while (stack.length) {
    const [v, at] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    for (const [k, x] of Object.entries(v)) {
      const p = [...at, Array.isArray(v) ? Number(k) : k];
      out.push(p);
      stack.push([x, p]);
    }
  }
  return out;
}

/** The object or array holding the value at `p`. */
function parentOf(doc: unknown, p: readonly Key[]): Record<Key, unknown> {
  let v = doc as Record<Key, unknown>;
  for (const k of p.slice(0, -1)) v = v[k] as Record<Key, unknown>;
  return v;
}

/** Every string of a document (what the task may echo: a group named "NaN"). */
function stringsOf(doc: unknown): string[] {
  const out: string[] = [];
  const stack: unknown[] = [doc];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === "string") out.push(v);
    else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        out.push(k);
        stack.push(x);
      }
    }
  }
  return out;
}

/** One structural mutation of a parsed document, in place. */
function mutateDoc(doc: Record<string, unknown>, r: () => number): void {
  const all = pathsOf(doc);
  const p = pick(r, all);
  const parent = parentOf(doc, p);
  const key = p[p.length - 1];
  const roll = r();
  if (roll < 0.2) {
    if (Array.isArray(parent)) parent.splice(key as number, 1);
    else delete parent[key];
  } else if (roll < 0.3) {
    // A long array in a small file: one of the document's series, or any value, repeated.
    const arrays = all.filter((q) => Array.isArray(parentOf(doc, q)[q[q.length - 1]]));
    const q = arrays.length ? pick(r, arrays) : p;
    const holder = parentOf(doc, q);
    const n = pick(r, [257, 300, 1000, 5000]);
    // Numbers (a series of n points) or one small value repeated: a file of tens of kilobytes at most.
    const first = Array.isArray(holder[q[q.length - 1]]) ? (holder[q[q.length - 1]] as unknown[])[0] : undefined;
    const v = typeof first === "number" ? first : pick(r, [1, null, "x", {}]);
    holder[q[q.length - 1]] = Array.from({ length: n }, (_, i) => (typeof v === "number" ? v * (1 + i / n) : v));
  } else if (roll < 0.4) {
    parent[key] = pick(r, [1e308, -1e308, 0, -0.5, 5e-324, -1, 1e15, 1.7e308]);
  } else if (roll < 0.45) {
    // Many groups with names a table prints.
    doc.groups = Array.from({ length: pick(r, [3, 30, 300]) }, (_, i) => ({
      group: pick(r, ["g", "::error::x", "a\nb", "NaN", "x".repeat(300), "__proto__"]) + i,
      mean_batch: i,
    }));
  } else {
    parent[key] = structuredClone(pick(r, HOSTILE));
  }
}

/** One raw mutation of a document's text. */
function mutateText(text: string, r: () => number): string {
  const op = pick(r, ["cut", "inf", "proto", "deep", "nest-unknown"]);
  if (op === "cut") return text.slice(0, Math.floor(r() * text.length));
  if (op === "inf") {
    // A number beyond a double: JSON.parse makes it an infinity.
    const numbers = [...text.matchAll(/:(-?\d+(\.\d+)?(e[+-]?\d+)?)[,}\]]/g)];
    if (numbers.length === 0) return text;
    const m = pick(r, numbers);
    const at = m.index! + 1;
    return text.slice(0, at) + pick(r, ["1e999", "-1e999"]) + text.slice(at + m[1].length);
  }
  const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
  if (op === "proto") {
    return text.replace(
      pick(r, ['{"per_metric_summary":', '"overall_summary":{', '"groups":[{']),
      (s) => `${s}${s.endsWith("{") ? "" : "{"}"__proto__":{"polluted":1},${s.endsWith("{") ? "" : '"x":1}'}`,
    );
  }
  if (op === "deep") return text.replace('"load":', `"load":${deep(20000)},"load_":`);
  return text.replace("{", `{"nested":${deep(pick(r, [100, 20000]))},`);
}

/** Whether `mkfifo` can be run here (checked once). */
let fifoOk: boolean | undefined;
function makeFifo(path: string): boolean {
  if (fifoOk === false) return false;
  try {
    const ok = new Deno.Command("mkfifo", { args: [path], stderr: "null", stdout: "null" }).outputSync().success;
    fifoOk = ok;
    return ok;
  } catch {
    fifoOk = false;
    return false;
  }
}

/** One case: write A and a mutated B, maybe a hostile `--report`, run `deno task compare`, judge. */
async function compareCase(r: () => number, dir: string): Promise<CaseResult> {
  Deno.mkdirSync(`${dir}/outside`);
  Deno.writeTextFileSync(`${dir}/outside/precious.txt`, "precious");
  const seed = seedDocument();
  const a = `${dir}/a.json`;
  const b = `${dir}/b.json`;
  Deno.writeTextFileSync(a, seed);
  // B: the seed unchanged (an ok case), mutated, or not a regular file.
  const files: Record<string, string> = {};
  let bText = seed;
  const kind = r();
  if (kind < 0.15) {
    // Unchanged: compares with no change.
  } else if (kind < 0.75) {
    const doc = JSON.parse(seed) as Record<string, unknown>;
    const n = 1 + Math.floor(r() * 3);
    for (let i = 0; i < n; i++) mutateDoc(doc, r);
    bText = JSON.stringify(doc);
  } else {
    bText = mutateText(seed, r);
  }
  const special = r();
  if (special < 0.04) Deno.symlinkSync(`${dir}/outside/precious.txt`, b);
  else if (special < 0.07) Deno.symlinkSync(a, b);
  else if (special < 0.1 && makeFifo(b)) {
    // A FIFO: never opened (opening one blocks until a writer comes).
  } else if (special < 0.12) Deno.mkdirSync(b);
  else if (special < 0.14) {
    // No B at all.
  } else {
    Deno.writeTextFileSync(b, bText);
    files["b.json"] = bText.length > 20_000 ? `${bText.slice(0, 20_000)}…` : bText;
  }
  const argv = [a, b];
  let report: string | undefined;
  if (r() < 0.3) {
    const target = pick(r, [
      "report.html",
      "report.html",
      "a.json",
      "b.json",
      "link.html",
      "outside",
      "missing/r.html",
    ]);
    // A link the user names is followed (as /dev/stdout is), but never onto an input.
    if (target === "link.html") {
      Deno.symlinkSync(r() < 0.5 ? `${dir}/outside/precious.txt` : a, `${dir}/link.html`);
    }
    report = `${dir}/${target}`;
    argv.push("--report", report);
  }
  if (r() < 0.2) argv.push("--changed");
  const before = treeOf(dir);
  const run = await runTask(runCompare, argv);
  let echoed: string[] = [];
  try {
    echoed = stringsOf(JSON.parse(bText));
  } catch {
    // Not JSON: nothing of it is echoed as a value.
  }
  const verdict = judge(run, { located: ["a.json", "b.json", "--report"], echoed, files });
  if (verdict.outcome === "finding") return verdict;
  // Nothing changed but the report asked for (written only on success, at a plain path).
  const after = treeOf(dir);
  // The report asked for, written only on success: at a plain path, or through the link the user named.
  const written = report === undefined || run.code !== 0
    ? ""
    : report.endsWith("/report.html")
    ? "report.html"
    : report.endsWith("/link.html") && Deno.readLinkSync(report).endsWith("precious.txt")
    ? "outside/precious.txt"
    : "";
  delete after[written];
  delete before[written];
  for (const [k, v] of Object.entries(before)) {
    if (after[k] !== v) return { outcome: "finding", detail: `${k} changed (${argv.slice(2).join(" ")})`, files };
  }
  const added = Object.keys(after).filter((k) => !(k in before));
  if (added.length) return { outcome: "finding", detail: `wrote ${added.join(", ")}`, files };
  if (written && !Deno.readTextFileSync(report!).startsWith("<!DOCTYPE html>")) {
    return { outcome: "finding", detail: "no report", files };
  }
  return verdict;
}

/** `deno task compare` on two run documents, one mutated (tools/compare.ts). */
export const COMPARE_TARGET: FuzzTarget = { name: "compare", weight: 1, run: compareCase };
