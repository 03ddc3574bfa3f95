/**
 * The capacity planner (`deno task plan`, core/planner): its answer is the
 * fewest instances a brute-force sweep finds, the deployment it writes
 * passes `deno task check` unchanged, and one instance fewer does not.
 */
import assert from "node:assert/strict";
import { parse, parseAllDocuments } from "yaml";
import { planDeployments } from "../core/planner/planner.ts";
import { formatPlan, parseSlo, planFiles, runPlan } from "../tools/plan.ts";
import { captureTaskAsync, ROOT, runCheckTask } from "./_helpers.ts";

const CHAT = `${ROOT}scenarios/configs/llama8b_chat.yaml`;
const SLOS = [{ key: "ttft.p99", bound: "<= 0.5" }, { key: "tpot.p99", bound: "<= 0.03" }];

Deno.test("Llama-3.1-8B on H100 at 45 req/s: the planned count is the first count of a brute-force sweep that passes the written scenario", async () => {
  const plan = planDeployments({
    commonFile: CHAT,
    targetRate: 45,
    slos: SLOS,
    devices: ["H100_SXM_80G"],
    tpSizes: [1],
    maxDevices: 16,
  });
  assert.equal(plan.ranked.length, 1);
  const best = plan.ranked[0];
  const dir = Deno.makeTempDirSync({ prefix: "servingcast-plan-" });
  const files = planFiles(plan, dir);
  for (const [name, text] of Object.entries(files)) Deno.writeTextFileSync(`${dir}/${name}`, text);
  // Brute force: every count from 1 up, through the written scenario (SLOs from arrival, keeping up).
  const passes = async (n: number) => {
    Deno.writeTextFileSync(
      `${dir}/deployment.yaml`,
      files["deployment.yaml"].replace(/num_instances: \d+/, `num_instances: ${n}`),
    );
    return (await runCheckTask([`${dir}/scenario.yaml`])).code === 0;
  };
  let first: number | undefined;
  for (const n of [1, 2, 3, 4, 5, 6]) {
    if (await passes(n)) {
      first = n;
      break;
    }
  }
  assert.equal(best.instances, first, `planned ${best.instances}, brute force ${first}`);
  assert.ok(best.instances > 1, "the case needs more than one instance, so that one fewer is tried");
  // The written scenario, unchanged, passes; one instance fewer fails.
  Deno.writeTextFileSync(`${dir}/deployment.yaml`, files["deployment.yaml"]);
  const run = await runCheckTask([`${dir}/scenario.yaml`]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^PASS {2}planned-h100_sxm_80g-tp1 /);
  assert.equal(await passes(best.instances - 1), false);
  assert.ok(best.lowerBound <= best.instances, `cost-model bound ${best.lowerBound} above the answer`);
  // What the decision rests on: the requests of the planned count's runs (its confirmation's 16 × the file's 1,000,
  // or 4× that where those runs did not decide), printed, and written into the scenario when they differ from the
  // file's.
  assert.ok([16000, 64000].includes(best.requests), `${best.requests}`);
  assert.equal(files["scenario.yaml"].includes(`load_gen.num_requests: ${best.requests}`), best.requests !== 1000);
  assert.match(
    formatPlan(plan).join("\n"),
    /\nJudged on [\d,]+ requests a run, 1 seed: each answer ran again with 16× the file's requests \(up to 64,000\) to confirm it/,
  );
});

Deno.test("candidates that cannot run are discarded without simulating them, with every rule they break", () => {
  const plan = planDeployments({
    commonFile: `${ROOT}examples/plan/llama70b_chat.yaml`,
    targetRate: 2,
    slos: [{ key: "ttft.p99", bound: "<= 5" }],
    devices: ["H100_SXM_80G"],
    tpSizes: [1, 3],
    maxDevices: 8,
  });
  assert.equal(plan.ranked.length, 0);
  const [tp1, tp3] = plan.candidates;
  assert.equal(tp1.kind, "infeasible");
  assert.match(tp1.kind === "infeasible" ? tp1.reason : "", /does not fit on H100_SXM_80G with tp_size 1/);
  assert.equal(tp3.kind, "infeasible");
  assert.equal(
    tp3.kind === "infeasible" ? tp3.reason : "",
    "tp_size must divide the 64 attention heads of meta-llama/Llama-3.1-70B-Instruct, got 3; " +
      "mlp_tp_size must divide the intermediate size (28672) of meta-llama/Llama-3.1-70B-Instruct, got 3",
  );
  assert.match(formatPlan(plan).join("\n"), /No candidate meets the SLOs at this rate\./);
});

