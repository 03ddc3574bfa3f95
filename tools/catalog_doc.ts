/**
 * `deno task docs:catalog`: writes the README's model and device lists
 * (between the catalog markers) from the catalogs themselves, as
 * `deno task sim --list-models` and `--list-devices` print them.
 * tests/cli_help_test.ts fails while the README is stale.
 *
 * @module
 */
import { CATALOG_BEGIN, CATALOG_END, catalogMarkdown } from "../core/report/catalog.ts";
import { parseTaskArgs } from "../scenarios/_args.ts";

parseTaskArgs({
  task: "docs:catalog",
  usage: `Usage: deno task docs:catalog

Writes the README's lists of built-in models and devices (between its catalog
markers) from core/model/catalog.ts and core/hardware/devices.ts.

  -h, --help   show this help and exit`,
}, Deno.args);

const file = new URL("../README.md", import.meta.url);
const readme = Deno.readTextFileSync(file);
const start = readme.indexOf(CATALOG_BEGIN);
const end = readme.indexOf(CATALOG_END);
if (start < 0 || end < start) {
  console.error(`docs:catalog: README.md has no '${CATALOG_BEGIN}' … '${CATALOG_END}' section`);
  Deno.exit(1);
}
Deno.writeTextFileSync(file, readme.slice(0, start) + catalogMarkdown() + readme.slice(end + CATALOG_END.length));
console.log("wrote README.md (model and device catalogs)");
