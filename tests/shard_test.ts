import assert from "node:assert/strict";
import { runSources } from "../core/assembly/run.ts";
import { mergeShards, parseShard, runIdentity, shardFile } from "../core/assembly/shard.ts";
import type { ShardFile } from "../core/assembly/shard.ts";
import { YamlSource } from "../core/config/source.ts";
import { ALL_STATISTICS } from "../core/metrics/summary.ts";
import { InputError } from "../core/config/errors.ts";
import { ROOT, runCli } from "./_helpers.ts";
import { parse, parseAllDocuments } from "yaml";

/** Four H100s behind a round-robin router, varied lengths, 8,000 requests at 40 req/s. */
const instances = (extra = "") =>
  new YamlSource(
    "i.yaml",
    `instance_groups: [{num_instances: 4, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: both${extra}}]`,
  );
const common = (routing: string, concurrency = 100_000_000) =>
  new YamlSource(
    "c.yaml",
    `model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
load_gen: {load_gen_type: synthetic, num_requests: 8000, arrival: {process: poisson, request_rate: 40},
  input_tokens: {dist: uniform, min: 64, max: 2048}, output_tokens: {dist: uniform, min: 8, max: 512}}
serving_config: {max_concurrency: ${concurrency}, engine: vllm, routing_policy: ${routing}}`,
  );

/** Runs every shard of `n` and returns their files as the CLI writes and reads them (through JSON). */
function shards(routing: string, n: number, exactUpTo: number): [string, ShardFile][] {
  return Array.from({ length: n }, (_, i) => {
    const shard = { index: i, count: n };
    const out = runSources([instances()], common(routing), { shard, exactUpTo });
    const file = shardFile(out, shard, runIdentity(out.assembled), 8000, out.stream);
    return [`shard${i}.json`, JSON.parse(JSON.stringify(file))];
  });
}

for (const [n, exactUpTo] of [[2, 1_000], [4, 1_000], [2, 100_000]]) {
  Deno.test(`round-robin sharded ${n} ways (${exactUpTo < 8000 ? "sketched" : "exact"}): merged, every engine and percentile is the unsharded run's`, () => {
    const whole = runSources([instances()], common("round_robin"), { exactUpTo });
    const merged = mergeShards(runIdentity(whole.assembled), shards("round_robin", n, exactUpTo));
    // Engine for engine: the same requests reached the same engine at the same times.
    assert.deepEqual(
      merged.result.engines.map((e) => [e.steps, e.served, e.busy, e.peakBatch]),
      whole.result.engines.map((e) => [e.steps, e.served, e.busy, e.peakBatch]),
    );
    assert.equal(merged.result.endTime, whole.result.endTime);
    for (
      const [got, want] of [[merged.summary.perMetric, whole.summary.perMetric], [
        merged.summary.extMetric,
        whole.summary.extMetric,
      ]] as const
    ) {
      for (const [column, stats] of Object.entries(want)) {
        for (const st of ALL_STATISTICS) {
          const g = (got as Record<string, Record<string, number>>)[column][st], w = stats[st];
          // The same values, merged in another order: the same buckets (or order statistics); sums round apart.
          if (st === "AVERAGE") assert.ok(Math.abs(g - w) <= 1e-9 * Math.abs(w), `${column} ${st}: ${g} vs ${w}`);
          else assert.equal(g, w, `${column} ${st}`);
        }
      }
    }
    assert.deepEqual(merged.summary.overall, whole.summary.overall);
    assert.deepEqual(merged.summary.sketch, whole.summary.sketch);
    // The thinned tables keep other requests: the rates agree within a percent; whole tables are the same rows.
    const [m, w] = [merged.summary.load, whole.summary.load];
    assert.equal(m.keepsUp, w.keepsUp);
    assert.ok(Math.abs(m.offeredRate / w.offeredRate - 1) < 0.01, `${m.offeredRate} vs ${w.offeredRate}`);
    if (exactUpTo >= 8000) assert.deepEqual(merged.result.requests.finish, whole.result.requests.finish);
  });
}

Deno.test("least-loaded shards are partitions behind a hashing front door: their merge is close to one fleet, not equal", () => {
  const whole = runSources([instances()], common("least_loaded"), { exactUpTo: 1_000 });
  const merged = mergeShards(runIdentity(whole.assembled), shards("least_loaded", 2, 1_000));
  assert.equal(merged.summary.overall.total_requests, 8000);
  const [g, w] = [merged.summary.perMetric["TPOT(s)"].MEDIAN, whole.summary.perMetric["TPOT(s)"].MEDIAN];
  assert.ok(Math.abs(g / w - 1) < 0.05, `TPOT median ${g} vs ${w}`);
});

