/**
 * `known_gap` on a measurement is a strict expected failure: the
 * measurement passes only while its error stays outside its band, and fails
 * with "known gap closed" once the simulator comes within it. The fidelity
 * report still counts the row and marks it (tests/fidelity_doc_test.ts).
 */
import assert from "node:assert/strict";
import { loadScenario, runScenario } from "../core/scenario/mod.ts";
import { COMMON_OK, INSTANCE_OK, writeTemp } from "./_helpers.ts";

/** A scenario file measuring the median TPOT at `value` within ±10%, with or without a known gap. */
function scenario(value: number, knownGap?: string): string {
  return `instance_config: i.yaml
common_config: c.yaml
measured:
  - metric: tpot.median
    value: ${value}
    max_error: 0.10
    source: "test"
${knownGap === undefined ? "" : `    known_gap: "${knownGap}"\n`}`;
}

Deno.test("known_gap: passes only while the error is outside its band, and fails once the gap closes", () => {
  const probe = writeTemp({ "i.yaml": INSTANCE_OK, "c.yaml": COMMON_OK, "s.yaml": scenario(1) });
  const simulated = runScenario(loadScenario(`${probe}/s.yaml`)).measurements[0].simulated;
  assert.ok(simulated > 0);

  const dir = writeTemp({
    "i.yaml": INSTANCE_OK,
    "c.yaml": COMMON_OK,
    // Measured twice the simulated value: an error of -50%, far outside ±10%.
    "outside.yaml": scenario(2 * simulated),
    "outside_gap.yaml": scenario(2 * simulated, "the model is too fast here"),
    // Measured what the simulator gives: inside the band.
    "inside_gap.yaml": scenario(simulated, "the model was too fast here"),
  });

  const outside = runScenario(loadScenario(`${dir}/outside.yaml`));
  assert.equal(outside.measurements[0].within, false);
  assert.equal(outside.measurements[0].pass, false, "without known_gap a run outside its band fails");
  assert.equal(outside.pass, false);
  assert.match(outside.measurements[0].message, /allowed ±10%$/);

  const gap = runScenario(loadScenario(`${dir}/outside_gap.yaml`));
  assert.equal(gap.measurements[0].within, false);
  assert.equal(gap.measurements[0].pass, true, "with known_gap a run outside its band passes");
  assert.equal(gap.pass, true);
  assert.equal(gap.scenario.measured[0].knownGap, "the model is too fast here");
  assert.match(
    gap.measurements[0].message,
    /known gap: .*\(-50\.0%\), outside ±10% as expected: the model is too fast here/,
  );

  const closed = runScenario(loadScenario(`${dir}/inside_gap.yaml`));
  assert.equal(closed.measurements[0].within, true);
  assert.equal(closed.measurements[0].pass, false, "with known_gap a run inside its band fails");
  assert.equal(closed.pass, false);
  assert.match(
    closed.measurements[0].message,
    /inside_gap\.yaml:\d+:\d+: measured\[0\]: known gap closed: error 0\.0% is now within ±10%; remove known_gap/,
  );
});

Deno.test("known_gap: an empty reason is bad input at its line", () => {
  const dir = writeTemp({ "i.yaml": INSTANCE_OK, "c.yaml": COMMON_OK, "s.yaml": scenario(1, "") });
  assert.throws(() => loadScenario(`${dir}/s.yaml`), /s\.yaml:\d+:\d+: measured\[0\]\.known_gap/);
});
