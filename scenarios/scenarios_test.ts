/**
 * Runs the scenario files of `scenarios/` as tests; validation_test.ts runs
 * those of `scenarios/validation/`. `deno test -P scenarios/` finds both
 * modules: Deno runs TypeScript test modules, not YAML files. A failing step
 * reports the scenario's file:line, the bound and the value the run produced.
 * This is the same three-line module a user's own repository holds (see
 * scenarios/testing.ts and the README's "Use in your own repository").
 *
 * @module
 */
import { scenarioTests } from "./testing.ts";

scenarioTests(import.meta.url);
