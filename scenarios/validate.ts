/**
 * `deno task validate`: runs every scenario in scenarios/validation/, prints
 * simulated vs measured with the error of each case and the median absolute
 * error overall and per chip, and writes the table to docs/fidelity.md.
 * Exits 1 when a case leaves its band (or a known gap closes), or the
 * report misses FIDELITY_GATE (core/scenario/fidelity.ts).
 *
 * @module
 */
import {
  fidelityReport,
  formatFidelityMarkdown,
  formatFidelityTable,
  gateFailures,
  loadScenario,
  runScenario,
} from "../core/scenario/mod.ts";
import { PENDING_CASES, validationFiles } from "./_files.ts";
import { CONSOLE_OUTPUT, readTaskArgs } from "./_args.ts";
import type { TaskOutput } from "./_args.ts";

const USAGE = `Usage: deno task validate

Runs every scenario in scenarios/validation/, prints simulated against measured
with each case's error, the median absolute error overall, per chip and per
engine, and writes the table to docs/fidelity.md.

  -h, --help   show this help and exit

Exit codes: 0 every case in its band and the fidelity gate met; 1 otherwise.`;

/**
 * `deno task validate` in this process, its lines to `io`.
 *
 * @returns the exit code: 0 every case in its band and the gate met, 1 otherwise, 2 bad arguments
 */
export function runValidate(argv: readonly string[], io: TaskOutput = CONSOLE_OUTPUT): number {
  const args = readTaskArgs({ task: "validate", usage: USAGE }, argv, io);
  if (typeof args === "number") return args;
  const results = validationFiles().map((f) => runScenario(loadScenario(f)));
  const report = fidelityReport(results);
  io.out(formatFidelityTable(report));
  const doc = new URL("../docs/fidelity.md", import.meta.url);
  Deno.mkdirSync(new URL("../docs/", import.meta.url), { recursive: true });
  Deno.writeTextFileSync(doc, formatFidelityMarkdown(report, PENDING_CASES));
  io.out(`wrote docs/fidelity.md`);
  const outside = results.flatMap((r) => r.measurements.filter((m) => !m.pass).map((m) => m.message));
  for (const m of outside) io.err(m);
  const gate = gateFailures(report);
  for (const m of gate) io.err(`fidelity gate: ${m}`);
  return outside.length || gate.length ? 1 : 0;
}

if (import.meta.main) Deno.exitCode = runValidate(Deno.args);
