/**
 * Fuzz target: `plan --merge DIR --out OUT`. Each case writes the shards
 * of a small real search (planned once per process, in-process, then dealt
 * into 1 to 4 shards) and mutates the folder: a shard dropped, duplicated
 * or renamed, its count or index changed, a hostile value at a random JSON
 * path, a key removed, the JSON cut short, a device name carrying a
 * workflow command, a shard behind a symbolic link (followed) or a
 * dangling one, a folder in a shard's place, a target rate the common file
 * cannot take, and an output that is a symbolic link to a file outside.
 * The promise: exit 0 with a plan whose files hold no injected line, or
 * one located exit-2 line; never an exception, a workflow command on
 * stdout, NaN, or a change outside the case folder.
 *
 * @module
 */
import { planShard } from "../../core/planner/planner.ts";
import type { CandidateOutcome, PlanRequest, ShardOutcome } from "../../core/planner/planner.ts";
import { runPlan } from "../../tools/plan.ts";
import { HOSTILE, judge, pick, runTask, treeOf } from "./_common.ts";
import type { CaseResult, FuzzTarget } from "./_common.ts";

/** The search's common file: a short fixed-length workload (each candidate is a few runs of 20 requests). */
const COMMON = `model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
load_gen: {load_gen_type: fixed_length, num_requests: 20, num_input_tokens: 128, num_output_tokens: 16, request_rate: 1.0}
`;

/** The device name of the reproducer: a workflow command and a YAML key on lines of their own. */
const INJECTED = "H100\n::error::injected\ninstance_groups: []";

/** The search: three candidates, two planned (priced) and one infeasible (tp 4 exceeds max_devices 2). */
function baseRequest(commonFile: string): PlanRequest {
  return {
    commonFile,
    targetRate: 2,
    slos: [{ key: "ttft.p99", bound: "<= 2" }],
    devices: ["H100_SXM_80G"],
    tpSizes: [1, 2, 4],
    topologies: ["agg"],
    maxDevices: 2,
    prices: { H100_SXM_80G: 2.5 },
    seeds: 1,
  };
}

/** Every candidate's outcome of the search, planned once per process (outcomes do not depend on the file's path). */
let outcomes: readonly (readonly [number, CandidateOutcome])[] | undefined;

/** The `index`-th of `count` shards of the search, as `--shard` writes it. */
function shardOf(request: PlanRequest, index: number, count: number): ShardOutcome {
  return { request, shard: { index, count }, outcomes: outcomes!.filter(([p]) => p % count === index) };
}

type Json = Record<string, unknown> | unknown[];

/** Every path to a value in a parsed document. */
function pathsOf(v: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (v !== null && typeof v === "object") {
    for (const [k, x] of Object.entries(v as Json)) {
      const p = [...at, Array.isArray(v) ? Number(k) : k];
      out.push(p);
      pathsOf(x, p, out);
    }
  }
  return out;
}

/** The object holding the value at `p`. */
function parentOf(doc: unknown, p: readonly (string | number)[]): Record<string, unknown> {
  let v = doc as Record<string, unknown>;
  for (const k of p.slice(0, -1)) v = v[k as string] as Record<string, unknown>;
  return v;
}

