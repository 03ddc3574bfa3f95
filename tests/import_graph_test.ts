/**
 * The import graph (issue 26): no file imports itself through others, and core/ is layered. The graph holds every
 * module of core/ and the modules that import core (mod.ts, cli.ts, scenarios/*.ts, tools/*.ts), with every local
 * module they reach; its edges are the static imports and re-exports (type-only ones too: a lower layer must not even
 * know a higher layer's types) and `import()` calls with a literal, as tests/_imports.ts reads them.
 *
 * @module
 */
import assert from "node:assert/strict";
import { dirname, join, relative } from "node:path";
import { ROOT } from "./_helpers.ts";
import { parseImports } from "./_imports.ts";
import type { ImportKind } from "./_imports.ts";

/**
 * The folders of core/, lowest layer first. A module of one folder imports modules of its own folder and of the folders
 * before it, never of one after it; every module of core/ lives in one of these folders.
 */
export const CORE_LAYERS = [
  "text", // plain-text layout every layer that prints shares: aligned columns
  "model", // model architectures: their specs, parameter and KV sizes, the catalog
  "workload", // request streams: arrival processes, length distributions, traces, the seeded random numbers
  "hardware", // devices and kernels: the step-cost model, the memory sizing and the parallel layout of a model on them
  "policy", // the engines' pluggable decisions (routing, admission, batch formation) and the one list of their names
  "config", // the input files: schema, loading, validation, engine profiles, calibrated constants; builds no engine
  "engine", // the discrete-event simulator: engines, KV cache, transfers and the event queue, using the policies
  "metrics", // what a simulated run measured: statistics, load, per-pool figures, time series, intervals, diagnoses
  "assembly", // one run: a validated config turned into the engines' specs and workload (assemble), simulated, summarized
  "scenario", // scenario files: assertions, sweeps and capacity searches, seeds, baselines, over assembled runs
  "report", // everything printed or written about runs and scenarios: tables, JSON, HTML and SVG, CI formats, compare
  "calibrate", // fitting device and engine constants to measurements and to validation scenarios
  "launch", // launch configurations of a deployment for each engine: commands, options files, Kubernetes manifests
  "planner", // the capacity planner: searching deployments that meet an SLO at a rate
] as const;

/** One edge of the graph: `from` names `to` (paths relative to the repository). */
interface Edge {
  readonly from: string;
  readonly to: string;
  readonly line: number;
  readonly kind: ImportKind;
}

const exists = (path: string) => {
  try {
    return Deno.statSync(join(ROOT, path)).isFile;
  } catch {
    return false;
  }
};