Deno.test("the ranked table orders by cost per million output tokens with prices, marks the Pareto front and gives each SLO's margin", () => {
  const plan = planDeployments({
    commonFile: CHAT,
    targetRate: 20,
    slos: SLOS,
    devices: ["H100_SXM_80G", "H200_SXM_141G"],
    tpSizes: [1, 2],
    maxDevices: 8,
    prices: { H100_SXM_80G: 2, H200_SXM_141G: 3.5 },
  });
  const costs = plan.ranked.map((c) => c.costPerMillionTokens!);
  assert.deepEqual(costs, [...costs].sort((a, b) => a - b));
  for (const c of plan.ranked) {
    assert.equal(c.costPerHour, c.devices * (c.device === "H100_SXM_80G" ? 2 : 3.5));
    // $/hour over the millions of output tokens an hour: 20 req/s × 256 tokens = 5,120 tok/s, 18.4 M an hour.
    const tokensPerHour = c.tokensPerDevice * c.devices * 3600;
    assert.ok(Math.abs(tokensPerHour / (20 * 256 * 3600) - 1) < 0.05, `${tokensPerHour}`);
    assert.ok(Math.abs(c.costPerMillionTokens! - c.costPerHour! / (tokensPerHour / 1e6)) < 1e-9);
    // No planned candidate beats a front member on both axes.
    if (c.pareto) {
      assert.ok(
        !plan.ranked.some((d) => d.tokensPerDevice > c.tokensPerDevice && d.tokensPerUser > c.tokensPerUser),
      );
    }
  }
  assert.ok(plan.ranked.some((c) => c.pareto));
  const text = formatPlan(plan).join("\n");
  assert.match(
    text,
    /^rank +device +tp +topology +instances +devices +\$\/hour +\$\/Mtok +tok\/s\/device +tok\/s\/user +ttft\.p99 +margin/m,
  );
  assert.match(
    text,
    /^ +1 +(H100_SXM_80G|H200_SXM_141G) +[12] +agg +\d+ +\d+ +\d+\.\d\d +\d+\.\d\d +\d+ +[\d.]+ +[\d.]+ +\+\d+%/m,
  );
});

