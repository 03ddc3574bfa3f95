import assert from "node:assert/strict";
import { formatColumn, formatSummaryTable } from "./table.ts";
import type { Summary } from "../metrics/summary.ts";

// The summary printed in shared/seed/servingcast-guide.zh.md §4.1, verbatim.
const GUIDE = `         E2E_TIME(s)  TTFT(s)  TPOT(s)  INPUT_TOKENS  OUTPUT_TOKENS  OUTPUT_TOKEN_THROUGHPUT(tok/s)
AVERAGE     1052.591    0.378    0.301        1500.0         3500.0                           3.327
MIN         1050.000    0.300    0.300        1500.0         3500.0                           2.978
MAX         1175.500    0.600    0.336        1500.0         3500.0                           3.334
MEDIAN      1050.100    0.400    0.300        1500.0         3500.0                           3.334
P75         1050.125    0.400    0.300        1500.0         3500.0                           3.334
P90         1050.200    0.500    0.300        1500.0         3500.0                           3.334
P99         1175.500    0.600    0.336        1500.0         3500.0                           3.334
======== Overall Summary ========
benchmark_duration(s)          1225.500
total_requests                 100.000
request_throughput(req/s)      0.082
total_input_tokens             150000.000
input_token_throughput(tok/s)  122.399
total_output_tokens            350000.000
output_token_throughput(tok/s) 285.598
`;

const col = (...v: number[]) => ({
  AVERAGE: v[0],
  MIN: v[1],
  MAX: v[2],
  MEDIAN: v[3],
  P75: v[4],
  P90: v[5],
  P95: NaN, // not in the guide's table
  P99: v[6],
  "P99.9": NaN,
});

Deno.test("formatSummaryTable() reproduces the guide's layout byte for byte", () => {
  const s: Pick<Summary, "perMetric" | "overall"> = {
    perMetric: {
      // Unrounded inputs: the table rounds to 3 decimals as pandas' round(3) does.
      "E2E_TIME(s)": col(1052.5912, 1050, 1175.5, 1050.1, 1050.125, 1050.2, 1175.5),
      "TTFT(s)": col(0.3781, 0.3, 0.6, 0.4, 0.4, 0.5, 0.6),
      "TPOT(s)": col(0.30104, 0.3, 0.336, 0.3, 0.3, 0.3, 0.336),
      "INPUT_TOKENS": col(1500, 1500, 1500, 1500, 1500, 1500, 1500),
      "OUTPUT_TOKENS": col(3500, 3500, 3500, 3500, 3500, 3500, 3500),
      "OUTPUT_TOKEN_THROUGHPUT(tok/s)": col(3.3271, 2.978, 3.334, 3.334, 3.334, 3.334, 3.334),
    },
    overall: {
      "benchmark_duration(s)": 1225.5,
      "total_requests": 100,
      "request_throughput(req/s)": 100 / 1225.5,
      "total_input_tokens": 150000,
      "input_token_throughput(tok/s)": 150000 / 1225.5,
      "total_output_tokens": 350000,
      "output_token_throughput(tok/s)": 350000 / 1225.5,
    },
  };
  assert.equal(formatSummaryTable(s), GUIDE);
});

Deno.test("formatColumn() uses the decimals the most precise value needs, at least one", () => {
  assert.deepEqual(formatColumn([1500, 1500.5]), ["1500.0", "1500.5"]);
  assert.deepEqual(formatColumn([0.3, 0.378]), ["0.300", "0.378"]);
  assert.deepEqual(formatColumn([2, 2]), ["2.0", "2.0"]);
  assert.deepEqual(formatColumn([0.12345, 1]), ["0.123", "1.000"]);
});

Deno.test("formatColumn() rounds exact ties to even, as numpy does", () => {
  assert.deepEqual(formatColumn([0.0625, 0.1875]), ["0.062", "0.188"]);
});

Deno.test("formatColumn() prints - for a statistic with no value", () => {
  assert.deepEqual(formatColumn([NaN, NaN]), ["-", "-"]);
  assert.deepEqual(formatColumn([NaN, 0.25]), ["-", "0.25"]);
});
