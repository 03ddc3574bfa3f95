/**
 * The unit tests beside the code (the `*_test.ts` modules of core/), the import graph of core/ (its layers), and the check
 * that these suites hold every test module.
 *
 * One of the suites `deno task test` runs (deno.json `test.include`; why: tests/suites_test.ts).
 *
 * @module
 */
import "../../core/calibrate/fit_test.ts";
import "../../core/calibrate/loso_test.ts";
import "../../core/calibrate/registry_test.ts";
import "../../core/config/engine_profiles_test.ts";
import "../../core/config/validate_test.ts";
import "../../core/engine/arrays_test.ts";
import "../../core/engine/deque_test.ts";
import "../../core/engine/event_queue_test.ts";
import "../../core/engine/simulator_test.ts";
import "../../core/engine/transfer_test.ts";
import "../../core/hardware/int_memo_test.ts";
import "../../core/engine/draw_heap_test.ts";
import "../../core/policy/prefix_aware_test.ts";
import "../../core/hardware/kernel_tables_test.ts";
import "../../core/hardware/moe_test.ts";
import "../../core/hardware/monotone_test.ts";
import "../../core/hardware/roofline_test.ts";
import "../../core/launch/launch_test.ts";
import "../../core/metrics/load_test.ts";
import "../../core/metrics/percentile_test.ts";
import "../../core/metrics/sketch_test.ts";
import "../../core/model/model_spec_test.ts";
import "../../core/engine/admission_test.ts";
import "../../core/engine/batching_test.ts";
import "../../core/engine/kv_ledger_test.ts";
import "../../core/engine/gap_counts_test.ts";
import "../../core/engine/prefix_cache_test.ts";
import "../../core/engine/unservable_test.ts";
import "../../core/policy/least_loaded_test.ts";
import "../../core/policy/load_tree_test.ts";
import "../../core/policy/round_robin_test.ts";
import "../../core/policy/scheduler_test.ts";
import "../../core/report/svg_test.ts";
import "../../core/report/table_test.ts";
import "../../core/scenario/assertion_test.ts";
import "../../core/workload/arrival_test.ts";
import "../../core/workload/lengths_test.ts";
import "../../core/workload/source_test.ts";
import "../import_graph_test.ts";
import "../suites_test.ts";
