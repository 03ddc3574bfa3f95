/**
 * `deno task docs:catalog`: writes the README's model and device lists
 * (between the catalog markers) from the catalogs themselves, as
 * `deno task sim --list-models` and `--list-devices` print them.
 * tests/cli_help_test.ts fails while the README is stale.
 *
 * @module
 */
import { CATALOG_BEGIN, CATALOG_END, catalogMarkdown } from "../core/report/catalog.ts";
import { CONSOLE_OUTPUT, readTaskArgs } from "../scenarios/_args.ts";
import type { TaskOutput } from "../scenarios/_args.ts";
import { taskMain } from "../scenarios/_args.ts";

const USAGE = `Usage: deno task docs:catalog

Writes the README's lists of built-in models and devices (between its catalog
markers) from core/model/catalog.ts and core/hardware/devices.ts.

  -h, --help   show this help and exit`;

/**
 * `deno task docs:catalog` in this process, its lines to `io`.
 *
 * @returns the exit code: 0 written (or help), 1 the README has no catalog section, 2 bad arguments
 */
export function runCatalogDoc(argv: readonly string[], io: TaskOutput = CONSOLE_OUTPUT): number {
  const args = readTaskArgs({ task: "docs:catalog", usage: USAGE }, argv, io);
  if (typeof args === "number") return args;
  const file = new URL("../README.md", import.meta.url);
  const readme = Deno.readTextFileSync(file);
  const start = readme.indexOf(CATALOG_BEGIN);
  const end = readme.indexOf(CATALOG_END);
  if (start < 0 || end < start) {
    io.err(`docs:catalog: README.md has no '${CATALOG_BEGIN}' … '${CATALOG_END}' section`);
    return 1;
  }
  Deno.writeTextFileSync(file, readme.slice(0, start) + catalogMarkdown() + readme.slice(end + CATALOG_END.length));
  io.out("wrote README.md (model and device catalogs)");
  return 0;
}

if (import.meta.main) Deno.exitCode = await taskMain("docs:catalog", () => runCatalogDoc(Deno.args));
