/**
 * Rewrites the golden files from the current code: `deno task golden:update`.
 * Run it only when an output change is intended, and say why in the commit
 * (tests/testdata/README.md).
 *
 * @module
 */
import { GOLDEN } from "./golden_cases.ts";
import { runCli } from "./_helpers.ts";
import { CONSOLE_OUTPUT, readTaskArgs } from "../scenarios/_args.ts";
import type { TaskOutput } from "../scenarios/_args.ts";

const USAGE = `Usage: deno task golden:update

Rewrites the golden files of tests/testdata/ (the CLI's stdout for the runs of
tests/golden_cases.ts) from the current code. Run it only when an output change
is intended, and say why in the commit.

  -h, --help   show this help and exit`;

/**
 * `deno task golden:update` in this process, its lines to `io`.
 *
 * @returns the exit code: 0 written (or help), 2 bad arguments
 */
export async function runGoldenUpdate(argv: readonly string[], io: TaskOutput = CONSOLE_OUTPUT): Promise<number> {
  const args = readTaskArgs({ task: "golden:update", usage: USAGE }, argv, io);
  if (typeof args === "number") return args;
  for (const g of GOLDEN) {
    const run = await runCli(g.args);
    if (run.code !== 0) throw new Error(`${g.file}: exit ${run.code}\n${run.stderr}`);
    Deno.writeTextFileSync(new URL(`./testdata/${g.file}`, import.meta.url), run.stdout);
    io.out(`wrote tests/testdata/${g.file}`);
  }
  return 0;
}

if (import.meta.main) Deno.exitCode = await runGoldenUpdate(Deno.args);
