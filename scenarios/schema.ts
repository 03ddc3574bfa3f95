/**
 * `deno task schema`: writes `scenarios/scenario.schema.json`, the JSON
 * Schema of scenario files, exported from the validator itself. Editors with
 * yaml-language-server complete and check a scenario that starts with
 * `# yaml-language-server: $schema=./scenario.schema.json`.
 *
 * @module
 */
import { scenarioJsonSchema } from "./_schema.ts";
import { CONSOLE_OUTPUT, readTaskArgs } from "./_args.ts";
import type { TaskOutput } from "./_args.ts";
import { taskMain } from "./_args.ts";

const USAGE = `Usage: deno task schema

Writes scenarios/scenario.schema.json, the JSON Schema of scenario files, from
the validator itself (for editors with yaml-language-server).

  -h, --help   show this help and exit`;

/**
 * `deno task schema` in this process, its lines to `io`.
 *
 * @returns the exit code: 0 written (or help), 2 bad arguments
 */
export function runSchema(argv: readonly string[], io: TaskOutput = CONSOLE_OUTPUT): number {
  const args = readTaskArgs({ task: "schema", usage: USAGE }, argv, io);
  if (typeof args === "number") return args;
  const file = new URL("./scenario.schema.json", import.meta.url);
  Deno.writeTextFileSync(file, scenarioJsonSchema());
  io.out(`wrote ${file.pathname}`);
  return 0;
}

if (import.meta.main) Deno.exitCode = await taskMain("schema", () => runSchema(Deno.args));