/** The `.ts` modules under `dir` (relative to the repository), recursively when `deep`. */
function modulesUnder(dir: string, deep: boolean): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(join(ROOT, dir))) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory && deep) out.push(...modulesUnder(path, deep));
    else if (e.isFile && e.name.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** Where the graph starts: every module of core/, and the modules that import core. */
const ROOTS = [
  ...modulesUnder("core", true),
  "mod.ts",
  "cli.ts",
  ...modulesUnder("scenarios", false),
  ...modulesUnder("tools", false),
].sort();

/** The graph: the edges out of every module reached from {@link ROOTS} through relative imports. */
function importGraph(): Map<string, Edge[]> {
  const graph = new Map<string, Edge[]>();
  const todo = [...ROOTS];
  while (todo.length) {
    const from = todo.pop()!;
    if (graph.has(from)) continue;
    const edges: Edge[] = [];
    graph.set(from, edges);
    if (!/\.[mc]?[jt]sx?$/.test(from)) continue; // JSON and other data: a leaf
    for (const ref of parseImports(Deno.readTextFileSync(join(ROOT, from)))) {
      if (!ref.specifier.startsWith("./") && !ref.specifier.startsWith("../")) continue;
      const to = relative(ROOT, join(ROOT, dirname(from), ref.specifier));
      assert.ok(exists(to), `${from}:${ref.line}: '${ref.specifier}' names no file`);
      edges.push({ from, to, line: ref.line, kind: ref.kind });
      todo.push(to);
    }
  }
  return graph;
}

const GRAPH = importGraph();

/** The strongly connected components of the graph with a cycle in them (Tarjan's algorithm). */
function cyclicComponents(graph: Map<string, Edge[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const { to } of graph.get(v) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(v, Math.min(low.get(v)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(v, Math.min(low.get(v)!, index.get(to)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)!.some((e) => e.to === v)) out.push(component.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

/** One cycle through `start` inside `component`, as `a → b → … → a` (a shortest one, by breadth-first search). */
function cycleThrough(start: string, component: readonly string[]): string {
  const inside = new Set(component);
  const parent = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift()!;
    for (const { to } of GRAPH.get(v)!) {
      if (!inside.has(to) || parent.has(to)) continue;
      parent.set(to, v);
      if (to === start) {
        const path = [start];
        for (let w = v; w !== start; w = parent.get(w)!) path.unshift(w);
        return [start, ...path].join(" → ");
      }
      queue.push(to);
    }
  }
  return start;
}

/** The layer of a module of core/ (its index in {@link CORE_LAYERS}), or -1 outside core/ or outside any layer. */
function layerOf(path: string): number {
  const m = /^core\/([^/]+)\//.exec(path);
  return m ? (CORE_LAYERS as readonly string[]).indexOf(m[1]) : -1;
}

Deno.test("the import reader takes every form of import, and none written in comments, strings or templates", () => {
  const src = [
    'import assert from "node:assert/strict";',
    'import type { A } from "./a.ts";',
    'import { type B, c } from "./b.ts";',
    'import * as ns from "./ns.ts";',
    'import d, {\n  e,\n} from "./d.ts";',
    'import "./side.ts";',
    'import data from "./data.json" with { type: "json" };',
    'export { f } from "./f.ts";',
    'export type { G } from "./g.ts";',
    'export * from "./star.ts";',
    "export { h };",
    "export const i = 1;",
    'const lazy = () => import("./lazy.ts");',
    "const url = import.meta.url;",
    '// import { no } from "./comment.ts";',
    '/** ```ts\n * import { no } from "./doc.ts";\n * ``` */',
    "const s = \"import { no } from './string.ts'\";",
    'const t = `\nimport { no } from "./template.ts";\n${x ? `import "./nested.ts"` : ""}`;',
    "const r = /[\"'`]/.test(s) ? 1 / 2 : 3; // a quote in a regular expression",
    'const o = { import: "./key.ts" };',
    'import { j } from "./after.ts";',
  ].join("\n");
  assert.deepEqual(parseImports(src).map((r) => `${r.line} ${r.kind} ${r.specifier}`), [
    "1 import node:assert/strict",
    "2 import type ./a.ts",
    "3 import ./b.ts",
    "4 import ./ns.ts",
    "5 import ./d.ts",
    "8 side effect ./side.ts",
    "9 import ./data.json",
    "10 export ./f.ts",
    "11 export type ./g.ts",
    "12 export ./star.ts",
    "15 dynamic ./lazy.ts",
    "27 import ./after.ts",
  ]);
});

Deno.test("no module imports itself through others", () => {
  const cycles = cyclicComponents(GRAPH).map((c) => `${cycleThrough(c[0], c)}   (the cycle's files: ${c.join(", ")})`);
  assert.deepEqual(cycles, [], `import cycles:\n${cycles.join("\n")}`);
});

Deno.test("every module of core/ is in a folder of the layer table, and every folder of the table exists", () => {
  const core = ROOTS.filter((p) => p.startsWith("core/"));
  const outside = core.filter((p) => layerOf(p) < 0);
  assert.deepEqual(outside, [], "modules of core/ outside the folders of CORE_LAYERS (add the folder to the table)");
  const folders = new Set(core.map((p) => p.split("/")[1]));
  assert.deepEqual(CORE_LAYERS.filter((l) => !folders.has(l)), [], "CORE_LAYERS names folders without modules");
});

Deno.test("no module of a lower core/ layer imports one of a higher layer", () => {
  const offending = [
    ...new Set(
      [...GRAPH.values()].flat().filter((e) => layerOf(e.from) >= 0 && layerOf(e.from) < layerOf(e.to)).map((e) =>
        `${e.from} → ${e.to}`
      ),
    ),
  ].sort();
  assert.deepEqual(
    offending,
    [],
    `imports from a lower layer to a higher one (CORE_LAYERS, lowest first: ${CORE_LAYERS.join(" < ")}):\n${
      offending.join("\n")
    }`,
  );
});

Deno.test("no module of core/ imports the modules above it (mod.ts, cli.ts, scenarios/, tools/, tests/)", () => {
  const upward = [
    ...new Set(
      [...GRAPH.values()].flat().filter((e) => e.from.startsWith("core/") && !e.to.startsWith("core/")).map((e) =>
        `${e.from} → ${e.to}`
      ),
    ),
  ].sort();
  assert.deepEqual(upward, [], `core/ importing what sits above it:\n${upward.join("\n")}`);
});
