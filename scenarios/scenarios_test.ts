/**
 * Runs the scenario files as tests (this module takes every other one; see
 * scenarios_b_test.ts). `deno test scenarios/` finds both modules: Deno runs
 * TypeScript test modules, not YAML files. A failing step reports the
 * scenario's file:line, the bound and the value the run produced.
 *
 * @module
 */
import { registerScenarios } from "./_register.ts";

registerScenarios(0, 2);
