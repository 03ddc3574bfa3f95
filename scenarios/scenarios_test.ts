/**
 * Runs the scenario files of `scenarios/` as tests; validation_test.ts runs
 * those of `scenarios/validation/`. `deno test -P scenarios/` finds both
 * modules: Deno runs TypeScript test modules, not YAML files. A failing step
 * reports the scenario's file:line, the bound and the value the run produced.
 *
 * @module
 */
import { registerScenarios } from "./_register.ts";
import { topLevelFiles } from "./_files.ts";

registerScenarios(topLevelFiles());
