/**
 * The command line and bad input: every task's flags, help and exit codes, the hardening cases, the fuzzer,
 * the package as others get it, the documentation's examples and the GitHub Action.
 *
 * One of the suites `deno task test` runs (deno.json `test.include`; why: tests/suites_test.ts).
 *
 * @module
 */
import "../action_test.ts";
import "../bad_input_test.ts";
import "../cli_help_test.ts";
import "../cli_test.ts";
import "../consumer_test.ts";
import "../doc_examples_test.ts";
import "../fuzz_test.ts";
import "../fuzz_targets/targets_test.ts";
import "../hardening_config_test.ts";
import "../hardening_run_test.ts";
import "../hardening_sim_check_test.ts";
import "../hardening_plan_test.ts";
import "../hardening_compare_test.ts";
import "../compare_gate_test.ts";
import "../publish_test.ts";
