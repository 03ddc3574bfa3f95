import assert from "node:assert/strict";
import { boundWarnings, leaveOneSourceOut, predictRows, reportedConstants, Target } from "./loso.ts";
import { collectRows, loadRegistry } from "./registry.ts";
import { fidelityReport, gateFailures } from "./fidelity.ts";
import { loadScenario } from "../scenario/scenario.ts";
import type { FileSystem } from "../config/load.ts";
import { memoryFs } from "./_memory_fs.ts";

const STEP = "host.vllm-0.10.step_us"; // range 200–3000 µs, prior 1000

const INSTANCE = `instance_groups:
  - {num_instances: 1, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: both}
`;
/** vLLM 0.10 serving `n` requests at a time, 256 in / 64 out: its TPOT carries the step cost. */
const common = (n: number) =>
  `model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
load_gen: {load_gen_type: fixed_length, num_requests: ${n}, num_input_tokens: 256, num_output_tokens: 64, request_rate: .inf}
serving_config: {max_concurrency: ${n}, block_size: 16, engine: vllm, engine_version: 0.10.0}
`;
const scenario = (n: number, id: string, rig: string, value: number) =>
  `instance_config: i.yaml
common_config: c${n}.yaml
measured:
  - {id: ${id}, rig: ${rig}, metric: tpot.median, value: ${value}, max_error: 0.25, source: "test"}
`;

/** Files of three sources: two fit rigs measured as if the step cost were 2000 and 1200 µs, and one that fits nothing. */
function files(): { fs: FileSystem; paths: string[] } {
  const base: Record<string, string> = { "i.yaml": INSTANCE, "c1.yaml": common(1), "c8.yaml": common(8) };
  const tpot = (n: number, step: number) => {
    const probe = memoryFs({ ...base, "probe.yaml": scenario(n, "p", "x", 1) });
    return new Target(loadScenario("probe.yaml", probe), probe).simulate({ [STEP]: step })[0];
  };
  const f: Record<string, string> = {
    ...base,
    "fit/a1.yaml": scenario(1, "a-1", "rig-a", tpot(1, 2000)),
    "fit/a8.yaml": scenario(8, "a-8", "rig-a", tpot(8, 2000)),
    "fit/a-other.yaml": scenario(8, "a-v", "rig-a", tpot(8, 2000) * 1.1),
    "fit/b1.yaml": scenario(1, "b-1", "rig-b", tpot(1, 1200)),
    "fit/b8.yaml": scenario(8, "b-8", "rig-b", tpot(8, 1200)),
    "c.yaml": scenario(8, "c-8", "rig-c", tpot(8, 1600)),
    "registry.yaml": `sources:
  - id: src-a
    publisher: A
    document: a
    rigs:
      - {id: rig-a, hardware: 1 × H100, engine: vLLM 0.10.0, model: Llama-3.1-8B, harness: h, fit: [a-1, a-8], sets: [${STEP}]}
  - id: src-b
    publisher: B
    document: b
    rigs:
      - {id: rig-b, hardware: 1 × H100, engine: vLLM 0.10.0, model: Llama-3.1-8B, harness: h, fit: [b-1, b-8], sets: [${STEP}]}
  - id: src-c
    publisher: C
    document: c
    rigs:
      - {id: rig-c, hardware: 1 × H100, engine: vLLM 0.10.0, model: Llama-3.1-8B, harness: h}
`,
  };
  for (const p of ["i.yaml", "c1.yaml", "c8.yaml"]) f[`fit/${p}`] = f[p];
  const paths = ["c.yaml", "fit/a1.yaml", "fit/a8.yaml", "fit/a-other.yaml", "fit/b1.yaml", "fit/b8.yaml"];
  return { fs: memoryFs(f), paths };
}

