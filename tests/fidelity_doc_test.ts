/**
 * The fidelity gate. That docs/fidelity.md is what `deno task validate`
 * writes, and that the published targets hold, is checked by
 * scenarios/validation_test.ts from the runs of the validation scenarios'
 * own tests.
 */
import assert from "node:assert/strict";
import { gateFailures } from "../core/scenario/mod.ts";

Deno.test("the fidelity gate names every target a report misses", () => {
  const group = (name: string, cases: number, medianAbsError: number) => ({
    cases,
    medianAbsError,
    medianBias: 0,
    name,
  });
  const report = {
    rows: new Array(50).fill(null),
    medianAbsError: 0.12,
    maxAbsError: 1,
    medianBias: -0.06,
    perChip: [{ ...group("", 4, 0.2), chip: "MI300X_192G" }, { ...group("", 2, 0.5), chip: "L40S_48G" }],
    perEngine: [{ ...group("", 30, 0.14), engine: "vllm" }],
  } as unknown as Parameters<typeof gateFailures>[0];
  assert.deepEqual(gateFailures(report), [
    "median |error| 12.0% > 10.0%",
    "median signed error -6.0% beyond ±5.0%",
    "50 cases < 120",
    "MI300X_192G: median |error| 20.0% > 15.0%",
  ]);
});
