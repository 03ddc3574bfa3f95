/**
 * Capacity and calibration: capacity sweeps, the planner, `deno task calibrate`, the hardware model against
 * measurements, known gaps and the fidelity document.
 *
 * One of the suites `deno task test` runs (deno.json `test.include`; why: tests/suites_test.ts).
 *
 * @module
 */
import "../calibrate_test.ts";
import "../calibration_test.ts";
import "../capacity_test.ts";
import "../capacity_sustain_test.ts";
import "../fidelity_doc_test.ts";
import "../known_gap_test.ts";
import "../plan_test.ts";
import "../hardening_calibrate_test.ts";
