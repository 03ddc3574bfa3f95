/**
 * Upstream ServingCast's example files run unchanged (read from
 * ../shared/compat/upstream; skipped where that folder is absent).
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

Deno.test({
  name: "upstream instances.yaml + common.yaml run unchanged and print the summary",
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
  name: "upstream DCP instance file runs unchanged with the dense Qwen3-32B common file",
  ignore: !present,
  fn: async () => {
    const run = await runUpstream("dcp_test_instance.yaml", "dcp_qwen3_32b_common.yaml");
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /\ntotal_requests {17}200\.000\n/);
    assert.match(run.stderr, /TP8 DP2/);
  },
});

Deno.test({
  name: "upstream DCP instance file runs unchanged with DeepSeek-R1 (MLA, MoE, EP16, DCP2)",
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
  name: "upstream PD example runs unchanged: 1 prefill instance (TP4) and 2 decode instances (TP2)",
  ignore: !present,
  fn: async () => {
    const run = await runUpstream("pd_disaggregation_instances.yaml", "pd_disaggregation_common.yaml");
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /\ntotal_requests {17}32\.000\n/);
    assert.match(run.stdout, /\ngroup0 +prefill +1 .* 32\n/);
    assert.match(run.stdout, /\ngroup1 +decode +2 .* 32\n/);
  },
});
