/**
 * Registers scenario files as tests: one test per scenario, one step per
 * assertion, measurement and baseline. Scenarios are dealt round-robin to
 * `parts` test modules so that `deno test --parallel` runs them on every core.
 *
 * @module
 */
import { loadScenario, runScenario } from "../core/scenario/mod.ts";
import { relative, scenarioFiles } from "./_files.ts";

/**
 * Registers every `parts`-th scenario, starting at `part`.
 *
 * @param part this module's share (0-based)
 * @param parts how many modules share the scenarios
 */
export function registerScenarios(part: number, parts: number): void {
  scenarioFiles().forEach((file, i) => {
    if (i % parts !== part) return;
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
        const band = `±${(want.maxError * 100).toFixed(0)}% of measured ${want.value}`;
        const name = want.knownGap === undefined
          ? `${want.key} within ${band}`
          : `${want.key} outside ${band} (known gap)`;
        await t.step(name, () => {
          if (!m.pass) throw new Error(m.message);
        });
      }
    });
  });
}
