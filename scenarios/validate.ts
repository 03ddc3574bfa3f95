/**
 * `deno task validate`: fits every calibrated constant to the fit rows of
 * the registry (scenarios/validation/registry/sources.yaml), refits them
 * without each source in turn, simulates every measured row with the
 * constants fitted without its own source, prints the comparison and the
 * held-out figures, and writes core/config/data/calibrated.json (the
 * constants runs use) and docs/fidelity.md. Exits 1 when a row leaves its
 * band (or a known gap closes), or the held-out figures miss FIDELITY_GATE
 * (core/calibrate/fidelity.ts).
 *
 * @module
 */
import {
  boundWarnings,
  calibratedFile,
  leaveOneSourceOut,
  predictRows,
  reportedConstants,
} from "../core/calibrate/loso.ts";
import {
  fidelityReport,
  formatFidelityMarkdown,
  formatFidelityTable,
  gateFailures,
  residualsOf,
} from "../core/calibrate/fidelity.ts";
import type { FidelityReport, FidelityRow } from "../core/calibrate/fidelity.ts";
import type { RowPrediction } from "../core/calibrate/loso.ts";
import { collectRows, loadRegistry } from "../core/calibrate/registry.ts";
import type { MeasuredRow, Registry } from "../core/calibrate/registry.ts";
import type { CalibratedFile } from "../core/config/calibrated.ts";
import { FIT_DIR, measuredFiles, PENDING_CASES, REGISTRY_FILE } from "./_files.ts";
import { CONSOLE_OUTPUT, readTaskArgs } from "./_args.ts";
import type { TaskOutput } from "./_args.ts";
import { taskMain } from "./_args.ts";

const USAGE = `Usage: deno task validate

Fits every calibrated constant (core/config/calibrated.ts) to the fit rows of
scenarios/validation/registry/sources.yaml, refits them without each source in
turn (leave-one-source-out), simulates every measured row with the constants
fitted without its own source, prints simulated against measured, and writes
core/config/data/calibrated.json and docs/fidelity.md.

  -h, --help   show this help and exit

Exit codes: 0 every row in its band and the fidelity gate met; 1 otherwise.`;

/** The rows of every measured scenario with their registry. */
export function measuredRows(): { registry: Registry; rows: MeasuredRow[] } {
  const registry = loadRegistry(REGISTRY_FILE);
  return { registry, rows: collectRows(measuredFiles(), registry, FIT_DIR) };
}

/** The report of the rows predicted with a calibrated file's constants (no fit runs). */
export function reportOf(registry: Registry, rows: readonly MeasuredRow[], file: CalibratedFile): FidelityReport {
  return reportFrom(registry, predictRows(rows, file.values, file.folds), file);
}

/** The report of predictions made with a calibrated file's constants. */
export function reportFrom(
  registry: Registry,
  predictions: readonly RowPrediction[],
  file: CalibratedFile,
): FidelityReport {
  return fidelityReport(predictions, registry, reportedConstants(file.values, file.pinnedBy));
}

/** Whether a row passes: within its band, or (a known gap) outside it. */
export function rowPasses(x: FidelityRow): boolean {
  const within = Math.abs(x.error) <= x.maxError;
  return x.knownGap === undefined ? within : !within;
}

/** Why a row fails (see {@link rowPasses}). */
export function rowFailure(x: FidelityRow): string {
  return x.knownGap === undefined
    ? `${x.id} (${x.scenario}) ${x.metric}: held-out error ${(x.error * 100).toFixed(1)}%, band ±${
      (x.maxError * 100).toFixed(0)
    }%`
    : `${x.id} (${x.scenario}) ${x.metric}: known gap closed: held-out error ${
      (x.error * 100).toFixed(1)
    }% is within ±${(x.maxError * 100).toFixed(0)}%; remove known_gap`;
}

/** The held-out residuals as core/metrics/data/residuals.json holds them (one row a line). */
export function residualsFile(report: FidelityReport): string {
  const rows = residualsOf(report.rows).map((r) => `    ${JSON.stringify(r)}`);
  return `{\n  "generated": "deno task validate: ln(simulated / measured) of every held-out row, predicted with the constants fitted without its own source",\n  "residuals": [\n${
    rows.join(",\n")
  }\n  ]\n}\n`;
}

/**
 * `deno task validate` in this process, its lines to `io`.
 *
 * @returns the exit code: 0 every row in its band and the gate met, 1 otherwise, 2 bad arguments
 */
export function runValidate(argv: readonly string[], io: TaskOutput = CONSOLE_OUTPUT): number {
  const args = readTaskArgs({ task: "validate", usage: USAGE }, argv, io);
  if (typeof args === "number") return args;
  const { registry, rows } = measuredRows();
  const loso = leaveOneSourceOut(rows, undefined, { progress: (l) => io.err(`validate: ${l}`) });
  const file = calibratedFile(loso);
  // The document is made from the values as written (rounded), exactly as the test suite recomputes it.
  const report = reportOf(registry, rows, file);
  io.out(formatFidelityTable(report));
  for (const w of boundWarnings(loso)) io.err(w);
  Deno.writeTextFileSync(
    new URL("../core/config/data/calibrated.json", import.meta.url),
    JSON.stringify(file, null, 2) + "\n",
  );
  Deno.writeTextFileSync(new URL("../core/metrics/data/residuals.json", import.meta.url), residualsFile(report));
  Deno.writeTextFileSync(
    new URL("../docs/fidelity.md", import.meta.url),
    formatFidelityMarkdown(report, { pending: PENDING_CASES }),
  );
  io.out("wrote core/config/data/calibrated.json, core/metrics/data/residuals.json and docs/fidelity.md");
  // Fit rows set the constants: their bands judge nothing (the report shows them apart).
  const outside = report.rows.filter((x) => x.category !== "fit" && !rowPasses(x));
  for (const x of outside) io.err(rowFailure(x));
  const gate = gateFailures(report);
  for (const m of gate) io.err(`fidelity gate: ${m}`);
  return outside.length || gate.length ? 1 : 0;
}

if (import.meta.main) Deno.exitCode = await taskMain("validate", () => runValidate(Deno.args));
