/**
 * The simulator end to end: invariants (property-based), engine profiles, PD disaggregation, overload,
 * workloads, profiling, determinism and the golden and upstream outputs.
 *
 * One of the suites `deno task test` runs (deno.json `test.include`; why: tests/suites_test.ts).
 *
 * @module
 */
import "../determinism_test.ts";
import "../engine_audit_test.ts";
import "../conformance_test.ts";
import "../engine_profile_test.ts";
import "../golden_test.ts";
import "../invariants_test.ts";
import "../overload_test.ts";
import "../stream_summary_test.ts";
import "../shard_test.ts";
import "../run_ahead_test.ts";
import "../pd_test.ts";
import "../profiling_test.ts";
import "../step_monotone_test.ts";
import "../upstream_compat_test.ts";
import "../workload_test.ts";
import "../sessions_test.ts";
import "../speculation_test.ts";
import "../datasets_test.ts";