Deno.test("deno task plan: bad arguments are one line and exit 2", async () => {
  const cases: [string[], RegExp][] = [
    [["--target_rate", "5", "--slo", "ttft.p99<=1"], /^plan: --common_config_path is required/],
    [["--common_config_path", CHAT, "--slo", "ttft.p99<=1"], /^plan: --target_rate: expected a positive number/],
    [["--common_config_path", CHAT, "--target_rate", "5"], /^plan: at least one --slo is required/],
    [["--common_config_path", CHAT, "--target_rate", "5", "--slo", "nope<=1"], /unknown metric 'nope'/],
    [
      ["--common_config_path", CHAT, "--target_rate", "5", "--slo", "ttft.p99<=1", "--devices", "H100"],
      /^plan: --devices: unknown device 'H100'/,
    ],
    [
      ["--common_config_path", CHAT, "--target_rate", "5", "--slo", "ttft.p99<=1", "--topology", "pd"],
      /^plan: --topology: expected agg, disagg or agg,disagg, got 'pd'/,
    ],
    [["--common_config_path", "nope.yaml", "--target_rate", "5", "--slo", "ttft.p99<=1"], /^nope\.yaml: cannot read/],
  ];
  const ok = ["--common_config_path", CHAT, "--target_rate", "5", "--slo", "ttft.p99<=1"];
  cases.push(
    [[...ok, "--quantization", "DISABLED,NOPE"], /^plan: --quantization: expected some of DISABLED, .*got 'NOPE'/],
    [[...ok, "--slo", "ttft.p99<=2"], /^plan: --slo: ttft\.p99 is given twice/],
    [
      ["--common_config_path", CHAT, "--target_rate", "5", "--slo", "ttft.p99<=abc"],
      /expected a number after <= \(a unit may follow, as in 2s or 500ms\), got 'abc'/,
    ],
  );
  const prices = `${Deno.makeTempDirSync({ prefix: "servingcast-plan-" })}/prices.yaml`;
  Deno.writeTextFileSync(prices, "H100_SXM_80G: 2\n");
  cases.push([[...ok, "--devices", "H100_SXM_80G,H200_SXM_141G", "--prices", prices], /no price for H200_SXM_141G/]);
  const shards = Deno.makeTempDirSync({ prefix: "servingcast-plan-" });
  Deno.writeTextFileSync(`${shards}/plan.shard-0-of-1.json`, "{}");
  cases.push([
    ["--merge", shards],
    /plan\.shard-0-of-1\.json: not a plan shard: missing required key 'request' \(a shard holds request, shard and outcomes, as --shard writes them\)$/m,
  ]);
  const aFile = `${Deno.makeTempDirSync({ prefix: "servingcast-plan-" })}/file`;
  Deno.writeTextFileSync(aFile, "");
  cases.push([
    ["--common_config_path", CHAT, "--target_rate", "5", "--slo", "ttft.p99<=1", "--out", aFile],
    /^plan: --out: .*file is not a folder/,
  ]);
  for (const [args, want] of cases) {
    const r = await captureTaskAsync(runPlan, args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.equal(r.stderr.trimEnd().split("\n").length, 1, r.stderr);
    assert.match(r.stderr, want);
  }
  assert.deepEqual(parseSlo("tpot.p99 < 0.05"), { key: "tpot.p99", bound: "< 0.05" });
  assert.deepEqual(parseSlo("ttft.p99<=2 @ 90%"), { key: "ttft.p99", bound: "<= 2 @ 90%" });
  assert.match(String(parseSlo("ttft.p99<=2 @ 40%")), /expected a confidence above 50% and below 100%/);
  // The scenario language's units: as an expect writes them.
  assert.deepEqual(parseSlo("ttft.p99 < 2s"), { key: "ttft.p99", bound: "< 2s" });
  assert.deepEqual(parseSlo("tpot.p99<=50ms @ 90%"), { key: "tpot.p99", bound: "<= 50ms @ 90%" });
  assert.equal(
    parseSlo("output_token_throughput > 2s"),
    "--slo 'output_token_throughput > 2s': 's' is not a unit of this metric, which is in tok/s",
  );
});

Deno.test("an SLO at a confidence plans on the end of the prediction interval: more instances than on the simulated value", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "servingcast-plan-" });
  Deno.writeTextFileSync(
    `${dir}/c.yaml`,
    `model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
load_gen: {load_gen_type: fixed_length, num_requests: 400, num_input_tokens: 1024, num_output_tokens: 128, request_rate: 4.0}
serving_config: {max_concurrency: 1000, engine: vllm, engine_version: 0.10.0}
`,
  );
  const plan = (slo: string) =>
    captureTaskAsync(runPlan, [
      "--common_config_path",
      `${dir}/c.yaml`,
      "--target_rate",
      "60",
      "--slo",
      slo,
      "--devices",
      "H100_SXM_80G",
      "--tp",
      "1",
      "--workers",
      "1",
    ]);
  const row = (out: string) => out.split("\n").find((l) => /^ +1 +H100_SXM_80G/.test(l))!.trim().split(/ +/);
  // A bound the simulated p99 meets with room at the count that keeps up with 60 req/s (3), its 90% end not.
  const plain = await plan("ttft.p99<=0.1");
  const sure = await plan("ttft.p99<=0.1 @ 90%");
  assert.equal(plain.code, 0, plain.stderr);
  assert.equal(sure.code, 0, sure.stderr);
  assert.match(sure.stdout, /SLOs ttft\.p99 <= 0\.1 @ 90%/);
  // Columns: rank, device, tp, topology, instances, devices, tok/s/device, tok/s/user, ttft.p99, margin.
  const [p, s] = [row(plain.stdout), row(sure.stdout)];
  assert.ok(Number(s[4]) > Number(p[4]), `${s[4]} instances at 90% vs ${p[4]}`);
  // The value shown is the 90% upper end at the planned count, within the bound.
  assert.ok(Number(s[8]) <= 0.1 && /^\+\d+%$/.test(s[9]), s.join(" "));
});

