/**
 * Rewrites the golden files from the current code: `deno task golden:update`.
 * Run it only when an output change is intended, and say why in the commit
 * (tests/testdata/README.md).
 *
 * @module
 */
import { GOLDEN } from "./golden_cases.ts";
import { runCli } from "./_helpers.ts";

for (const g of GOLDEN) {
  const run = await runCli(g.args);
  if (run.code !== 0) throw new Error(`${g.file}: exit ${run.code}\n${run.stderr}`);
  Deno.writeTextFileSync(new URL(`./testdata/${g.file}`, import.meta.url), run.stdout);
  console.log(`wrote tests/testdata/${g.file}`);
}
