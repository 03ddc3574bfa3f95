import assert from "node:assert/strict";
import { evalExpr, holds, parseBound, unitMismatch } from "./assertion.ts";
import type { Bound } from "./assertion.ts";
import { loadScenario } from "./scenario.ts";
import { InputError } from "../config/errors.ts";

const bound = (v: unknown): Bound => {
  const b = parseBound(v);
  if (typeof b === "string") throw new Error(b);
  return b;
};
const value = (v: unknown) => evalExpr(bound(v).rhs, () => NaN);

Deno.test("parseBound() converts times to seconds and scales multipliers and percentages", () => {
  assert.equal(value("< 50ms"), 0.05);
  assert.equal(value("<= 0.5 s"), 0.5);
  assert.equal(value("< 200us"), 0.0002);
  assert.equal(value("< 2min"), 120);
  assert.equal(value(">= 2k tok/s"), 2000);
  assert.equal(value(">= 1.5M tokens"), 1.5e6);
  assert.equal(value("< 80%"), 0.8);
  assert.equal(value("> 12 req/s"), 12);
  assert.equal(value("< 1e-3"), 0.001);
  // A unit on a term of an expression, and the operator kept.
  const b = bound("<= 10ms + 0.5 * agg.tpot.p99");
  assert.equal(b.op, "<=");
  assert.equal(evalExpr(b.rhs, () => 0.02), 0.02);
});

Deno.test("parseBound() takes a tolerance with a time unit as absolute, with % as relative", () => {
  const abs = bound("== 50ms ± 5ms");
  assert.deepEqual(abs.tolerance, { amount: 0.005, relative: false });
  assert.equal(holds(abs, 0.054, value("== 50ms")), true);
  assert.equal(holds(abs, 0.056, value("== 50ms")), false);
  assert.deepEqual(bound("== 3900 ± 5%").tolerance, { amount: 0.05, relative: true });
});

Deno.test("unitMismatch() accepts the metric's own unit and unitless numbers, and names a foreign unit", () => {
  assert.equal(unitMismatch(bound("< 50ms").rhs, "s"), undefined);
  assert.equal(unitMismatch(bound("< 0.05").rhs, "s"), undefined);
  assert.equal(unitMismatch(bound("< 80%").rhs, "fraction"), undefined);
  assert.equal(unitMismatch(bound(">= 2k tok/s").rhs, "s"), "'k tok/s' is not a unit of this metric, which is in s");
  assert.equal(unitMismatch(bound("< 50ms").rhs, "tok/s"), "'ms' is not a unit of this metric, which is in tok/s");
});

Deno.test("loadScenario() reports a unit that does not fit the metric at its line", () => {
  const dir = Deno.makeTempDirSync();
  Deno.writeTextFileSync(
    `${dir}/s.yaml`,
    `instance_config: i.yaml\ncommon_config: c.yaml\nexpect:\n  ttft.p99: "< 50ms"\n  output_token_throughput: ">= 2k tok/s"\n  tpot.p99: ">= 2k tok/s"\n`,
  );
  assert.throws(
    () => loadScenario(`${dir}/s.yaml`),
    (e) =>
      e instanceof InputError &&
      e.message === `${dir}/s.yaml:6:13: expect.tpot.p99: 'k tok/s' is not a unit of this metric, which is in s`,
  );
});
