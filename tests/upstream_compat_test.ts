/**
 * Upstream ServingCast's example files run unchanged (read from
 * ../shared/compat/upstream, which is not copied into the project: those
 * tests say in their names that a clone without it skips them), and this
 * project's own files in the same full format always run
 * (tests/fixtures/upstream_format/).
 */
import assert from "node:assert/strict";
import { ROOT, runCli } from "./_helpers.ts";

const UPSTREAM = `${ROOT}../shared/compat/upstream/`;
const present = (() => {
  try {
    return Deno.statSync(`${UPSTREAM}instances.yaml`).isFile;
  } catch {
    return false;
  }
})();

const runUpstream = (instance: string, common: string) =>
  runCli(["--instance_config_path", UPSTREAM + instance, "--common_config_path", UPSTREAM + common]);

/** Said in the name of each test of upstream's own files. */
const NEEDS = " (upstream's files: ../shared/compat/upstream; a clone without it skips this)";

const OWN = `${ROOT}tests/fixtures/upstream_format/`;
const runOwn = (name: string) =>
  runCli([
    "--instance_config_path",
    `${OWN}${name}_instances.yaml`,
    "--common_config_path",
    `${OWN}${name}_common.yaml`,
  ]);

Deno.test("upstream's full format, every key written out (our own files): an aggregated group on TEST_DEVICE", async () => {
  const run = await runOwn("agg");
  assert.equal(run.code, 0, run.stderr);
  assert.match(
    run.stdout,
    /^ {9}E2E_TIME\(s\) {2}TTFT\(s\) {2}TPOT\(s\) {2}INPUT_TOKENS {2}OUTPUT_TOKENS {2}OUTPUT_TOKEN_THROUGHPUT\(tok\/s\)\n/,
  );
  assert.match(run.stdout, /\ntotal_requests {17}60\.000\n/);
  assert.match(
    run.stderr,
    /note: .*agg_common\.yaml: upstream estimator settings have no effect here and are ignored: do_compile, allow_graph_break, dump_input_shapes, chrome_trace, enable_multi_process, num_processes, predict_steps, enable_interpolate, interpolation_seed\n/,
  );
  assert.match(run.stderr, /on 2 instances of 1 × TEST_DEVICE \(TP1, /);
});

Deno.test("upstream's full format (our own files): prefill and decode pools, the KV transfer charged", async () => {
  const run = await runOwn("pd");
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /\ngroup0 +prefill +1 .* 24 +\S+ +\S+ .* 24\n/);
  assert.match(run.stdout, /\ngroup1 +decode +2 .* 24\n/);
});

Deno.test("upstream's full format (our own files): DeepSeek-R1 at TP8 DP2 EP16 with decode context parallelism", async () => {
  const run = await runOwn("dcp");
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /\ntotal_requests {17}30\.000\n/);
  assert.match(
    run.stderr,
    /Simulated deepseek-ai\/DeepSeek-R1 \(671\.0B, W8A8_STATIC\) on 1 instance of 16 × ATLAS_800_A3_752T_128G_DIE \(TP8 DP2, /,
  );
});

Deno.test({
  name: "upstream instances.yaml + common.yaml run unchanged and print the summary" + NEEDS,
  ignore: !present,
  fn: async () => {
    const run = await runUpstream("instances.yaml", "common.yaml");
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stdout,
      /^ {9}E2E_TIME\(s\) {2}TTFT\(s\) {2}TPOT\(s\) {2}INPUT_TOKENS {2}OUTPUT_TOKENS {2}OUTPUT_TOKEN_THROUGHPUT\(tok\/s\)\n/,
    );
    assert.match(run.stdout, /\ntotal_requests {17}500\.000\n/);
    assert.match(run.stdout, /\ntotal_input_tokens {13}1750000\.000\n/);
    assert.match(
      run.stderr,
      /note: .*common\.yaml: upstream estimator settings have no effect here and are ignored: do_compile/,
    );
    assert.match(run.stderr, /Simulated Qwen\/Qwen3-32B \(32\.8B, W8A8_DYNAMIC\) on 1 instance of 1 × TEST_DEVICE/);
  },
});

Deno.test({
  name: "upstream DCP instance file runs unchanged with the dense Qwen3-32B common file" + NEEDS,
  ignore: !present,
  fn: async () => {
    const run = await runUpstream("dcp_test_instance.yaml", "dcp_qwen3_32b_common.yaml");
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /\ntotal_requests {17}200\.000\n/);
    assert.match(run.stderr, /TP8 DP2/);
  },
});

Deno.test({
  name: "upstream DCP instance file runs unchanged with DeepSeek-R1 (MLA, MoE, EP16, DCP2)" + NEEDS,
  ignore: !present,
  fn: async () => {
    const run = await runUpstream("dcp_test_instance.yaml", "dcp_deepseek_r1_common.yaml");
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /\ntotal_requests {17}200\.000\n/);
    assert.match(
      run.stderr,
      /Simulated deepseek-ai\/DeepSeek-R1 \(671\.0B, W8A8_STATIC\) on 1 instance of 16 × ATLAS_800_A3_752T_128G_DIE \(TP8 DP2, /,
    );
  },
});

Deno.test({
  name: "upstream PD example runs unchanged: 1 prefill instance (TP4) and 2 decode instances (TP2)" + NEEDS,
  ignore: !present,
  fn: async () => {
    const run = await runUpstream("pd_disaggregation_instances.yaml", "pd_disaggregation_common.yaml");
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /\ntotal_requests {17}32\.000\n/);
    assert.match(run.stdout, /\ngroup0 +prefill +1 .* 32\n/);
    assert.match(run.stdout, /\ngroup1 +decode +2 .* 32\n/);
  },
});
