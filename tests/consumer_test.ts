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

/**
 * A copy of the consumer repository in a temporary folder, its link to this package made absolute. A copy, so that no
 * other test running meanwhile (the publish dry run) meets what a test adds to it.
 */
function consumerCopy(): string {
  const cwd = Deno.makeTempDirSync({ prefix: "servingcast-consumer-" });
  const copy = (from: string, to: string) => {
    for (const e of Deno.readDirSync(from)) {
      if (e.isDirectory) {
        Deno.mkdirSync(`${to}/${e.name}`);
        copy(`${from}/${e.name}`, `${to}/${e.name}`);
      } else Deno.copyFileSync(`${from}/${e.name}`, `${to}/${e.name}`);
    }
  };
  copy(`${ROOT}tests/consumer`, cwd);
  const config = JSON.parse(Deno.readTextFileSync(`${cwd}/deno.json`));
  Deno.writeTextFileSync(`${cwd}/deno.json`, JSON.stringify({ ...config, links: [ROOT] }));
  return cwd;
}

Deno.test("a consumer repository's deno test -P runs its own scenarios, a symlinked one too: one passes, two fail at their file and line", async () => {
  // A copy of the consumer repository (its link to this package made absolute), with one more scenario reached through
  // a symbolic link (issue 25): such a scenario is a scenario like the others, and must fail the gate. A copy, so
  // that no other test running meanwhile (the publish dry run) meets the link in this repository. Without type checks:
  // in a fresh folder they would cost 8 s of CPU each run, and .ci/run type-checks the package.
  const cwd = consumerCopy();
  Deno.symlinkSync("chat_one_gpu_fails.yaml", `${cwd}/scenarios/linked_fails.yaml`);
  let out;
  try {
    out = await runDeno(["test", "-P", "--quiet", "--no-check", "scenarios/"], cwd);
  } finally {
    Deno.removeSync(cwd, { recursive: true });
  }
  const text = out.stdout + out.stderr;
  assert.equal(out.code, 1, text);
  assert.match(text, /^scenario chat-on-two-h100s \(scenarios\/chat_passes\.yaml\) \.\.\. ok /m);
  assert.match(text, /^scenario chat-on-one-h100-tight-slo \(scenarios\/chat_one_gpu_fails\.yaml\) \.\.\. FAILED/m);
  assert.match(text, /^scenario chat-on-one-h100-tight-slo \(scenarios\/linked_fails\.yaml\) \.\.\. FAILED/m);
  // The failure names the consumer's own scenario file, line and column, the bound and the value.
  assert.match(
    text,
    /error: Error: scenarios\/chat_one_gpu_fails\.yaml:11:3: expect\.ttft\.p99: expected TTFT_FROM_ARRIVAL\(s\)\.P99 < 5ms, got \d+(\.\d+)?ms/,
  );
  assert.match(
    text,
    /error: Error: scenarios\/linked_fails\.yaml:11:3: expect\.ttft\.p99: expected TTFT_FROM_ARRIVAL\(s\)\.P99 < 5ms, got \d+(\.\d+)?ms/,
  );
  assert.match(text, /FAILED \| 1 passed \(5 steps\) \| 2 failed \(2 steps\)/);
  // Its own permissions only: read and two environment variables, nothing granted by this repository's deno.json.
  assert.doesNotMatch(text, /NotCapable|Requires .* access/);
});

Deno.test("a consumer repository records a baseline with the package's writer and its own write permission, then gates on it", async () => {
  const cwd = consumerCopy();
  try {
    // Recorded by its own task: the package's ./baseline export, under its own "baseline" permission set.
    const record = await runDeno(["task", "--quiet", "baseline", "baselined/"], cwd);
    assert.equal(record.code, 0, record.stderr);
    assert.match(record.stdout, /^wrote baselined\/__baselines__\/chat-held-to-its-baseline\.json \(\d+ metrics\)$/m);
    const gate = ["test", "-P", "--quiet", "--no-check", "baselined/"];
    const held = await runDeno(gate, cwd);
    assert.equal(held.code, 0, held.stdout + held.stderr);
    // Twice the load against the same snapshot: the gate fails, naming the file and the command that records anew.
    Deno.writeTextFileSync(
      `${cwd}/baselined/chat_held.yaml`,
      Deno.readTextFileSync(`${cwd}/baselined/chat_held.yaml`) + "overrides:\n  load_gen.time_scale: 0.5\n",
    );
    const moved = await runDeno(gate, cwd);
    const text = moved.stdout + moved.stderr;
    assert.equal(moved.code, 1, text);
    assert.match(
      text,
      /error: Error: baselined\/chat_held\.yaml:7:1: baseline: \d+ of \d+ metrics moved beyond their tolerance \(baselined\/__baselines__\/chat-held-to-its-baseline\.json; if intended, run `deno task baseline baselined\/chat_held\.yaml`\)/,
    );
  } finally {
    Deno.removeSync(cwd, { recursive: true });
  }
});

Deno.test("the README's test file is the consumer's, character for character", () => {
  const readme = Deno.readTextFileSync(`${ROOT}README.md`);
  const block = /`scenarios\/slo_test\.ts`, as is[^`]*`[^`]*`[^`]*```ts ignore\n([^`]+)```/.exec(readme);
  assert.ok(block, "the README shows scenarios/slo_test.ts");
  const shown = block[1].split("\n").map((l) => l.replace(/^ {3}/, "")).join("\n").trimEnd();
  assert.equal(shown, Deno.readTextFileSync(`${ROOT}tests/consumer/scenarios/slo_test.ts`).trimEnd());
});
