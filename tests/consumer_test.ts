/**
 * ServingCast in another repository (issue 14): tests/consumer/ is such a
 * repository, with its own deno.json (importing this package as
 * `jsr:@servingcast/servingcast`, linked to this folder with `links`, as a
 * published import resolves), its own configs and trace, and the three-line
 * scenarios/slo_test.ts of the README. `deno test -P` inside it runs its
 * scenarios with its own least permissions: one passes, one deliberately
 * fails, naming its scenario file and line.
 */
import assert from "node:assert/strict";
import { ROOT, runDeno } from "./_helpers.ts";

Deno.test("a consumer repository's deno test -P runs its own scenarios, a symlinked one too: one passes, two fail at their file and line", async () => {
  const cwd = `${ROOT}tests/consumer`;
  // A scenario reached through a symbolic link (issue 25) is a scenario like the others: it must fail the gate.
  const link = `${cwd}/scenarios/linked_fails.yaml`;
  Deno.symlinkSync("chat_one_gpu_fails.yaml", link);
  let out;
  try {
    out = await runDeno(["test", "-P", "--quiet"], cwd);
  } finally {
    Deno.removeSync(link);
  }
  const text = out.stdout + out.stderr;
  assert.equal(out.code, 1, text);
  assert.match(text, /^scenario chat-on-two-h100s \(scenarios\/chat_passes\.yaml\) \.\.\. ok /m);
  assert.match(text, /^scenario chat-on-one-h100-tight-slo \(scenarios\/chat_one_gpu_fails\.yaml\) \.\.\. FAILED/m);
  assert.match(text, /^scenario chat-on-one-h100-tight-slo \(scenarios\/linked_fails\.yaml\) \.\.\. FAILED/m);
  // The failure names the consumer's own scenario file, line and column, the bound and the value.
  assert.match(
    text,
    /error: Error: scenarios\/chat_one_gpu_fails\.yaml:11:3: expect\.ttft\.p99: expected TTFT_FROM_ARRIVAL\(s\)\.P99 < 5ms, got 0\.0\d+/,
  );
  assert.match(
    text,
    /error: Error: scenarios\/linked_fails\.yaml:11:3: expect\.ttft\.p99: expected TTFT_FROM_ARRIVAL\(s\)\.P99 < 5ms, got 0\.0\d+/,
  );
  assert.match(text, /FAILED \| 1 passed \(5 steps\) \| 2 failed \(2 steps\)/);
  // Its own permissions only: read and two environment variables, nothing granted by this repository's deno.json.
  assert.doesNotMatch(text, /NotCapable|Requires .* access/);
});

Deno.test("the README's test file is the consumer's, character for character", () => {
  const readme = Deno.readTextFileSync(`${ROOT}README.md`);
  const block = /`scenarios\/slo_test\.ts`, as is[^`]*`[^`]*`[^`]*```ts ignore\n([^`]+)```/.exec(readme);
  assert.ok(block, "the README shows scenarios/slo_test.ts");
  const shown = block[1].split("\n").map((l) => l.replace(/^ {3}/, "")).join("\n").trimEnd();
  assert.equal(shown, Deno.readTextFileSync(`${ROOT}tests/consumer/scenarios/slo_test.ts`).trimEnd());
});
