/**
 * The reports: time series, run and comparison pages in-process, and the pages in headless Chromium.
 *
 * One of the suites `deno task test` runs (deno.json `test.include`; why: tests/suites_test.ts).
 *
 * @module
 */
import "../report_browser_test.ts";
import "../report_test.ts";
import "../kv_occupancy_test.ts";
