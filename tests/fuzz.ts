/**
 * A seeded mutation fuzzer over the bundled configurations and a trace: each
 * case mutates one seed pair (a value swapped for an extreme or hostile one,
 * a key dropped, an entry duplicated, or the raw text cut or corrupted),
 * runs it in-process as the CLI would, and judges the outcome. The promise
 * is the issue 11 one: bad input is an `InputError` located at a file (the
 * CLI's exit 2), good input runs (exit 0), and no output holds NaN. Anything
 * else — another exception (the CLI's exit 1 with a stack trace under
 * SERVINGCAST_DEBUG) or NaN in the table or the JSON — is a finding.
 *
 * Besides the simulator's configurations, the other entry points are
 * targets of their own (tests/fuzz_targets/): `plan --merge` shard
 * folders, `calibrate` inputs, `compare` documents and `scenarioTests`
 * file trees (symbolic links included). Each case picks one target by its
 * seed; a target builds its files in a fresh temporary folder, runs the
 * entry point in-process as its task would, and judges the outcome by the
 * same promise: exit 0 (or 1 where the task means "a check failed") or a
 * located exit-2 line, never an exception, a NaN or Infinity, a write
 * outside its folder, or a workflow command it did not make.
 *
 * Used by `tests/fuzz_test.ts` (a few hundred cases in the suite) and
 * `deno task fuzz --cases N [--seed S]` (longer runs).
 *
 * @module
 */
import { parse, stringify } from "yaml";
import { InputError } from "../core/config/errors.ts";
import { pools, runFiles } from "../core/assembly/run.ts";
import { runJson } from "../core/report/run_json.ts";
import { formatExtSection, formatGroupTable, formatSummaryTable } from "../core/report/mod.ts";
import { memoryFs } from "./_helpers.ts";
import { HOSTILE, mutate } from "./fuzz_targets/_common.ts";
import type { CaseResult, FuzzTarget, Node } from "./fuzz_targets/_common.ts";
import { SCENARIO_TREE_TARGET } from "./fuzz_targets/scenario_tree.ts";
import { PLAN_MERGE_TARGET } from "./fuzz_targets/merge.ts";
import { COMPARE_TARGET } from "./fuzz_targets/compare.ts";
import { CALIBRATE_TARGET } from "./fuzz_targets/calibrate.ts";
export type { CaseResult, FuzzTarget, Outcome } from "./fuzz_targets/_common.ts";

const root = new URL("../", import.meta.url);
const read = (p: string) => Deno.readTextFileSync(new URL(p, root));

/** A seed pair: an instance file, a common file and the files they name. */
interface Seed {
  readonly instance: string;
  readonly common: string;
  readonly extra: Readonly<Record<string, string>>;
}

let seedPairs: readonly Seed[] | undefined;

/** The seed pairs, read once (every case copies what it mutates). */
function seeds(): readonly Seed[] {
  return seedPairs ??= readSeeds();
}

/** Seed pairs from the bundled files. Request counts are capped to keep cases fast. */
function readSeeds(): Seed[] {
  const pairs: [string, string][] = [
    ["examples/instances.yaml", "examples/common.yaml"],
    ["scenarios/configs/h100_tp1_x1.yaml", "scenarios/configs/llama8b_chat.yaml"],
    ["scenarios/configs/h100_pd_1p2d.yaml", "scenarios/configs/llama8b_long_prompt.yaml"],
    ["scenarios/configs/ascend_tp2_dp2.yaml", "scenarios/configs/qwen3_32b_w8a8_chat.yaml"],
    ["scenarios/configs/h200_x8_deepseek.yaml", "scenarios/configs/deepseek_v3_chat_mtp.yaml"],
    ["scenarios/configs/h100_tp1_x2.yaml", "scenarios/configs/trace_replay.yaml"],
  ];
  return pairs.map(([i, c]) => {
    const common = parse(read(c)) as { load_gen?: { num_requests?: number } };
    if (common.load_gen && typeof common.load_gen.num_requests === "number") {
      common.load_gen.num_requests = Math.min(common.load_gen.num_requests, 120);
    }
    return {
      instance: read(i),
      common: stringify(common),
      extra: { "traces/mooncake_like_sample.jsonl": read("scenarios/configs/traces/mooncake_like_sample.jsonl") },
    };
  });
}

/** A small deterministic PRNG (mulberry32): the fuzzer's own stream. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The simulator's configurations, in memory (no folder needed). */
const SIM_TARGET: FuzzTarget = { name: "sim", weight: 4, run: (r) => simCase(r) };

