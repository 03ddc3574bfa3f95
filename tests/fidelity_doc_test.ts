/**
 * The fidelity report and its gate, on rows made up here. That
 * docs/fidelity.md is what `deno task validate` writes, and that the gate
 * holds on the real rows, is checked by scenarios/validation_test.ts.
 */
import assert from "node:assert/strict";
import {
  FIDELITY_GATE,
  FIDELITY_TARGETS,
  fidelityReport,
  formatFidelityMarkdown,
  gateFailures,
} from "../core/calibrate/fidelity.ts";
import type { RowPrediction } from "../core/calibrate/loso.ts";
import { reportedConstants } from "../core/calibrate/loso.ts";
import type { MeasuredRow, Registry, Rig, Source } from "../core/calibrate/registry.ts";

/** A registry of `n` sources, one rig each; source 0's rig has fit rows. */
function registry(n: number): Registry {
  const sources: Source[] = [];
  const rigs = new Map<string, Rig>();
  for (let i = 0; i < n; i++) {
    const source = { id: `s${i}`, publisher: `P${i}`, document: `doc ${i}`, rigs: [] as Rig[] };
    const rig: Rig = {
      id: `r${i}`,
      source,
      hardware: "1 × H100",
      engine: "vLLM",
      model: "Llama",
      harness: "h",
      fit: new Set(i === 0 ? ["fit-0"] : []),
      sets: i === 0 ? ["launch_us.cuda"] : [],
    };
    source.rigs.push(rig);
    sources.push(source);
    rigs.set(rig.id, rig);
  }
  return { file: "r.yaml", sources, rigs };
}

/** A prediction of one row: measured 1, held out at 1 + error. */
function row(
  reg: Registry,
  id: string,
  source: number,
  error: number,
  opts: { engine?: string; chip?: string; gap?: string; role?: "fit" | "validation"; sameRig?: boolean } = {},
): RowPrediction {
  const measurement = {
    key: "tpot.median",
    id,
    rig: `r${source}`,
    metric: { name: "TPOT(s).MEDIAN" },
    value: 1,
    maxError: 0.25,
    source: `cited ${id}`,
    ...(opts.gap ? { knownGap: opts.gap } : {}),
    location: { file: "x.yaml" },
  };
  const r = {
    id,
    rig: reg.rigs.get(`r${source}`)!,
    scenario: { name: `scenario-${id}`, file: "x.yaml" },
    index: 0,
    measurement,
    role: opts.role ?? "validation",
    sameRig: opts.sameRig ?? false,
  } as unknown as MeasuredRow;
  return {
    row: r,
    context: { chip: opts.chip ?? "H100_SXM_80G", engine: opts.engine ?? "vllm", moe: false },
    inSample: 1 + error / 2,
    heldOut: 1 + error,
  };
}

Deno.test("the gate names every figure a report misses, and a group's ceiling replaces the common one", () => {
  const reg = registry(8);
  const preds = [
    ...[0.1, 0.12, -0.3, -0.25, -0.2].map((e, i) => row(reg, `v${i}`, 1 + i, e)),
    ...[0.6, 0.7, -0.65, 0.62, 0.7].map((e, i) =>
      row(reg, `m${i}`, 6, e, { engine: "mindie", chip: "ATLAS_800_A2_376T_64G" })
    ),
  ];
  const report = fidelityReport(preds, reg, reportedConstants({}, {}));
  // vLLM's five rows sit at 20.0%: at the bar, not over it.
  assert.deepEqual(gateFailures(report, FIDELITY_TARGETS), [
    "held-out median |error| 45.0% > 15.0%",
    "held-out median signed error +11.0% beyond ±5.0%",
    "10 held-out rows < 60",
    "engine mindie: held-out median |error| 65.0% > 20.0%",
    "vendor Huawei Ascend: held-out median |error| 65.0% > 20.0%",
  ]);
  // The CI gate allows MindIE (60%) and Ascend (66%) more, with the reason, and nothing else.
  assert.deepEqual(gateFailures(report, FIDELITY_GATE), [
    "held-out median |error| 45.0% > 20.0%",
    "held-out median signed error +11.0% beyond ±8.0%",
    "10 held-out rows < 300",
    "engine mindie: held-out median |error| 65.0% > 60.0%",
  ]);
  assert.ok(FIDELITY_GATE.groupCeilings["vendor Huawei Ascend"].medianAbsError >= 0.65);
  // Every ceiling is above the common bar, and the targets have none: the gate never asks less of a group silently.
  for (const c of Object.values(FIDELITY_GATE.groupCeilings)) {
    assert.ok(c.medianAbsError > FIDELITY_GATE.perGroupMedianAbsError && c.why.length > 20);
  }
  assert.deepEqual(FIDELITY_TARGETS.groupCeilings, {});
});

Deno.test("the document opens with the held-out figures, reports fit and same-rig rows apart, and numbers known gaps", () => {
  const reg = registry(3);
  const preds = [
    row(reg, "fit-0", 0, 0.01, { role: "fit" }),
    row(reg, "same-0", 0, 0.05, { sameRig: true }),
    row(reg, "held-1", 1, -0.1),
    row(reg, "held-2", 2, 0.5, { gap: "the model is too slow here" }),
  ];
  const report = fidelityReport(preds, reg, reportedConstants({ "launch_us.cuda": 12 }, { "launch_us.cuda": ["s0"] }));
  assert.deepEqual(report.rows.map((r) => r.category), ["fit", "same-rig", "held-out", "held-out"]);
  assert.equal(report.heldOut.rows, 2);
  assert.equal(report.heldOut.medianAbsError, 0.3);
  assert.equal(report.fit.heldOut.rows, 1);
  assert.equal(report.sameRig.heldOut.rows, 1);
  const doc = formatFidelityMarkdown(report, { pending: [{ case: "§9 a case", reason: "not yet" }] });
  assert.match(doc, /^# Fidelity: simulated vs measured\n/);
  assert.match(doc, /\*\*Median absolute error 30\.0%\*\* over 2 held-out rows from 2 sources and 2 rigs/);
  assert.match(doc, /Targets \(issue 24.*\*\*Not met:\*\* held-out median \|error\| 30\.0% > 15\.0%/);
  assert.match(doc, /^\| fit \| 1 \| 1\.0% \| \+1\.0% \| 0\.5% \| \+0\.5% \|$/m);
  assert.match(doc, /^\| same-rig \| 1 \| 5\.0% \| \+5\.0% \| 2\.5% \| \+2\.5% \|$/m);
  assert.match(doc, /^\| held-2 \| held-out \| .* \| \+50\.0% \| ±25% \| \[1\] \|/m);
  assert.match(doc, /^1\. held-2 \(scenario-held-2, TPOT\(s\)\.MEDIAN\): the model is too slow here$/m);
  assert.match(
    doc,
    /^\| `launch_us\.cuda` \| CPU time to launch one kernel .* \| 4\.00–25\.00 µs \| 10\.00 \| 12\.00 \| s0 \| {2}\|$/m,
  );
  assert.match(doc, /^- §9 a case: not yet\.$/m);
});
