/**
 * The JSON Schema of scenario files, as text.
 *
 * @module
 */
import { z } from "zod";
import { ScenarioFileSchema } from "../core/scenario/mod.ts";

/** The schema document (2-space JSON, trailing newline). */
export function scenarioJsonSchema(): string {
  const schema = z.toJSONSchema(ScenarioFileSchema, { unrepresentable: "any", io: "input", reused: "ref" });
  return JSON.stringify(
    {
      ...schema,
      $id: "https://servingcast.dev/scenario.schema.json",
      title: "ServingCast scenario",
      description: "A serving configuration with SLO assertions (docs/scenarios.md).",
    },
    null,
    2,
  ) + "\n";
}