/** Every target; tests/fuzz_targets/ adds the other entry points. */
export const FUZZ_TARGETS: readonly FuzzTarget[] = [
  SIM_TARGET,
  SCENARIO_TREE_TARGET,
  PLAN_MERGE_TARGET,
  COMPARE_TARGET,
  CALIBRATE_TARGET,
];

/**
 * Runs case `n` of the campaign seeded `seed`: the target its seed picks,
 * in a temporary folder of its own. `only` restricts the campaign to one
 * target (by name).
 */
export async function fuzzCase(seed: number, n: number, only?: string): Promise<CaseResult> {
  const r = rng(seed * 1_000_003 + n);
  const targets = only === undefined ? FUZZ_TARGETS : FUZZ_TARGETS.filter((t) => t.name === only);
  if (targets.length === 0) throw new Error(`no fuzz target named '${only}'`);
  const total = targets.reduce((t, x) => t + x.weight, 0);
  let pick = r() * total;
  const target = targets.find((t) => (pick -= t.weight) < 0) ?? targets[targets.length - 1];
  if (target === SIM_TARGET) return simCase(r);
  const dir = Deno.makeTempDirSync({ prefix: "servingcast-fuzz-" });
  try {
    const result = await target.run(r, dir);
    return result.outcome === "finding" ? { ...result, detail: `${target.name}: ${result.detail}` } : result;
  } catch (e) {
    return {
      outcome: "finding",
      detail: `${target.name}: uncaught ${e instanceof Error ? `${e.name}: ${e.message}` : e}`,
    };
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

/** One case of the simulator target: a mutated configuration pair, run in memory. */
function simCase(r: () => number): CaseResult {
  const all = seeds();
  const s = all[Math.floor(r() * all.length)];
  const files: Record<string, string> = { "i.yaml": s.instance, "c.yaml": s.common, ...s.extra };
  const target = r() < 0.5 ? "i.yaml" : r() < 0.9 ? "c.yaml" : "traces/mooncake_like_sample.jsonl";
  const mutations = 1 + Math.floor(r() * 2);
  for (let m = 0; m < mutations; m++) {
    try {
      files[target] = target.endsWith(".jsonl") ? mutateTrace(files[target], r) : mutate(files[target], r);
    } catch {
      // The text no longer parses as YAML: mutate it raw from here on.
      files[target] = files[target].slice(0, Math.floor(r() * files[target].length));
    }
  }
  try {
    const out = runFiles(["i.yaml"], "c.yaml", { fs: memoryFs(files) });
    const text = formatSummaryTable(out.summary) + formatExtSection(out.summary) +
      formatGroupTable(pools(out).groups) + runJson(out);
    // A user's own string (a group named "NaN") is echoed, not computed: only other NaN counts.
    const echoed = userStrings(files).filter((x) => x.includes("NaN"));
    const computed = echoed.reduce((t, x) => t.split(x).join(""), text);
    if (/\bNaN\b/.test(computed)) return { outcome: "finding", detail: "NaN in the output", files };
    return { outcome: "ok" };
  } catch (e) {
    if (e instanceof InputError && e.location.file) return { outcome: "located", detail: e.message };
    return {
      outcome: "finding",
      detail: `${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`.slice(0, 300),
      files,
    };
  }
}

/** Mutates one line of a JSONL trace: a field set to a hostile value, or the line cut. */
function mutateTrace(text: string, r: () => number): string {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  const i = Math.floor(r() * lines.length);
  if (r() < 0.3) lines[i] = lines[i].slice(0, Math.floor(r() * lines[i].length));
  else {
    const o = JSON.parse(lines[i]) as Record<string, unknown>;
    const keys = Object.keys(o);
    o[keys[Math.floor(r() * keys.length)]] = HOSTILE[Math.floor(r() * HOSTILE.length)];
    lines[i] = JSON.stringify(o);
  }
  return lines.join("\n") + "\n";
}

/** Every string value of the YAML files of a case (what a run may echo). */
function userStrings(files: Record<string, string>): string[] {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === "string") out.push(v);
    else if (v !== null && typeof v === "object") Object.values(v as Node).forEach(walk);
  };
  for (const [name, text] of Object.entries(files)) {
    if (!name.endsWith(".yaml")) continue;
    try {
      walk(parse(text));
    } catch {
      // Not YAML any more: nothing of it is echoed as a value.
    }
  }
  return out;
}
