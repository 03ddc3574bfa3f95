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

const results = validationFiles().map((f) => runScenario(loadScenario(f)));
const report = fidelityReport(results);
console.log(formatFidelityTable(report));
const doc = new URL("../docs/fidelity.md", import.meta.url);
Deno.mkdirSync(new URL("../docs/", import.meta.url), { recursive: true });
Deno.writeTextFileSync(doc, formatFidelityMarkdown(report, PENDING_CASES));
console.log(`wrote docs/fidelity.md`);
const outside = results.flatMap((r) => r.measurements.filter((m) => !m.pass).map((m) => m.message));
for (const m of outside) console.error(m);
const gate = gateFailures(report);
for (const m of gate) console.error(`fidelity gate: ${m}`);
if (outside.length || gate.length) Deno.exit(1);