Deno.test("leave-one-source-out: each source's rows are predicted by the constants fitted without it", () => {
  const { fs, paths } = files();
  const registry = loadRegistry("registry.yaml", fs);
  const rows = collectRows(paths, registry, "fit", fs);
  assert.deepEqual(rows.map((r) => `${r.id}:${r.role}${r.sameRig ? ":same-rig" : ""}`), [
    "c-8:validation",
    "a-1:fit",
    "a-8:fit",
    "a-v:validation:same-rig",
    "b-1:fit",
    "b-8:fit",
  ]);
  const r = leaveOneSourceOut(rows, fs);
  // Both sources want a higher step cost than the prior (1000 µs), A more than B. Two rows move a constant little
  // against its prior (ROW_SIGMA): each fit lies between the prior and what its rows want, A's rows (without B)
  // pull further than B's (without A), and all four rows further still.
  const full = r.full.values[STEP];
  const withoutA = r.folds.get("src-a")!.values[STEP];
  const withoutB = r.folds.get("src-b")!.values[STEP];
  assert.ok(
    1000 < withoutA && withoutA < withoutB && withoutB < full && full < 2000,
    `${withoutA} ${withoutB} ${full}`,
  );
  assert.deepEqual(r.pinnedBy[STEP], ["src-a", "src-b"]);
  const byId = new Map(r.predictions.map((p) => [p.row.id, p]));
  // A's rows held out are simulated at B's step cost: too fast, by the difference of 800 µs a step.
  const a8 = byId.get("a-8")!;
  assert.ok(a8.heldOut < a8.inSample && a8.inSample < a8.row.measurement.value, `${a8.heldOut} ${a8.inSample}`);
  // A source that fits nothing is held out by construction: its prediction is the full fit's.
  assert.equal(byId.get("c-8")!.heldOut, byId.get("c-8")!.inSample);

  // The report keeps fit and same-rig rows apart: only C's row is held out.
  const report = fidelityReport(r.predictions, registry, reportedConstants(r.full.values, r.pinnedBy));
  assert.deepEqual(report.rows.map((x) => x.category), ["held-out", "fit", "fit", "same-rig", "fit", "fit"]);
  assert.equal(report.heldOut.rows, 1);
  assert.equal(report.fit.heldOut.rows, 4);
  assert.equal(report.sameRig.heldOut.rows, 1);
  assert.ok(gateFailures(report).some((m) => /1 held-out rows < \d+/.test(m)));

  // The committed file's values predict the same without fitting again.
  const again = predictRows(rows, r.full.values, Object.fromEntries([...r.folds].map(([k, f]) => [k, f.values])), fs);
  assert.deepEqual(again.map((p) => p.heldOut), r.predictions.map((p) => p.heldOut));
});

Deno.test("leave-one-source-out: a constant the rows push past its range stops at the bound, with a warning", () => {
  const { fs } = files();
  // Source B measured ten times slower than a 1.2 ms step cost gives: far beyond vLLM 0.10's 3 ms ceiling.
  const slow = memoryFs({
    "i.yaml": INSTANCE,
    "c8.yaml": common(8),
    "fit/i.yaml": INSTANCE,
    "fit/c8.yaml": common(8),
    "fit/b8.yaml": fs.readText("fit/b8.yaml").replace(/value: ([\d.e-]+)/, (_, v) => `value: ${Number(v) * 10}`),
    "r.yaml": fs.readText("registry.yaml").replace(/, fit: \[a-1, a-8\], sets: \[[^\]]+\]/, "").replace(
      "fit: [b-1, b-8]",
      "fit: [b-8]",
    ),
  });
  const r = leaveOneSourceOut(collectRows(["fit/b8.yaml"], loadRegistry("r.yaml", slow), "fit", slow), slow);
  assert.equal(r.full.values[STEP], 3000);
  const c = r.full.groups.flatMap((g) => g.constants).find((x) => x.spec.name === STEP)!;
  assert.equal(c.atBound, "max");
  assert.ok(
    boundWarnings(r).includes(
      `warning: ${STEP} fitted to 3000, at the max of its range (200-3000 µs) (every source): the rows it is fitted on want a value the physics does not allow`,
    ),
    boundWarnings(r).join("\n"),
  );
  // Without B nothing sets it: the prior, at no bound.
  assert.equal(r.folds.get("src-b")!.values[STEP], undefined);
});