/** One case: a shard folder, mutated or not, merged; judged. */
async function mergeCase(r: () => number, dir: string): Promise<CaseResult> {
  const common = `${dir}/c.yaml`;
  Deno.writeTextFileSync(common, COMMON);
  const request = baseRequest(common);
  outcomes ??= planShard(request, { index: 0, count: 1 }).outcomes;
  const shards = `${dir}/shards`;
  const out = `${dir}/out`;
  Deno.mkdirSync(shards);
  Deno.mkdirSync(`${dir}/elsewhere`);
  Deno.mkdirSync(`${dir}/outside`);
  Deno.writeTextFileSync(`${dir}/outside/precious.txt`, "precious\n");
  const before = treeOf(`${dir}/outside`);

  const count = 1 + Math.floor(r() * 4);
  // What the shard folder holds, by file name: a shard's document (mutated in place; its raw text once cut, and
  // whether it lies elsewhere behind a link), a link to nothing, or a folder.
  type Entry =
    | { kind: "shard"; doc: ShardOutcome & Record<string, unknown>; raw?: string; linked?: boolean }
    | { kind: "dangling" }
    | { kind: "folder" };
  const entries = new Map<string, Entry>();
  const name = (i: number, n: number) => `plan.shard-${i}-of-${n}.json`;
  for (let i = 0; i < count; i++) {
    entries.set(name(i, count), { kind: "shard", doc: structuredClone(shardOf(request, i, count)) as never });
  }
  const echoed: string[] = [];
  let outLink = false;
  let mergeIntoShards = r() < 0.2;
  const mutations = r() < 0.35 ? 0 : 1 + Math.floor(r() * 2);
  for (let m = 0; m < mutations; m++) {
    const shardNames = [...entries].filter(([, e]) => e.kind === "shard").map(([n]) => n);
    const target = pick(r, shardNames);
    if (target === undefined) break;
    const entry = entries.get(target) as Extract<Entry, { kind: "shard" }>;
    const doc = entry.doc;
    const op = pick(
      r,
      [
        "drop",
        "duplicate",
        "rename",
        "count",
        "index",
        "hostile",
        "hostile",
        "hostile",
        "delete",
        "cut",
        "device",
        "link",
        "dangling",
        "folder",
        "rate",
        "outlink",
      ] as const,
    );
    if (op === "drop") entries.delete(target);
    else if (op === "duplicate") {
      entries.set(name(Math.floor(r() * (count + 1)), count), { kind: "shard", doc: structuredClone(doc) });
    } else if (op === "rename") {
      entries.delete(target);
      entries.set(pick(r, [name(0, count + 1), `plan.shard-0${target.slice(11)}`, name(count, count)]), entry);
    } else if (op === "count" || op === "index") {
      const v = pick(r, [0, 1, count - 1, count + 1, 50_000_000, 9007199254740991, -1, 0.5, ...HOSTILE]);
      const at: unknown = doc.shard;
      if (at !== null && typeof at === "object") (at as Record<string, unknown>)[op] = structuredClone(v);
      if (typeof v === "string") echoed.push(v);
    } else if (op === "hostile" || op === "delete") {
      const p = pick(r, pathsOf(doc));
      if (p === undefined) continue;
      const parent = parentOf(doc, p);
      const key = p[p.length - 1];
      if (op === "delete") {
        if (Array.isArray(parent)) parent.splice(key as number, 1);
        else delete parent[key as string];
      } else {
        const v = pick(r, HOSTILE);
        parent[key as string] = structuredClone(v);
        if (typeof v === "string") echoed.push(v);
      }
    } else if (op === "cut") {
      const text = JSON.stringify(doc);
      entry.raw = text.slice(0, Math.floor(r() * text.length));
    } else if (op === "device") {
      const list: unknown = doc.outcomes;
      const o = Array.isArray(list) ? list[Math.floor(r() * list.length)] : undefined;
      if (Array.isArray(o) && o[1] !== null && typeof o[1] === "object") (o[1] as { device: string }).device = INJECTED;
    } else if (op === "link") entry.linked = true;
    else if (op === "dangling" || op === "folder") entries.set(target, { kind: op });
    else if (op === "rate") {
      for (const e of entries.values()) {
        const req = e.kind === "shard" ? e.doc.request : undefined;
        if (req !== null && typeof req === "object") (req as { targetRate: number }).targetRate = 1e-9;
      }
    } else {
      outLink = true;
      mergeIntoShards ||= r() < 0.5;
    }
  }
  const files: Record<string, string> = {};
  for (const [n, e] of entries) {
    const at = `${shards}/${n}`;
    if (e.kind === "folder") Deno.mkdirSync(at);
    else if (e.kind === "dangling") Deno.symlinkSync(`${dir}/elsewhere/missing-${n}`, at);
    else {
      const text = e.raw ?? JSON.stringify(e.doc);
      files[n] = text;
      const real = e.linked ? `${dir}/elsewhere/${n}` : at;
      Deno.writeTextFileSync(real, text);
      if (e.linked) Deno.symlinkSync(real, at);
    }
  }
  const outDir = mergeIntoShards ? shards : out;
  if (outLink) {
    Deno.mkdirSync(outDir, { recursive: true });
    Deno.symlinkSync(`${dir}/outside/precious.txt`, `${outDir}/${pick(r, ["plan.json", "deployment.yaml"])}`);
  }

  const run = await runTask(runPlan, ["--merge", shards, ...(mergeIntoShards ? [] : ["--out", out])]);
  const verdict = judge(run, { echoed, located: [shards, out, "c.yaml", "--out", "--merge"], files });
  const finding = (detail: string): CaseResult => ({ outcome: "finding", detail, files });
  if (verdict.outcome === "finding") return verdict;
  if (JSON.stringify(treeOf(`${dir}/outside`)) !== JSON.stringify(before)) {
    return finding("a file outside the case folder changed");
  }
  if (verdict.outcome === "located" && run.err.length !== 1) return finding(`${run.err.length} error lines`);
  if (verdict.outcome === "ok") {
    // What a merge writes holds the search's own values: one instance group, no line a shard injected.
    const deployment = Deno.readTextFileSync(`${outDir}/deployment.yaml`);
    if (deployment.match(/^instance_groups:/gm)?.length !== 1 || /::error/.test(deployment)) {
      return finding(`deployment.yaml: ${deployment.slice(0, 200)}`);
    }
    const plan = JSON.parse(Deno.readTextFileSync(`${outDir}/plan.json`));
    if (plan.ranked.some((c: { tokensPerDevice: number }) => !(c.tokensPerDevice >= 0))) {
      return finding("plan.json: a negative or missing tokens/s per device");
    }
  }
  return verdict;
}

/** `plan --merge` over generated shard folders. */
export const PLAN_MERGE_TARGET: FuzzTarget = { name: "plan --merge", weight: 1, run: mergeCase };
