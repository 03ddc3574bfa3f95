/**
 * The composite GitHub Action (action.yml): its scenario step, run as GitHub
 * runs it (bash, the inputs as environment variables, this checkout as the
 * action's path) inside the consumer fixture: the failing scenario is an
 * `::error` annotation at its line, the job summary is written, and the
 * reports land in the report folder. Installing Deno and uploading the
 * artifact are GitHub's own steps and are not run here.
 */
import assert from "node:assert/strict";
import { dirname } from "node:path";
import { parse } from "yaml";
import { ROOT } from "./_helpers.ts";

interface Step {
  name: string;
  run?: string;
  env?: Record<string, string>;
}

/** Runs the action's scenario step in a copy of the consumer fixture, with some inputs changed. */
async function runStep(inputs: Record<string, string> = {}) {
  const action = parse(Deno.readTextFileSync(`${ROOT}action.yml`)) as {
    inputs: Record<string, { default: string }>;
    runs: { using: string; steps: Step[] };
  };
  assert.equal(action.runs.using, "composite");
  const step = action.runs.steps.find((s) => s.name === "Run the scenarios")!;
  const work = Deno.makeTempDirSync({ prefix: "servingcast-action-" });
  // The consumer repository as the workspace (a copy: the step writes its reports into it).
  for (const dir of ["scenarios", "scenarios/configs"]) Deno.mkdirSync(`${work}/${dir}`, { recursive: true });
  for (
    const f of [
      "chat_passes.yaml",
      "chat_one_gpu_fails.yaml",
      "configs/h100.yaml",
      "configs/chat.yaml",
      "configs/chat_trace.jsonl",
    ]
  ) {
    Deno.copyFileSync(`${ROOT}tests/consumer/scenarios/${f}`, `${work}/scenarios/${f}`);
  }
  const summary = `${work}/summary.md`;
  // Each `${{ … }}` of the step's env, as GitHub fills it in.
  const given = {
    ...Object.fromEntries(Object.entries(action.inputs).map(([k, v]) => [k, String(v.default)])),
    ...inputs,
  };
  const env = Object.fromEntries(
    Object.entries(step.env ?? {}).map(([k, v]) => [
      k,
      v.replace(/\$\{\{\s*inputs\.([\w-]+)\s*\}\}/g, (_, name) => given[name])
        .replace(/\$\{\{\s*github\.action_path\s*\}\}/g, ROOT.replace(/\/$/, "")),
    ]),
  );
  const out = await new Deno.Command("bash", {
    args: ["-c", step.run!],
    cwd: work,
    env: {
      ...env,
      PATH: `${dirname(Deno.execPath())}:${Deno.env.get("PATH")}`,
      HOME: Deno.env.get("HOME") ?? work,
      ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
      GITHUB_WORKSPACE: work,
      GITHUB_STEP_SUMMARY: summary,
      NO_COLOR: "1",
    },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
    summary,
    reports: `${work}/${given["report-dir"]}`,
  };
}

Deno.test("action.yml's scenario step annotates the failing assertion, writes the summary and the reports", async () => {
  const r = await runStep();
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(
    r.stdout,
    /^::error file=scenarios\/chat_one_gpu_fails\.yaml,line=11,col=3,title=chat-on-one-h100-tight-slo%3A expect\.ttft\.p99 < 5ms::expect\.ttft\.p99: expected TTFT_FROM_ARRIVAL\(s\)\.P99 < 5ms, got \d+(\.\d+)?ms$/m,
  );
  assert.match(r.stdout, /^PASS {2}chat-on-two-h100s /m);
  assert.match(Deno.readTextFileSync(r.summary), /^\| `chat-on-one-h100-tight-slo` \| ❌ \|/m);
  assert.deepEqual([...Deno.readDirSync(r.reports)].map((e) => e.name).sort(), [
    "chat-on-one-h100-tight-slo.html",
    "chat-on-one-h100-tight-slo.json",
    "chat-on-two-h100s.html",
    "chat-on-two-h100s.json",
  ]);
});

Deno.test("action.yml: a glob that matches nothing, or no scenarios at all, fails the step instead of checking nothing", async () => {
  for (
    const [scenarios, want] of [
      ["scenarioz/*.yaml", /^::error::no scenario file matches 'scenarioz\/\*\.yaml'$/m],
      ["scenarios/chat_passes.yaml missing.yaml", /^::error::no scenario file matches 'missing\.yaml'$/m],
      ["  ", /^::error::the scenarios input names no file or glob$/m],
    ] as const
  ) {
    const r = await runStep({ scenarios });
    assert.equal(r.code, 2, `${scenarios}: ${r.stdout}${r.stderr}`);
    assert.match(r.stdout, want);
    assert.doesNotMatch(r.stdout, /PASS|FAIL/, "no scenario ran");
  }
  // A plain file name: that scenario alone.
  const one = await runStep({ scenarios: "scenarios/chat_passes.yaml" });
  assert.equal(one.code, 0, one.stdout + one.stderr);
  assert.match(one.stdout, /^PASS {2}chat-on-two-h100s /m);
});
