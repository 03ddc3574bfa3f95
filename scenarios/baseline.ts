/**
 * `deno task baseline [scenario…]`: runs scenarios that have `baseline:`
 * and rewrites their snapshots (`__baselines__/<name>.json` beside them).
 * With no file, every such scenario. Review the diff before committing it.
 *
 * @module
 */
import { formatBaseline, loadScenario, runScenario } from "../core/scenario/mod.ts";
import { dirname } from "node:path";
import { scenarioFiles } from "./_files.ts";

const files = Deno.args.length ? Deno.args : scenarioFiles();
for (const file of files) {
  const s = loadScenario(file);
  if (!s.baseline) {
    if (Deno.args.length) console.error(`${file}: no 'baseline:' in this scenario, nothing written`);
    continue;
  }
  const r = runScenario({ ...s, baseline: undefined });
  Deno.mkdirSync(dirname(s.baseline.file), { recursive: true });
  Deno.writeTextFileSync(s.baseline.file, formatBaseline(r.snapshot));
  console.log(`wrote ${s.baseline.file} (${Object.keys(r.snapshot).length} metrics)`);
}