Deno.test("what cannot be sharded or merged is refused, naming why", () => {
  const refused = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      assert.ok(e instanceof InputError, String(e));
      return e.message;
    }
    assert.fail("not refused");
  };
  assert.match(
    refused(() => runSources([instances()], common("round_robin", 64), { shard: { index: 0, count: 2 } })),
    /^--shard 0\/2: max_concurrency \(64\) holds requests back across partitions/,
  );
  assert.match(
    refused(() => runSources([instances()], common("round_robin"), { shard: { index: 0, count: 5 } })),
    /^--shard 0\/5: 5 shards need at least 5 engines; the deployment has 4$/,
  );
  const files = shards("round_robin", 2, 1_000);
  const whole = runSources([instances()], common("round_robin"), { exactUpTo: 1_000 });
  const id = runIdentity(whole.assembled);
  assert.equal(
    refused(() => mergeShards(id, [files[0]])),
    "shard0.json: shards 1/2 are missing",
  );
  assert.equal(
    refused(() => mergeShards(id, [files[0], files[0]])),
    "shard0.json: shard 0/2 again (shard0.json is it)",
  );
  assert.match(refused(() => mergeShards("other", files)), /^shard0\.json: a shard of another run/);
  assert.throws(() => parseShard("2/2"), /expected i\/n with 0 ≤ i < n/);
});

Deno.test("cli: --shard needs --shard_output, and a bad shard exits 2 with one line", async () => {
  const run = await runCli(["--shard", "0/2"]);
  assert.equal(run.code, 2);
  assert.equal(run.stderr, "servingcast: error: --shard needs --shard_output\n");
  const bad = await runCli(["--shard", "3/2", "--shard_output", "x.json"]);
  assert.equal(bad.code, 2);
  assert.equal(
    bad.stderr,
    "servingcast: --shard: expected i/n with 0 ≤ i < n (shard 0/4 is the first of 4), got '3/2'\n",
  );
});

Deno.test("the sharded-replay examples: a GitHub Actions matrix and a Kubernetes Indexed Job, each with a merge step", () => {
  const wf = parse(Deno.readTextFileSync(`${ROOT}.github/workflows/sim-sharded.yml`));
  assert.deepEqual(wf.jobs.shard.strategy.matrix.shard, [0, 1, 2, 3]);
  assert.match(wf.env.FLEET, /--instance_config_path examples\/fleet\/instances\.yaml/);
  const shardRun = wf.jobs.shard.steps.map((s: { run?: string }) => s.run ?? "").join("\n");
  assert.match(
    shardRun,
    /deno@2\.9\.6 task sim \$FLEET --shard \$\{\{ matrix\.shard \}\}\/4 --shard_output shards\/shard-\$\{\{ matrix\.shard \}\}\.json/,
  );
  assert.equal(wf.jobs.merge.needs, "shard");
  const mergeRun = wf.jobs.merge.steps.map((s: { run?: string }) => s.run ?? "").join("\n");
  assert.match(mergeRun, /task sim \$FLEET --merge shards\/shard-\*\.json/);
  const [shards, merge] = parseAllDocuments(Deno.readTextFileSync(`${ROOT}examples/k8s/sim-indexed-job.yaml`))
    .map((d) => d.toJS());
  assert.equal(shards.spec.completionMode, "Indexed");
  assert.equal(shards.spec.completions, 4);
  const podArgs = shards.spec.template.spec.containers[0].args.join(" ");
  assert.match(
    podArgs,
    /--shard "\$JOB_COMPLETION_INDEX\/4" --shard_output "\/shards\/shard-\$JOB_COMPLETION_INDEX\.json"/,
  );
  assert.match(merge.spec.template.spec.containers[0].args.join(" "), /--merge \/shards\/shard-\*\.json$/);
  const claim = (job: typeof shards) =>
    job.spec.template.spec.volumes.find((v: { name: string }) => v.name === "shards").persistentVolumeClaim.claimName;
  assert.equal(claim(shards), claim(merge));
  // The fleet the examples replay routes round robin and holds no request back: its shards are the unsharded run.
  const common = parse(Deno.readTextFileSync(`${ROOT}examples/fleet/common.yaml`));
  assert.equal(common.serving_config.routing_policy, "round_robin");
  assert.ok(common.serving_config.max_concurrency >= common.load_gen.num_requests);
  assert.equal(
    parse(Deno.readTextFileSync(`${ROOT}examples/fleet/instances.yaml`)).instance_groups[0].num_instances % 4,
    0,
  );
});
