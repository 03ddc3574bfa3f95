/**
 * Registers scenario files as tests: one test per scenario, one step per
 * assertion, measurement and baseline. The top-level scenarios and the
 * validation scenarios are registered by two test modules, so that
 * `deno test --parallel` runs them on two cores in about equal halves.
 *
 * @module
 */
import { loadScenario, runScenario } from "../core/scenario/mod.ts";
import type { ScenarioResult } from "../core/scenario/mod.ts";
import { relative } from "./_files.ts";

/**
 * Registers one test per scenario file.
 *
 * @param files the scenario files, in the order their tests run
 * @param onRun called with each scenario's run (after its steps), so that a
 *   later test can use the runs without running them again
 */
export function registerScenarios(files: readonly string[], onRun?: (file: string, run: ScenarioResult) => void): void {
  for (const file of files) {
    const scenario = loadScenario(file);
    Deno.test(`scenario ${scenario.name} (${relative(file)})`, async (t) => {
      const run = runScenario(scenario);
      onRun?.(file, run);
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
  }
}
