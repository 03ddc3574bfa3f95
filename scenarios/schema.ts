/**
 * `deno task schema`: writes `scenarios/scenario.schema.json`, the JSON
 * Schema of scenario files, exported from the validator itself. Editors with
 * yaml-language-server complete and check a scenario that starts with
 * `# yaml-language-server: $schema=./scenario.schema.json`.
 *
 * @module
 */
import { scenarioJsonSchema } from "./_schema.ts";
import { parseTaskArgs } from "./_args.ts";

parseTaskArgs({
  task: "schema",
  usage: `Usage: deno task schema

Writes scenarios/scenario.schema.json, the JSON Schema of scenario files, from
the validator itself (for editors with yaml-language-server).

  -h, --help   show this help and exit`,
}, Deno.args);

const file = new URL("./scenario.schema.json", import.meta.url);
Deno.writeTextFileSync(file, scenarioJsonSchema());
console.log(`wrote ${file.pathname}`);
