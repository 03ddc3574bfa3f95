/**
 * The other half of the scenario files (see scenarios_test.ts), so that
 * `deno test --parallel` runs the two halves on two cores.
 *
 * @module
 */
import { registerScenarios } from "./_register.ts";

registerScenarios(1, 2);
