/**
 * Runs every scenario file in this folder as a test: one test per scenario,
 * one step per assertion. `deno test scenarios/` finds this file (Deno only
 * runs TypeScript test modules, not YAML files).
 *
 * A failing assertion reports the scenario's file:line, the bound and the
 * value the run produced.
 *
 * @module
 */
import { loadScenario, runScenario } from "../core/scenario/mod.ts";

const dir = new URL(".", import.meta.url).pathname;
const files = [...Deno.readDirSync(dir)]
  .filter((e) => e.isFile && /\.ya?ml$/.test(e.name))
  .map((e) => `${dir}${e.name}`)
  .sort();

for (const file of files) {
  const scenario = loadScenario(file);
  Deno.test(`scenario ${scenario.name} (${file.slice(dir.length)})`, async (t) => {
    const run = runScenario(scenario);
    for (const r of run.results) {
      await t.step(`${r.assertion.key} ${r.assertion.bound.op} ${r.assertion.bound.value}`, () => {
        if (!r.pass) throw new Error(r.message);
      });
    }
  });
}
