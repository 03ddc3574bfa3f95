/**
 * Rewrites the golden files from the current code: `deno task golden:update`.
 * Run it only when an output change is intended, and say why in the commit
 * (tests/testdata/README.md).
 *
 * @module
 */
import { GOLDEN } from "./golden_cases.ts";
import { runCli } from "./_helpers.ts";
import { parseTaskArgs } from "../scenarios/_args.ts";

parseTaskArgs({
  task: "golden:update",
  usage: `Usage: deno task golden:update

Rewrites the golden files of tests/testdata/ (the CLI's stdout for the runs of
tests/golden_cases.ts) from the current code. Run it only when an output change
is intended, and say why in the commit.

  -h, --help   show this help and exit`,
}, Deno.args);

for (const g of GOLDEN) {
  const run = await runCli(g.args);
  if (run.code !== 0) throw new Error(`${g.file}: exit ${run.code}\n${run.stderr}`);
  Deno.writeTextFileSync(new URL(`./testdata/${g.file}`, import.meta.url), run.stdout);
  console.log(`wrote tests/testdata/${g.file}`);
}