Deno.test("a search split into 4 shards and merged, or run on Web Workers, prints and writes the in-process plan byte for byte", async () => {
  const base = [
    "--common_config_path",
    CHAT,
    "--target_rate",
    "20",
    "--slo",
    "ttft.p99<=0.5",
    "--slo",
    "tpot.p99<=0.03",
    "--devices",
    "H100_SXM_80G,H200_SXM_141G",
    "--tp",
    "1,2,4",
  ];
  const whole = Deno.makeTempDirSync({ prefix: "servingcast-plan-" });
  const split = Deno.makeTempDirSync({ prefix: "servingcast-plan-" });
  const workers = Deno.makeTempDirSync({ prefix: "servingcast-plan-" });
  const unsharded = await captureTaskAsync(runPlan, [...base, "--workers", "1", "--out", whole]);
  // On Web Workers (two, each planning every other candidate) the plan is the same, byte for byte.
  const parallel = await captureTaskAsync(runPlan, [...base, "--workers", "2", "--out", workers]);
  assert.equal(parallel.stdout.replaceAll(workers, "DIR"), unsharded.stdout.replaceAll(whole, "DIR"));
  for (const f of ["plan.json", "pareto.svg"]) {
    assert.equal(Deno.readTextFileSync(`${workers}/${f}`), Deno.readTextFileSync(`${whole}/${f}`), f);
  }
  assert.equal(unsharded.code, 0, unsharded.stderr);
  for (let i = 0; i < 4; i++) {
    const r = await captureTaskAsync(runPlan, [...base, "--workers", "1", "--shard", `${i}/4`, "--out", split]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^planned [12] of 6 candidates \\(shard ${i}/4\\)$`, "m"));
  }
  const merged = await captureTaskAsync(runPlan, ["--merge", split]);
  assert.equal(merged.code, 0, merged.stderr);
  assert.equal(merged.stdout.replaceAll(split, "DIR"), unsharded.stdout.replaceAll(whole, "DIR"));
  for (const f of ["plan.json", "deployment.yaml", "scenario.yaml", "pareto.svg"]) {
    assert.equal(Deno.readTextFileSync(`${split}/${f}`), Deno.readTextFileSync(`${whole}/${f}`), f);
  }
  // The chart: one point per planned candidate (and the winner's ring), and the front drawn through its members.
  const svg = Deno.readTextFileSync(`${whole}/pareto.svg`);
  const planJson = JSON.parse(Deno.readTextFileSync(`${whole}/plan.json`));
  assert.match(svg, /^<svg /);
  assert.equal(svg.match(/aria-roledescription="point"/g)?.length, planJson.ranked.length + 1);
  // The front's members labelled, the winner's label first.
  assert.ok(svg.includes(">winner: "), "the winner is labelled");
  const front = /aria-roledescription="line mark" d="(M[^"]*)"/.exec(svg)?.[1] ?? "";
  assert.equal(
    front.split(/[ML]/).filter(Boolean).length,
    planJson.ranked.filter((c: { pareto: boolean }) => c.pareto).length,
  );
  // A missing shard, or one of another search, is bad input.
  Deno.removeSync(`${split}/plan.shard-2-of-4.json`);
  const missing = await captureTaskAsync(runPlan, ["--merge", split]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /: shard 2 of 4 missing$/m);
  const bad = await captureTaskAsync(runPlan, [...base, "--shard", "4/4", "--out", split]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^plan: --shard: expected I\/N with 0 ≤ I < N/);
});

Deno.test("deno task check --shard I/N runs every I-th of N scenarios, together all of them once", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "servingcast-plan-" });
  const scenario = (n: number) =>
    `name: s${n}\ninstance_config: ${ROOT}scenarios/configs/h100_tp1_x1.yaml\ncommon_config: ${CHAT}\n` +
    `overrides: {load_gen.num_requests: 20}\nexpect: {total_requests: "== 20"}\n`;
  const files = [0, 1, 2, 3, 4].map((n) => {
    Deno.writeTextFileSync(`${dir}/s${n}.yaml`, scenario(n));
    return `${dir}/s${n}.yaml`;
  });
  const names: string[][] = [];
  for (const i of [0, 1, 2]) {
    const r = await runCheckTask([...files, "--shard", `${i}/3`]);
    assert.equal(r.code, 0, r.stderr);
    names.push(r.stdout.trimEnd().split("\n").map((l) => l.split("  ")[1]));
  }
  assert.deepEqual(names, [["s0", "s3"], ["s1", "s4"], ["s2"]]);
  assert.equal((await runCheckTask([...files, "--shard", "3/3"])).code, 2);
});

Deno.test("the sharded-search examples: a GitHub Actions matrix and a Kubernetes Indexed Job, each with a merge step", () => {
  const wf = parse(Deno.readTextFileSync(`${ROOT}.github/workflows/plan-sharded.yml`));
  assert.deepEqual(wf.jobs.shard.strategy.matrix.shard, [0, 1, 2, 3]);
  const shardRun = wf.jobs.shard.steps.map((s: { run?: string }) => s.run ?? "").join("\n");
  assert.match(shardRun, /deno@2\.9\.6 task plan \$PLAN --shard \$\{\{ matrix\.shard \}\}\/4 --out plan/);
  assert.deepEqual(wf.jobs.merge.needs, "shard");
  const mergeRun = wf.jobs.merge.steps.map((s: { run?: string }) => s.run ?? "").join("\n");
  assert.match(mergeRun, /task plan --merge plan\n/);
  assert.match(mergeRun, /task check plan\/scenario\.yaml/);
  const [shards, merge] = parseAllDocuments(Deno.readTextFileSync(`${ROOT}examples/k8s/plan-indexed-job.yaml`))
    .map((d) => d.toJS());
  assert.equal(shards.spec.completionMode, "Indexed");
  assert.equal(shards.spec.completions, 4);
  const podArgs = shards.spec.template.spec.containers[0].args.join(" ");
  assert.match(podArgs, /--shard "\$JOB_COMPLETION_INDEX\/4" --out \/plan/);
  assert.match(merge.spec.template.spec.containers[0].args.join(" "), /task plan --merge \/plan$/);
  const claim = (job: typeof shards) =>
    job.spec.template.spec.volumes.find((v: { name: string }) => v.name === "plan").persistentVolumeClaim.claimName;
  assert.equal(claim(shards), claim(merge));
  // The example's common file and SLOs are the README's and the bench's.
  assert.match(podArgs, /--common_config_path examples\/plan\/llama70b_chat\.yaml --target_rate 20/);
});

Deno.test("disaggregated: the planned prefill and decode counts pass their scenario, and one fewer of either fails", async () => {
  const plan = planDeployments({
    commonFile: CHAT,
    targetRate: 45,
    slos: SLOS,
    devices: ["H100_SXM_80G"],
    tpSizes: [1],
    topologies: ["disagg"],
    maxDevices: 16,
  });
  assert.equal(plan.ranked.length, 1);
  const best = plan.ranked[0];
  assert.equal(best.topology, "disagg");
  assert.equal(best.instances, best.prefill + best.decode);
  assert.ok(best.prefill >= 1 && best.decode >= 1);
  const dir = Deno.makeTempDirSync({ prefix: "servingcast-plan-" });
  const files = planFiles(plan, dir);
  for (const [name, text] of Object.entries(files)) Deno.writeTextFileSync(`${dir}/${name}`, text);
  // KV transfers are timed over each device's scale-out NIC, not free.
  assert.match(files["scenario.yaml"], /^ {2}model_config\.enable_kv_transfer_modeling: true$/m);
  assert.match(files["deployment.yaml"], /device2device_bandwidth: 50000000000/);
  const run = await runCheckTask([`${dir}/scenario.yaml`]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^PASS {2}planned-h100_sxm_80g-tp1-disagg /);
  const groups = files["deployment.yaml"].split("  - num_instances: ");
  const withCounts = (p: number, d: number) =>
    [groups[0], `${p}${groups[1].replace(/^\d+/, "")}`, `${d}${groups[2].replace(/^\d+/, "")}`].join(
      "  - num_instances: ",
    );
  assert.equal(withCounts(best.prefill, best.decode), files["deployment.yaml"]);
  for (const [p, d] of [[best.prefill - 1, best.decode], [best.prefill, best.decode - 1]]) {
    if (p < 1 || d < 1) continue;
    Deno.writeTextFileSync(`${dir}/deployment.yaml`, withCounts(p, d));
    assert.equal((await runCheckTask([`${dir}/scenario.yaml`])).code, 1, `${p}P+${d}D passes`);
  }
});

/** `deno task plan` in this process for Llama-3.1-8B chat on one H100 per instance (TP 1), at `rate` under `slo`. */
const planOnH100 = (rate: number, slo: string, more: string[]) =>
  captureTaskAsync(runPlan, [
    "--common_config_path",
    CHAT,
    "--target_rate",
    String(rate),
    "--slo",
    slo,
    "--devices",
    "H100_SXM_80G",
    "--tp",
    "1",
    "--workers",
    "1",
    ...more,
  ]);

Deno.test("a grid of batch limits and quantizations: each combination is a candidate, and the winner's scenario carries its settings", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "servingcast-plan-" });
  const r = await planOnH100(45, "ttft.p99<=0.5", [
    "--max_num_seqs",
    "32,256",
    "--quantization",
    "DISABLED,W8A8_DYNAMIC",
    "--out",
    dir,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const plan = JSON.parse(Deno.readTextFileSync(`${dir}/plan.json`));
  assert.equal(plan.candidates.length, 4);
  assert.equal(plan.ranked.length, 4);
  // W8A8 weights halve the bytes a decode step reads: fewer instances than BF16 at the same batch limit.
  const at = (seqs: number, quant: string) =>
    plan.ranked.find((c: { settings: Record<string, unknown> }) =>
      c.settings["serving_config.max_num_seqs"] === seqs && c.settings["model_config.quantize_linear_action"] === quant
    ).instances;
  assert.ok(at(256, "W8A8_DYNAMIC") < at(256, "DISABLED"), `${at(256, "W8A8_DYNAMIC")} vs ${at(256, "DISABLED")}`);
  const best = plan.ranked[0];
  const scenario = Deno.readTextFileSync(`${dir}/scenario.yaml`);
  for (const [k, v] of Object.entries(best.settings)) assert.match(scenario, new RegExp(`^ {2}${k}: "?${v}"?$`, "m"));
  const check = await runCheckTask([`${dir}/scenario.yaml`]);
  assert.equal(check.code, 0, check.stderr);
});

Deno.test("--engines and --kv_cache_dtype: each engine profile and KV dtype is a candidate, and the winner's scenario names them", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "servingcast-plan-" });
  const r = await planOnH100(30, "tpot.p99<=0.02", [
    "--engines",
    "vllm,sglang,trtllm",
    "--kv_cache_dtype",
    "DISABLED,FP8",
    "--report-dir",
    dir,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const plan = JSON.parse(Deno.readTextFileSync(`${dir}/plan.json`));
  // For the winner (and each Pareto point): each engine's launch scripts and Kubernetes manifest, and the page.
  const engine = plan.ranked[0].settings["serving_config.engine"];
  const winner = `${dir}/launch/1-h100-tp1-${engine}`;
  for (const e of ["vllm", "sglang", "trtllm"]) {
    assert.match(Deno.readTextFileSync(`${winner}/${e}/both.sh`), /^exec /m);
    assert.match(Deno.readTextFileSync(`${winner}/${e}/kubernetes.yaml`), /^kind: StatefulSet$/m);
  }
  assert.match(Deno.readTextFileSync(`${winner}/README.md`), new RegExp(`\\(the profile the plan simulated\\)`));
  assert.match(
    r.stdout,
    /^wrote .*\/launch\/: vLLM, SGLang and TensorRT-LLM launch scripts and Kubernetes manifests of \d+ deployments? /m,
  );
  assert.ok(Deno.statSync(`${dir}/plan.html`).isFile);
  assert.deepEqual(
    plan.candidates.map((c: { settings: Record<string, string> }) =>
      `${c.settings["serving_config.engine"]}/${c.settings["model_config.quantize_attention_action"]}`
    ),
    ["vllm/DISABLED", "vllm/FP8", "sglang/DISABLED", "sglang/FP8", "trtllm/DISABLED", "trtllm/FP8"],
  );
  assert.match(r.stdout, / engine=\w+ kv=(DISABLED|FP8) /);
  const best = plan.ranked[0];
  const scenario = Deno.readTextFileSync(`${dir}/scenario.yaml`);
  assert.match(scenario, new RegExp(`^ {2}serving_config\\.engine: "${best.settings["serving_config.engine"]}"$`, "m"));
  assert.equal((await runCheckTask([`${dir}/scenario.yaml`])).code, 0);
  const wrong = await captureTaskAsync(runPlan, [
    "--common_config_path",
    CHAT,
    "--target_rate",
    "30",
    "--slo",
    "tpot.p99<=0.02",
    "--engines",
    "vllm,tgi",
  ]);
  assert.equal(wrong.code, 2);
  assert.match(
    wrong.stderr,
    /^plan: --engines: expected some of vllm, sglang, trtllm, mindie, lmdeploy, got 'tgi' \(deno task plan --help\)$/m,
  );
});

Deno.test("--mtp_tokens: MTP speculation is a search axis for a model with MTP layers, and refused for one without", () => {
  const dir = Deno.makeTempDirSync({ prefix: "servingcast-plan-" });
  const ds = `${dir}/ds.yaml`;
  Deno.writeTextFileSync(
    ds,
    Deno.readTextFileSync(`${ROOT}scenarios/configs/deepseek_v3_chat_mtp.yaml`)
      .replace(/num_mtp_tokens: \d+/, "num_mtp_tokens: 0").replace(/num_requests: \d+/, "num_requests: 300"),
  );
  const request = {
    targetRate: 8,
    slos: [{ key: "tpot.median", bound: "<= 0.03" }],
    devices: ["H200_SXM_141G"],
    tpSizes: [8],
    parallel: ["dp-ep"] as const,
    maxDevices: 16,
    settings: { "model_config.num_mtp_tokens": [0, 1] },
  };
  const plan = planDeployments({ ...request, commonFile: ds });
  const tpot = (mtp: number) =>
    plan.ranked.find((c) => c.settings["model_config.num_mtp_tokens"] === mtp)!.values["tpot.median"]!;
  // One draft token accepted 85% of the time: fewer steps per token, a lower median TPOT.
  assert.ok(tpot(1) < tpot(0), `${tpot(1)} vs ${tpot(0)}`);
  assert.equal(plan.ranked[0].launch.mtpTokens, plan.ranked[0].settings["model_config.num_mtp_tokens"]);
  const dense = planDeployments({ ...request, commonFile: CHAT, tpSizes: [1], parallel: ["tp"] });
  const refused = dense.candidates.filter((c) => c.kind === "infeasible");
  assert.equal(refused.length, 1);
  assert.match(
    refused[0].kind === "infeasible" ? refused[0].reason : "",
    /^MTP speculation \(1 draft token\) needs a model with MTP layers; meta-llama\/Llama-3\.1-8B-Instruct has none \(num_nextn_predict_layers\)$/,
  );
});

Deno.test("--speculation: EAGLE and n-gram are a search axis; the plan's launch carries the chosen one", async () => {
  const plan = planDeployments({
    commonFile: CHAT,
    targetRate: 8,
    slos: [{ key: "tpot.median", bound: "<= 0.03" }],
    devices: ["H100_SXM_80G"],
    tpSizes: [1],
    maxDevices: 4,
    settings: { "serving_config.speculative_config": ["none", "eagle:3", "ngram:3"] },
  });
  const of = (s: string) => plan.ranked.find((c) => c.settings["serving_config.speculative_config"] === s)!;
  const tpot = (s: string) => of(s).values["tpot.median"]!;
  // EAGLE at its paper's median rates (0.765, 0.69, 0.68): 1 + 0.765 + 0.528 + 0.359 = 2.65 tokens per step, less its
  // draft head's cost; n-gram at vLLM's code-editing rates (0.69, 0.826, 0.877): 2.76 tokens, no draft model.
  assert.ok(tpot("eagle:3") < 0.6 * tpot("none"), `${tpot("eagle:3")} vs ${tpot("none")}`);
  assert.ok(tpot("ngram:3") < 0.6 * tpot("none"), `${tpot("ngram:3")} vs ${tpot("none")}`);
  assert.deepEqual(of("eagle:3").launch.speculative, { method: "eagle", tokens: 3 });
  assert.equal(of("none").launch.speculative, undefined);
  const wrong = await captureTaskAsync(runPlan, [
    "--common_config_path",
    CHAT,
    "--target_rate",
    "8",
    "--slo",
    "tpot.median<=0.03",
    "--speculation",
    "none,medusa:2",
  ]);
  assert.equal(wrong.code, 2);
  assert.match(
    wrong.stderr,
    /^plan: --speculation: expected none, eagle:K or ngram:K \(K from 1 to 5\), got 'none,medusa:2' \(deno task plan --help\)$/m,
  );
});

Deno.test("MoE layouts: expert parallelism is searched for a mixture-of-experts model, and refused for a dense one", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "servingcast-plan-" });
  const moeCommon = `${dir}/qwen3_moe.yaml`;
  Deno.writeTextFileSync(
    moeCommon,
    Deno.readTextFileSync(CHAT).replace("meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-30B-A3B"),
  );
  const request = {
    targetRate: 30,
    slos: SLOS,
    devices: ["H100_SXM_80G"],
    tpSizes: [1, 2],
    parallel: ["tp", "tp-ep", "dp-ep"] as const,
    maxDevices: 8,
  };
  const moe = planDeployments({ ...request, commonFile: moeCommon });
  // TP 1 once (every layout of one device is the same), TP 2 in all three layouts.
  assert.deepEqual(moe.candidates.map((c) => `${c.parallel}${c.tp}`), ["tp1", "tp2", "tp-ep2", "dp-ep2"]);
  const dpEp = moe.ranked.find((c) => c.parallel === "dp-ep");
  assert.ok(dpEp, "dp-ep planned");
  const files = planFiles({ ...moe, ranked: [dpEp] }, dir);
  for (const [name, text] of Object.entries(files)) Deno.writeTextFileSync(`${dir}/${name}`, text);
  assert.match(files["deployment.yaml"], /tp_size: 1\n +dp_size: 2\n +ep_size: 2\n +moe_tp_size: 1/);
  const run = await runCheckTask([`${dir}/scenario.yaml`]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^PASS {2}planned-h100_sxm_80g-dp-ep2 /);
  const dense = planDeployments({ ...request, commonFile: CHAT, tpSizes: [2] });
  const refused = dense.candidates.filter((c) => c.kind === "infeasible");
  assert.deepEqual(refused.map((c) => c.parallel), ["tp-ep", "dp-ep"]);
  for (const c of refused) {
    assert.match(c.kind === "infeasible" ? c.reason : "", /expert parallelism needs a mixture-of-experts model/);
  }
});

Deno.test("a synthetic workload's rate is its arrival rate; disaggregated counts stay within max_devices; MoE experts split by TP", () => {
  const dir = Deno.makeTempDirSync({ prefix: "servingcast-plan-" });
  Deno.writeTextFileSync(
    `${dir}/syn.yaml`,
    `model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
load_gen:
  load_gen_type: synthetic
  num_requests: 200
  arrival: {process: poisson, request_rate: 1.0}
  input_tokens: {dist: uniform, min: 256, max: 1024}
  output_tokens: {dist: fixed, value: 64}
`,
  );
  const base = { slos: SLOS, devices: ["H100_SXM_80G"], tpSizes: [1] };
  const syn = planDeployments({ ...base, commonFile: `${dir}/syn.yaml`, targetRate: 30, maxDevices: 8 });
  assert.equal(syn.ranked.length, 1, JSON.stringify(syn.candidates));
  assert.match(planFiles(syn, dir)["scenario.yaml"], /^ {2}load_gen\.arrival\.request_rate: 30$/m);
  // Disaggregated within 2 devices: 1 prefill + 1 decode at most, so 45 req/s fails rather than planning 4 devices.
  const pd = planDeployments({ ...base, commonFile: CHAT, targetRate: 45, maxDevices: 2, topologies: ["disagg"] });
  assert.equal(pd.ranked.length, 0);
  assert.equal(pd.candidates[0].kind, "fails");
  const moeCommon = `${dir}/moe.yaml`;
  Deno.writeTextFileSync(
    moeCommon,
    Deno.readTextFileSync(CHAT).replace("meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-30B-A3B"),
  );
  const moe = planDeployments({ ...base, commonFile: moeCommon, targetRate: 10, tpSizes: [2], maxDevices: 8 });
  assert.equal(moe.ranked[0]?.moe, true);
  assert.match(planFiles(moe, dir)["deployment.yaml"], /tp_size: 2\n +moe_tp_size: 2\n/);
});
