/**
 * The validation rows as tests. Every measured row of scenarios/validation/
 * is simulated with the committed calibrated constants
 * (core/config/data/calibrated.json) refitted without its own source, and
 * judged on that held-out figure against its band (a known gap: outside
 * it). Then, from the same predictions: docs/fidelity.md and
 * core/metrics/data/residuals.json are what `deno task validate` writes,
 * the held-out figures meet FIDELITY_GATE, the 80% prediction interval
 * covers 75–85% of the held-out rows, and every calibrated constant lies
 * within its range. Fit rows (scenarios/validation/fit/) set the constants:
 * the report shows them apart, and no band judges them.
 *
 * @module
 */
import assert from "node:assert/strict";
import { predictRows } from "../core/calibrate/loso.ts";
import type { RowPrediction } from "../core/calibrate/loso.ts";
import { FIDELITY_GATE, fidelityRows, formatFidelityMarkdown, gateFailures } from "../core/calibrate/fidelity.ts";
import type { MeasuredRow } from "../core/calibrate/registry.ts";
import { CALIBRATED_CONSTANTS } from "../core/config/engine_profiles.ts";
import { CALIBRATED_FILE } from "../core/config/calibrated.ts";
import { measuredRows, reportFrom, residualsFile, rowFailure, rowPasses } from "./validate.ts";
import { PENDING_CASES, relative } from "./_files.ts";

const { registry, rows } = measuredRows();
const predicted = new Map<MeasuredRow, RowPrediction>();
/** The rows' predictions with the committed constants (each scenario run once per set of constants it reads). */
function predict(rs: readonly MeasuredRow[]): RowPrediction[] {
  const todo = rs.filter((r) => !predicted.has(r));
  for (const p of predictRows(todo, CALIBRATED_FILE.values, CALIBRATED_FILE.folds)) predicted.set(p.row, p);
  return rs.map((r) => predicted.get(r)!);
}

const byFile = new Map<string, MeasuredRow[]>();
for (const r of rows) {
  if (r.role === "validation") byFile.set(r.scenario.file, [...(byFile.get(r.scenario.file) ?? []), r]);
}

for (const [file, rs] of byFile) {
  Deno.test(`validation ${relative(file)}`, async (t) => {
    const results = fidelityRows(predict(rs));
    for (const x of results) {
      const name = `${x.id} ${x.metric}: held out ${(x.error * 100).toFixed(1)}% ${
        x.knownGap === undefined ? "within" : "outside (known gap)"
      } ±${(x.maxError * 100).toFixed(0)}%`;
      await t.step(name, () => assert.ok(rowPasses(x), rowFailure(x)));
    }
  });
}

Deno.test("docs/fidelity.md and the residuals are what `deno task validate` writes; the gate and the intervals hold", () => {
  const report = reportFrom(registry, predict(rows), CALIBRATED_FILE);
  const doc = Deno.readTextFileSync(new URL("../docs/fidelity.md", import.meta.url));
  assert.equal(doc, formatFidelityMarkdown(report, { pending: PENDING_CASES }), "stale: run `deno task validate`");
  const residuals = Deno.readTextFileSync(new URL("../core/metrics/data/residuals.json", import.meta.url));
  assert.equal(residuals, residualsFile(report), "stale: run `deno task validate`");
  assert.deepEqual(gateFailures(report), []);
  assert.ok(report.heldOut.rows >= FIDELITY_GATE.minRows);
  // The 80% interval, each made without its own row's source, covers 75–85% of the held-out rows.
  const c80 = report.coverage.get(0.8)!;
  assert.ok(c80.rows >= 200, `${c80.rows} rows with an interval`);
  const share = c80.covered / c80.rows;
  assert.ok(share >= 0.75 && share <= 0.85, `80% interval covers ${(share * 100).toFixed(1)}% of held-out rows`);
  // At least eight sources beyond those of shared/reference/calibration.md (issue 24), all held out somewhere.
  assert.ok(report.counts.allSources >= 20, `${report.counts.allSources} sources`);
});

Deno.test("every calibrated constant, fitted on every source and without each, lies within its documented range", () => {
  const specs = new Map(CALIBRATED_CONSTANTS.map((c) => [c.name, c]));
  const fits = [["every source", CALIBRATED_FILE.values], ...Object.entries(CALIBRATED_FILE.folds)] as const;
  for (const [which, values] of fits) {
    for (const [name, v] of Object.entries(values)) {
      const c = specs.get(name);
      assert.ok(c, `${name} (${which}) is not a calibrated constant`);
      assert.ok(v >= c.min && v <= c.max, `${name} = ${v} (${which}) outside ${c.min}–${c.max} ${c.unit}`);
    }
  }
  // Each pinned constant names the sources that set it, and each of them has a fold without it.
  for (const [name, sources] of Object.entries(CALIBRATED_FILE.pinnedBy)) {
    assert.ok(sources.length > 0 && Object.hasOwn(CALIBRATED_FILE.values, name), name);
    for (const s of sources) assert.ok(Object.hasOwn(CALIBRATED_FILE.folds, s), `${name}: no fold without ${s}`);
  }
});
