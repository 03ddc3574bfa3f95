/**
 * Scenario files: the bundled and validation scenarios (the modules `deno test -P scenarios/` runs), the
 * scenario framework and what `deno task check` prints.
 *
 * One of the suites `deno task test` runs (deno.json `test.include`; why: tests/suites_test.ts).
 *
 * @module
 */
import "../../scenarios/scenarios_test.ts";
import "../../scenarios/testing_test.ts";
import "../../scenarios/validation_test.ts";
import "../check_format_test.ts";
import "../intervals_test.ts";
import "../scenario_framework_test.ts";
import "../scenario_test.ts";
