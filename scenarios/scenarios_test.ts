/**
 * Runs every scenario file as a test: `scenarios/*.yaml` and the validation
 * scenarios in `scenarios/validation/`. One test per scenario, one step per
 * assertion and per measurement. `deno test scenarios/` finds this file
 * (Deno only runs TypeScript test modules, not YAML files).
 *
 * A failing step reports the scenario's file:line, the bound and the value
 * the run produced.
 *
 * @module
 */
import { loadScenario, runScenario } from "../core/scenario/mod.ts";
import { relative, scenarioFiles } from "./_files.ts";

for (const file of scenarioFiles()) {
  const scenario = loadScenario(file);
  Deno.test(`scenario ${scenario.name} (${relative(file)})`, async (t) => {
    const run = runScenario(scenario);
    for (const c of run.checks) {
      await t.step(c.name, () => {
        if (!c.pass) throw new Error(c.message);
      });
    }
    for (const m of run.measurements) {
      const want = m.measurement;
      await t.step(`${want.key} within ±${(want.maxError * 100).toFixed(0)}% of measured ${want.value}`, () => {
        if (!m.pass) throw new Error(m.message);
      });
    }
  });
}
