/**
 * `deno task plan`: the cheapest deployment that meets the SLOs at a target
 * load (see core/planner). Prints a ranked table and the Pareto front, and
 * with `--out DIR` writes the plan as JSON, the winning deployment as an
 * instance file and a scenario that pins it with the SLOs.
 *
 * @module
 */
import { clip, describeValue, InputError } from "../core/config/errors.ts";
import { TASK_LIMITS } from "../core/config/limits.ts";
import { denoFileSystem, readYaml } from "../core/config/load.ts";
import type { YamlSource } from "../core/config/source.ts";
import { DEVICE_CATALOG } from "../core/hardware/devices.ts";
import { alignColumns } from "../core/text/columns.ts";
import { renderSvg } from "../core/report/svg.ts";
import { chart, escapeHtml, page, section, table, textCell } from "../core/report/html.ts";
import { scenarioSections } from "../core/report/scenario_report.ts";
import { CAPACITY_MAX_REQUESTS, CONFIRM_FACTOR, loadScenario, runScenario } from "../core/scenario/mod.ts";
import { progressBar } from "../cli_progress.ts";
import { planInWorkers } from "../core/planner/parallel.ts";
import { makeOutputDir, outputDirProblem, OutputError, outputFileProblem, reason, writeOutput } from "../cli_output.ts";
import { planChartSpec } from "../core/planner/chart.ts";
import {
  assemblePlan,
  candidateList,
  checkPlanRequest,
  deploymentYaml,
  planLaunchFiles,
  PlanRequestError,
  planShard,
  rateKey,
  settingLines,
  sloExpectLines,
  SPECULATION_PATTERN,
} from "../core/planner/planner.ts";
import { ATTENTION_QUANT, LINEAR_QUANT } from "../core/config/schema.ts";
import { ENGINES } from "../core/config/engine_profiles.ts";
import type {
  ParallelKind,
  PlannedCandidate,
  PlanRequest,
  PlanResult,
  PlanShard,
  PlanSlo,
  ShardOutcome,
  Topology,
} from "../core/planner/planner.ts";
import { jsonPath, parseSlo, readShard, requestProblem, requestShapeProblem } from "../core/planner/request.ts";
import type { PlanDataProblem } from "../core/planner/request.ts";
import { CONSOLE_OUTPUT, parseShard, readTaskArgs, usageLine } from "../scenarios/_args.ts";
import type { TaskOutput } from "../scenarios/_args.ts";
import { basename, dirname, join, relative, resolve } from "node:path";
import { taskMain } from "../scenarios/_args.ts";

const USAGE = `Usage: deno task plan --common_config_path C.yaml --target_rate R --slo 'ttft.p99<=2' [--slo …]
       [--devices H100_SXM_80G,H200_SXM_141G,MI300X_192G] [--tp 1,2,4,8] [--max_devices 64]
       [--topology agg] [--prices prices.yaml] [--seeds N] [--top 10] [--out DIR] [--shard I/N]
       deno task plan --merge DIR [--out DIR2] [--top 10]

Finds, for each device type and tensor-parallel size, the fewest instances that keep
up with R requests/s of the common file's workload and meet every SLO (judged from
arrival, on the worst seed), by full event simulation; ranks them by cost (with
--prices: a YAML map of device type to price per device-hour, per million output
tokens) or by device count,
and prints the Pareto front of tokens/s per device against tokens/s per user.

  --common_config_path C   model, workload and serving limits (its request_rate is replaced)
  --target_rate R          offered load, requests per second
  --slo 'KEY OP BOUND'     a scenario assertion, e.g. 'ttft.p99<=2', 'tpot.p99<=0.05' (repeatable)
  --devices A,B,…          device types (default H100_SXM_80G,H200_SXM_141G,MI300X_192G)
  --tp 1,2,…               tensor-parallel sizes, devices per instance (default 1,2,4,8)
  --max_devices N          the most devices a deployment may use (default 64)
  --topology agg,disagg    aggregated and/or prefill/decode disaggregated (default agg)
  --parallel tp,tp-ep,…    layouts of an instance's devices: tp; for MoE models also tp-ep (TP
                           attention, experts by EP) and dp-ep (DP attention, EP experts)
  --max_num_seqs A,B,…     batch-size limits to try (default: the common file's)
  --max_tokens_budget A,…  token budgets per step to try (default: the common file's)
  --quantization A,B,…     quantize_linear_action values to try (DISABLED, W8A8_DYNAMIC, …)
  --engines A,B,…          engine profiles to try (vllm, sglang, trtllm, mindie, lmdeploy)
  --kv_cache_dtype A,B,…   KV-cache dtypes to try (quantize_attention_action: DISABLED, INT8, FP8)
  --mtp_tokens 0,1,2       MTP speculation to try: draft tokens per step (num_mtp_tokens; models with MTP layers)
  --speculation none,eagle:3,ngram:4
                           EAGLE or n-gram speculation to try: method:draft tokens (1 to 5), at the method's
                           published per-position acceptance (serving_config.speculative_config)
  --prices FILE            price per device-hour by device type; ranks by $ per million output tokens
  --seeds N                seeds per simulated point (default 1)
  --workers N              plan candidates on N Web Workers (default: one per core; 1: in this process)
  --top N                  rows of the ranked table (default 10)
  --out DIR                write plan.json, deployment.yaml, scenario.yaml, pareto.svg, plan.html and
                           launch/ (each engine's launch scripts and Kubernetes manifests) there
  --report-dir DIR         write those files and plan.html there: the ranked table, the Pareto
                           front, and the winner's scenario run again with its charts
  --shard I/N              plan the I-th of N shares of the candidates (0 ≤ I < N) and write
                           DIR/plan.shard-I-of-N.json (needs --out DIR)
  --merge DIR              combine every shard in DIR into the plan (the same as unsharded)
  -h, --help               show this help and exit

Exit codes: 0 a deployment meets the SLOs; 1 none does; 2 bad input.`;

const OPTIONS = [
  "--common_config_path",
  "--target_rate",
  "--slo",
  "--devices",
  "--tp",
  "--max_devices",
  "--topology",
  "--prices",
  "--seeds",
  "--top",
  "--out",
  "--report-dir",
  "--shard",
  "--merge",
  "--max_num_seqs",
  "--max_tokens_budget",
  "--quantization",
  "--engines",
  "--kv_cache_dtype",
  "--mtp_tokens",
  "--speculation",
  "--parallel",
  "--workers",
];

export { parseSlo };

/**
 * Runs `deno task plan` with `argv`, its lines to `io`: the exit code (0 a
 * deployment meets the SLOs, 1 none does, 2 bad input).
 */
export async function runPlan(argv: readonly string[], io: TaskOutput = CONSOLE_OUTPUT): Promise<number> {
  const parsed = readTaskArgs({ task: "plan", usage: USAGE, options: OPTIONS }, argv, io);
  if (typeof parsed === "number") return parsed;
  const opt = (k: string) => parsed.options[k]?.at(-1);
  const bad = (message: string) => {
    io.err(usageLine("plan", message));
    return 2;
  };
  // Every count a user gives is checked against TASK_LIMITS before any work.
  const count = (k: string, fallback: number, limit?: { max: number; what: string }): number | string => {
    const v = opt(k);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (Number.isSafeInteger(n) && n >= 1 && n <= (limit?.max ?? Infinity)) return n;
    return limit
      ? `${k}: expected an integer from 1 to ${limit.max.toLocaleString("en-US")} (${limit.what}), got '${clip(v)}'`
      : `${k}: expected an integer ≥ 1, got '${clip(v)}'`;
  };
  const top = count("--top", 10, { max: TASK_LIMITS.top, what: "the most candidates of a search" });
  if (typeof top === "string") return bad(top);
  const reportDir = opt("--report-dir");
  const mergeDir = opt("--merge");
  if (mergeDir !== undefined) {
    try {
      const names = shardNames(mergeDir);
      const out = opt("--out") ?? mergeDir;
      const inputs = names.map((n) => join(mergeDir, n));
      // Without --out, the plan goes into the shard folder: a problem there is named as --merge's.
      const flag = opt("--out") === undefined ? "--merge" : "--out";
      const problem = outputsProblem(flag, out, REPORT_FILES, inputs) ??
        (reportDir === undefined ? undefined : outputsProblem("--report-dir", reportDir, REPORT_FILES, inputs));
      if (problem) return bad(problem);
      const result = mergeShards(mergeDir, names);
      return await finish(result, top, { flag, dir: out }, io, reportDir, [...inputs, result.request.commonFile]);
    } catch (e) {
      if (!(e instanceof InputError || e instanceof OutputError)) throw e;
      io.err(e.message);
      return 2;
    }
  }
  const shardText = opt("--shard");
  const shard: PlanShard | string = shardText === undefined ? { index: 0, count: 1 } : parseShard(shardText);
  if (typeof shard === "string") return bad(shard);
  if (shard.count > TASK_LIMITS.shards) {
    return bad(`--shard: expected at most ${TASK_LIMITS.shards.toLocaleString("en-US")} shards, got '${shardText}'`);
  }
  if (shard.count > 1 && reportDir !== undefined) {
    return bad("--report-dir needs the whole plan: pass it to the --merge run");
  }
  const out = opt("--out");
  if (shard.count > 1 && !out) {
    return bad("--shard needs --out DIR (where the shard's JSON goes, for --merge)");
  }
  const common = opt("--common_config_path");
  if (!common) return bad("--common_config_path is required");
  const rateText = opt("--target_rate") ?? "";
  const rate = Number(rateText);
  if (!(rate > 0 && Number.isFinite(rate))) {
    return bad(`--target_rate: expected a positive number, got '${clip(rateText)}'`);
  }
  const sloTexts = parsed.options["--slo"] ?? [];
  if (sloTexts.length === 0) return bad("at least one --slo is required, e.g. --slo 'ttft.p99<=2'");
  const slos: PlanSlo[] = [];
  for (const t of sloTexts) {
    const s = parseSlo(t);
    if (typeof s === "string") return bad(s);
    if (slos.some((x) => x.key === s.key)) return bad(`--slo: ${s.key} is given twice`);
    slos.push(s);
  }
  const devices = (opt("--devices") ?? "H100_SXM_80G,H200_SXM_141G,MI300X_192G").split(",").map((d) => d.trim());
  for (const d of devices) {
    if (!Object.hasOwn(DEVICE_CATALOG, d)) {
      return bad(`--devices: unknown device '${clip(d)}' (deno task sim --list-devices)`);
    }
  }
  const tpSizes = (opt("--tp") ?? "1,2,4,8").split(",").map((t) => Number(t.trim()));
  if (tpSizes.some((t) => !Number.isSafeInteger(t) || t < 1)) {
    return bad(`--tp: expected integers ≥ 1, got '${clip(opt("--tp") ?? "")}'`);
  }
  const topologies = (opt("--topology") ?? "agg").split(",").map((t) => t.trim());
  for (const t of topologies) {
    if (t !== "agg" && t !== "disagg") return bad(`--topology: expected agg, disagg or agg,disagg, got '${clip(t)}'`);
  }
  const settings: Record<string, (number | string)[]> = {};
  for (
    const [flag, key] of [
      ["--max_num_seqs", "serving_config.max_num_seqs"],
      ["--max_tokens_budget", "serving_config.max_tokens_budget"],
    ] as const
  ) {
    const v = opt(flag);
    if (v === undefined) continue;
    const list = v.split(",").map((x) => Number(x.trim()));
    if (list.some((n) => !Number.isSafeInteger(n) || n < 1)) {
      return bad(`${flag}: expected integers ≥ 1, got '${clip(v)}'`);
    }
    settings[key] = list;
  }
  const mtp = opt("--mtp_tokens");
  if (mtp !== undefined) {
    const list = mtp.split(",").map((x) => Number(x.trim()));
    if (list.some((n) => !Number.isSafeInteger(n) || n < 0 || n > 8)) {
      return bad(`--mtp_tokens: expected integers from 0 to 8, got '${clip(mtp)}'`);
    }
    settings["model_config.num_mtp_tokens"] = list;
  }
  const spec = opt("--speculation");
  if (spec !== undefined) {
    const list = spec.split(",").map((x) => x.trim());
    if (list.some((x) => !SPECULATION_PATTERN.test(x))) {
      return bad(`--speculation: expected none, eagle:K or ngram:K (K from 1 to 5), got '${clip(spec)}'`);
    }
    settings["serving_config.speculative_config"] = list;
  }
  // Named values a search tries: each flag's list, every value one the contract names.
  for (
    const [flag, key, names] of [
      ["--quantization", "model_config.quantize_linear_action", LINEAR_QUANT],
      ["--engines", "serving_config.engine", ENGINES],
      ["--kv_cache_dtype", "model_config.quantize_attention_action", ATTENTION_QUANT],
    ] as const
  ) {
    const v = opt(flag);
    if (v === undefined) continue;
    const list = v.split(",").map((q) => q.trim());
    const unknown = list.find((q) => !(names as readonly string[]).includes(q));
    if (unknown !== undefined) return bad(`${flag}: expected some of ${names.join(", ")}, got '${clip(unknown)}'`);
    settings[key] = list;
  }
  const kinds = (opt("--parallel") ?? "tp").split(",").map((k) => k.trim());
  for (const k of kinds) {
    if (k !== "tp" && k !== "tp-ep" && k !== "dp-ep") {
      return bad(`--parallel: expected tp, tp-ep or dp-ep, got '${clip(k)}'`);
    }
  }
  const workers = count(
    "--workers",
    Math.max(1, Math.min(TASK_LIMITS.workers, navigator.hardwareConcurrency || 1)),
    { max: TASK_LIMITS.workers, what: "threads beyond a few hundred only contend for the cores" },
  );
  if (typeof workers === "string") return bad(workers);
  const maxDevices = count("--max_devices", 64);
  const seeds = count("--seeds", 1, { max: TASK_LIMITS.seeds, what: "the most seeds of a run" });
  for (const v of [maxDevices, seeds]) if (typeof v === "string") return bad(v);
  const prices = opt("--prices");
  const inputs = [common, ...(prices ? [prices] : [])];
  // The output folders are checked before any simulation, and a write that still fails is one line, exit 2.
  const outProblem = out === undefined
    ? undefined
    : outputsProblem("--out", out, shard.count > 1 ? [shardFileName(shard)] : REPORT_FILES, inputs);
  if (outProblem) return bad(outProblem);
  const reportProblem = reportDir === undefined
    ? undefined
    : outputsProblem("--report-dir", reportDir, REPORT_FILES, inputs);
  if (reportProblem) return bad(reportProblem);
  try {
    readYaml(common, denoFileSystem); // a bad common file is reported as the user named it
    const request: PlanRequest = {
      commonFile: resolve(common),
      targetRate: rate,
      slos,
      devices,
      tpSizes,
      topologies: topologies as Topology[],
      ...(kinds.length !== 1 || kinds[0] !== "tp" ? { parallel: kinds as ParallelKind[] } : {}),
      ...(Object.keys(settings).length ? { settings } : {}),
      maxDevices: maxDevices as number,
      ...(prices ? { prices: readPrices(prices) } : {}),
      seeds: seeds as number,
    };
    // The rules a merge checks a shard's request by (so that every shard this writes merges).
    const problem = requestShapeProblem(request) ?? requestProblem(request);
    if (problem) return bad(flagProblem(problem));
    // A rate the common file cannot take is named as the flag (not as the planner's scenario).
    checkPlanRequest(request);
    const progress = await progressBar({
      terminal: Deno.stderr.isTerminal(),
      label: "planning",
      unit: "candidates",
      delayMs: 0,
    });
    let part: ShardOutcome;
    try {
      part = workers > 1
        ? await planInWorkers(request, shard, workers, progress.onProgress)
        : planShard(request, shard, denoFileSystem, progress.onProgress);
    } finally {
      progress.stop();
    }
    if (shard.count > 1 && out) {
      const file = `${out}/${shardFileName(shard)}`;
      makeOutputDir("--out", out);
      writeOutput("--out", file, JSON.stringify(part, finite) + "\n", inputs, true);
      io.out(
        `planned ${part.outcomes.length} of ${
          candidateList(request).length
        } candidates (shard ${shard.index}/${shard.count})`,
      );
      io.out(`wrote ${file}; when every shard is done: deno task plan --merge ${out}`);
      return 0;
    }
    const to = out === undefined ? undefined : { flag: "--out", dir: out };
    return await finish(assemblePlan(request, part.outcomes), top, to, io, reportDir, inputs);
  } catch (e) {
    if (e instanceof PlanRequestError) {
      const flag = FLAG_OF[e.field] ?? "--common_config_path";
      return bad(`${flag}: ${e.field === "targetRate" ? `${clip(rateText)} req/s: ` : ""}${e.detail}`);
    }
    if (!(e instanceof InputError || e instanceof OutputError)) throw e;
    io.err(e.message);
    return 2;
  }
}

/** The flag of each request field. */
const FLAG_OF: Partial<Record<keyof PlanRequest, string>> = {
  commonFile: "--common_config_path",
  targetRate: "--target_rate",
  slos: "--slo",
  devices: "--devices",
  tpSizes: "--tp",
  parallel: "--parallel",
  topologies: "--topology",
  maxDevices: "--max_devices",
  prices: "--prices",
  seeds: "--seeds",
};

/** The flag of each setting a search varies. */
const SETTING_FLAG: Record<string, string> = {
  "serving_config.max_num_seqs": "--max_num_seqs",
  "serving_config.max_tokens_budget": "--max_tokens_budget",
  "model_config.quantize_linear_action": "--quantization",
  "serving_config.engine": "--engines",
  "model_config.quantize_attention_action": "--kv_cache_dtype",
  "model_config.num_mtp_tokens": "--mtp_tokens",
  "serving_config.speculative_config": "--speculation",
};

/** A request problem of a fresh plan, as its flag: `--seeds: expected …`. */
function flagProblem(p: PlanDataProblem): string {
  const [field, key] = p.path;
  if (field === undefined) return p.detail;
  const flag = field === "settings" ? SETTING_FLAG[String(key)] : FLAG_OF[field as keyof PlanRequest];
  return `${flag ?? jsonPath(p.path)}: ${p.detail}`;
}

/** The files a plan writes into `--out`. */
const PLAN_FILES = ["plan.json", "deployment.yaml", "scenario.yaml", "pareto.svg"];
/** The files a plan writes into `--report-dir`. */
const REPORT_FILES = [...PLAN_FILES, "plan.html"];

/**
 * Why the folder `dir` cannot take the files `names` for `flag`, or
 * undefined: the folder must be one (or not exist yet), and no file may be
 * a symbolic link, a FIFO or an input of the run.
 */
function outputsProblem(flag: string, dir: string, names: readonly string[], inputs: readonly string[]) {
  const problem = outputDirProblem(flag, dir);
  if (problem) return problem;
  let folder: boolean;
  try {
    folder = Deno.statSync(dir).isDirectory;
  } catch {
    folder = false; // created at the end of the run
  }
  if (!folder) return undefined;
  for (const name of names) {
    const p = outputFileProblem(flag, `${dir}/${name}`, inputs, true);
    if (p) return p;
  }
  return undefined;
}

/** JSON without NaN or Infinity (written as null). */
const finite = (_: string, v: unknown) => (typeof v === "number" && !Number.isFinite(v) ? null : v);

/** The file a shard writes: plan.shard-I-of-N.json. */
function shardFileName(s: PlanShard): string {
  return `plan.shard-${s.index}-of-${s.count}.json`;
}

/**
 * Prints the plan and writes its files into `to.dir` (when given and something
 * was planned), and with `reportDir` the files and plan.html there: exit 0,
 * or 1 when nothing meets the SLOs. Every file is written by writeOutput:
 * never through a symbolic link, never over one of `inputs`.
 */
async function finish(
  result: PlanResult,
  top: number,
  to: { readonly flag: string; readonly dir: string } | undefined,
  io: TaskOutput,
  reportDir: string | undefined,
  inputs: readonly string[],
): Promise<number> {
  const lines = formatPlan(result, top);
  for (const line of lines) io.out(line);
  const write = async (flag: string, dir: string) => {
    const files = { ...planFiles(result, dir), "pareto.svg": await renderSvg(planChartSpec(result)) };
    makeOutputDir(flag, dir);
    for (const [name, text] of Object.entries(files)) {
      writeOutput(flag, `${dir}/${name}`, text, inputs, true);
      io.out(`wrote ${dir}/${name}`);
    }
    // The launch configurations of the winner and the Pareto front: a folder each, listed in launch/README.md.
    const launch = planLaunchFiles(result);
    for (const [name, text] of Object.entries(launch)) {
      makeOutputDir(flag, dirname(`${dir}/${name}`));
      writeOutput(flag, `${dir}/${name}`, text, inputs, true);
    }
    const folders = new Set(Object.keys(launch).map((n) => n.split("/")[1]).filter((n) => n !== "README.md"));
    io.out(
      `wrote ${dir}/launch/: vLLM, SGLang and TensorRT-LLM launch scripts and Kubernetes manifests of ${folders.size} deployment${
        folders.size === 1 ? "" : "s"
      } (${Object.keys(launch).length} files; ${dir}/launch/README.md lists them)`,
    );
  };
  if (to && result.ranked.length) await write(to.flag, to.dir);
  // The page goes to --report-dir, or beside --out's files.
  const pageAt = reportDir !== undefined
    ? { flag: "--report-dir", dir: reportDir }
    : to && result.ranked.length
    ? to
    : undefined;
  if (pageAt) {
    if (result.ranked.length && pageAt.dir !== to?.dir) await write(pageAt.flag, pageAt.dir);
    const html = await planReportHtml(result, lines, pageAt.dir);
    makeOutputDir(pageAt.flag, pageAt.dir);
    writeOutput(pageAt.flag, `${pageAt.dir}/plan.html`, html, inputs, true);
    io.out(`wrote ${pageAt.dir}/plan.html`);
  }
  return result.ranked.length ? 0 : 1;
}

/**
 * The plan's HTML page: the ranked table and the Pareto front, then the
 * winner's scenario (written beside it) run again with its time series:
 * its assertions and its run's tables and charts.
 */
async function planReportHtml(result: PlanResult, lines: readonly string[], dir: string): Promise<string> {
  // Tables as tables: the ranked deployments (numbers right-aligned), then what could not be planned and why.
  const t = planTable(result, Number.MAX_SAFE_INTEGER);
  const numeric = (h: string) => !["device", "layout", "topology", "settings", "pareto"].includes(h);
  const cells = (row: readonly string[]) =>
    row.map((v, i) => (numeric(t.head[i]) ? `<td class="num">${escapeHtml(v)}</td>` : textCell(v)));
  const others = notPlannedRows(result);
  const sections = [
    section(
      "Ranked deployments",
      table(`Deployments that meet the SLOs, cheapest first (rank 1 is the winner)`, t.head, t.rows.map(cells)) +
        (others.length
          ? table("Not planned", ["candidate", "why"], others.map(([c, why]) => [textCell(c), textCell(why)]))
          : "") +
        `<p class="note">${escapeHtml(lines[lines.length - 1])}</p>`,
    ),
  ];
  if (result.ranked.length) {
    sections.push(
      section("Pareto front", await chart("pareto", "Candidates that meet the SLOs", planChartSpec(result))),
    );
    const winner = runScenario(loadScenario(`${dir}/scenario.yaml`), undefined, { timeseries: true });
    sections.push(section(`The winner: ${winner.scenario.name}`, ""), ...await scenarioSections(winner));
  }
  const q = result.request;
  return page(
    "ServingCast plan",
    `${q.targetRate} req/s; SLOs ${q.slos.map((s) => `${s.key} ${s.bound}`).join(", ")}`,
    sections,
  );
}

/** A shard file's name, as --shard writes it. */
const SHARD_NAME = /^plan\.shard-\d+-of-\d+\.json$/;

/**
 * The shard files in `dir` (plan.shard-I-of-N.json), sorted: every entry
 * by such a name (a symbolic link is followed when read), at most
 * {@link TASK_LIMITS.shards} of them.
 *
 * @throws {InputError} when the folder cannot be read or holds too many
 */
export function shardNames(dir: string): string[] {
  const names: string[] = [];
  try {
    for (const e of Deno.readDirSync(dir)) {
      // Any kind of entry: a link is followed when read, and a folder or a FIFO by that name is named as unreadable.
      if (!SHARD_NAME.test(e.name)) continue;
      names.push(e.name);
      if (names.length > TASK_LIMITS.shards) {
        throw new InputError(
          { file: dir },
          `more than ${TASK_LIMITS.shards.toLocaleString("en-US")} plan.shard-I-of-N.json files (a search has at most ${
            TASK_LIMITS.shards.toLocaleString("en-US")
          } shards)`,
        );
      }
    }
  } catch (e) {
    if (e instanceof InputError) throw e;
    throw new InputError({ file: dir }, `cannot read the shard folder: ${reason(e)}`);
  }
  if (names.length === 0) throw new InputError({ file: dir }, "no plan.shard-I-of-N.json file to merge");
  return names.sort();
}

/** The numbers `xs` as a message lists them: at most ten, then how many in all. */
function listed(xs: readonly number[]): string {
  const shown = 10;
  return xs.length <= shown
    ? xs.join(", ")
    : `${xs.slice(0, shown).join(", ")} … (${xs.length.toLocaleString("en-US")} in all)`;
}

/**
 * The plan from the shard files in `dir` (plan.shard-I-of-N.json): every
 * shard of one search, each once, all with the same request. Each file is
 * read through the one input reader (no FIFO, no device, no huge file) and
 * checked against the one shard schema ({@link readShard}: its request as
 * a fresh plan's flags are, its outcomes the request's candidates); the
 * request's common file must read, and take its target rate.
 *
 * @param dir the shard folder
 * @param names its shard files ({@link shardNames})
 * @throws {InputError} naming the file (and the JSON path) of the first problem
 */
export function mergeShards(dir: string, names: readonly string[] = shardNames(dir)): PlanResult {
  const shards: ShardOutcome[] = [];
  const byIndex = new Map<number, string>();
  for (const name of names) {
    const file = `${dir}/${name}`;
    const fail = (detail: string, path: readonly (string | number)[] = []): never => {
      throw new InputError({ file }, `not a plan shard: ${detail}${path.length ? ` at ${jsonPath(path)}` : ""}`);
    };
    let text: string;
    try {
      text = denoFileSystem.readText(file);
    } catch (e) {
      throw new InputError({ file }, `cannot read: ${reason(e)}`);
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (e) {
      fail(`not JSON (${clip(e instanceof Error ? e.message : String(e), 200)})`);
    }
    const s = readShard(data);
    if ("detail" in s) return fail(s.detail, s.path);
    const written = shardFileName(s.shard);
    if (name !== written) fail(`it holds shard ${s.shard.index}/${s.shard.count}, which --shard writes to ${written}`);
    const first = shards[0];
    if (first && JSON.stringify(s.request) !== JSON.stringify(first.request)) {
      fail(`a shard of another search than ${names[0]}`, ["request"]);
    }
    if (first && s.shard.count !== first.shard.count) {
      fail(`one of ${s.shard.count} shards, ${names[0]} one of ${first.shard.count}`, ["shard", "count"]);
    }
    const twin = byIndex.get(s.shard.index);
    if (twin !== undefined) fail(`shard ${s.shard.index} is also ${twin}`, ["shard", "index"]);
    byIndex.set(s.shard.index, name);
    shards.push(s);
  }
  const first = shards[0];
  const n = first.shard.count; // at most TASK_LIMITS.shards (readShard)
  const missing: number[] = [];
  for (let i = 0; i < n; i++) if (!byIndex.has(i)) missing.push(i);
  if (missing.length) {
    throw new InputError({ file: dir }, `shard${missing.length > 1 ? "s" : ""} ${listed(missing)} of ${n} missing`);
  }
  try {
    checkPlanRequest(first.request);
  } catch (e) {
    if (!(e instanceof PlanRequestError)) throw e;
    throw new InputError(
      { file: `${dir}/${names[0]}` },
      `not a plan shard: ${e.field === "targetRate" ? `${first.request.targetRate} req/s: ` : ""}${e.detail} at ${
        jsonPath(["request", e.field])
      }`,
    );
  }
  return assemblePlan(first.request, shards.flatMap((s) => s.outcomes));
}

/** `--prices FILE`: device type → price per device-hour. */
function readPrices(file: string): Record<string, number> {
  const src: YamlSource = readYaml(file, denoFileSystem); // typed: its fail() then narrows
  const data = src.data;
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    src.fail([], "expected a map of device type to price per device-hour");
  }
  const prices: [string, number][] = [];
  for (const [k, v] of Object.entries(data as Record<string, unknown>)) {
    if (typeof v !== "number" || !(v >= 0) || !Number.isFinite(v)) {
      return src.fail([k], `expected a price ≥ 0 per device-hour, got ${describeValue(v)}`);
    }
    prices.push([k, v]);
  }
  // Own properties, whatever the key (a key '__proto__' is then refused by the request's checks, not a prototype).
  return Object.fromEntries(prices);
}

/** Text as printed: control characters escaped (a path or a reason never breaks a line or makes a workflow command). */
const shown = (s: string) => clip(s, Number.MAX_SAFE_INTEGER);

const num = (x: number, digits = 3) => (Number.isFinite(x) ? Number(x.toPrecision(digits)).toString() : "-");

/** Margin of a value to its SLO bound, as a percentage of the bound ("+40%" = 40% of headroom). */
function margin(value: number, bound: string): string {
  // The number before any confidence ("<= 2 @ 90%": the value is then the interval's end, as judged).
  const m = /^(<=|<|>=|>|==)\s*([^@\s]+)/.exec(bound);
  const b = m ? Number(m[2]) : NaN;
  if (!Number.isFinite(b) || b === 0 || !Number.isFinite(value)) return "-";
  const headroom = m![1].startsWith("<") ? (b - value) / b : m![1].startsWith(">") ? (value - b) / b : 0;
  return `${headroom >= 0 ? "+" : ""}${(headroom * 100).toFixed(0)}%`;
}

/** Settings as printed: `seqs=128 budget=4096 quant=W8A8_DYNAMIC`. */
function settingsCell(settings: Readonly<Record<string, number | string>>): string {
  const short: Record<string, string> = {
    "serving_config.max_num_seqs": "seqs",
    "serving_config.max_tokens_budget": "budget",
    "model_config.quantize_linear_action": "quant",
    "serving_config.engine": "engine",
    "model_config.quantize_attention_action": "kv",
    "model_config.num_mtp_tokens": "mtp",
    "serving_config.speculative_config": "spec",
  };
  return Object.entries(settings).map(([k, v]) => `${short[k] ?? k}=${v}`).join(" ") || "-";
}

/** Instances as printed: the count, or prefill + decode when disaggregated. */
function instancesCell(c: PlannedCandidate): string {
  return c.topology === "disagg" ? `${c.prefill}P+${c.decode}D` : String(c.instances);
}

/** The ranked table's cells: header, rows (the first `top`), and the identity columns. */
export function planTable(r: PlanResult, top = 10): PlanTable {
  const q = r.request;
  const priced = r.ranked.some((c) => c.costPerHour !== undefined);
  const varied = r.candidates.some((c) => Object.keys(c.settings).length > 0);
  const layouts = r.candidates.some((c) => c.parallel !== "tp");
  // What tells candidates apart: the layout and settings columns only when the search varied them.
  const idHead = [
    "device",
    "tp",
    ...(layouts ? ["layout"] : []),
    "topology",
    ...(varied ? ["settings"] : []),
    "instances",
  ];
  const idCells = (c: PlannedCandidate) => [
    c.device,
    String(c.tp),
    ...(layouts ? [c.parallel] : []),
    c.topology,
    ...(varied ? [settingsCell(c.settings)] : []),
    instancesCell(c),
  ];
  const head = [
    "rank",
    ...idHead,
    "devices",
    ...(priced ? ["$/hour", "$/Mtok"] : []),
    "tok/s/device",
    "tok/s/user",
    ...q.slos.flatMap((s) => [s.key, "margin"]),
    "pareto",
  ];
  const rows = r.ranked.slice(0, top).map((c, i) => [
    String(i + 1),
    ...idCells(c),
    String(c.devices),
    ...(priced
      ? [
        c.costPerHour !== undefined ? c.costPerHour.toFixed(2) : "-",
        c.costPerMillionTokens !== undefined ? c.costPerMillionTokens.toFixed(2) : "-",
      ]
      : []),
    c.tokensPerDevice.toFixed(0),
    c.tokensPerUser.toFixed(1),
    ...q.slos.flatMap((s) => [num(c.values[s.key]), margin(c.values[s.key], s.bound)]),
    c.pareto ? "*" : "",
  ]);
  return { head, rows, idHead, idCells };
}

/** The plan's ranked table (its header and rows as printed), and how a candidate's identity is shown. */
export interface PlanTable {
  readonly head: readonly string[];
  readonly rows: readonly (readonly string[])[];
  /** The columns that tell candidates apart (device, tp, layout, topology, settings, instances). */
  readonly idHead: readonly string[];
  readonly idCells: (c: PlannedCandidate) => string[];
}

/** What could not be planned: each candidate as printed, and why. */
export function notPlannedRows(r: PlanResult): [string, string][] {
  const out: [string, string][] = [];
  for (const c of r.candidates) {
    if (c.kind === "planned") continue;
    const what = `${c.device} ${c.parallel === "tp" ? "tp" : `${c.parallel} ×`} ${c.tp} ${c.topology}${
      Object.keys(c.settings).length ? ` ${settingsCell(c.settings)}` : ""
    }`;
    out.push([what, `${c.kind === "fails" ? `fails with ${c.instances} instances: ` : ""}${shown(c.reason)}`]);
  }
  return out;
}

/** The plan as text: the ranked table, the Pareto front, and what could not be planned. */
export function formatPlan(r: PlanResult, top = 10): string[] {
  const q = r.request;
  const { head, rows, idHead, idCells } = planTable(r, top);
  const lines = [
    `Plan: ${q.targetRate} req/s of ${shown(relative(Deno.cwd(), q.commonFile) || q.commonFile)}; SLOs ${
      q.slos.map((s) => `${s.key} ${s.bound}`).join(", ")
    }`,
    "",
    ...alignColumns([head, ...rows], { align: (i) => (i === 1 ? "left" : "right") }),
  ];
  const front = r.ranked.filter((c) => c.pareto).sort((a, b) => b.tokensPerDevice - a.tokensPerDevice);
  if (front.length) {
    lines.push("", "Pareto front (tokens/s per device against tokens/s per user):");
    lines.push(
      ...alignColumns(
        [
          [...idHead, "tok/s/device", "tok/s/user"],
          ...front.map((c) => [
            ...idCells(c),
            c.tokensPerDevice.toFixed(0),
            c.tokensPerUser.toFixed(1),
          ]),
        ],
        { start: "  ", align: (i) => (i === 0 ? "left" : "right") },
      ),
    );
  }
  const others = notPlannedRows(r);
  if (others.length) {
    lines.push("", "Not planned:");
    for (const [c, why] of others) lines.push(`  ${c}: ${why}`);
  }
  if (r.ranked.length === 0) lines.push("", "No candidate meets the SLOs at this rate.");
  else {
    // What the decisions rest on: the requests (and seeds) of each planned count's runs.
    const used = [...new Set(r.ranked.map((c) => c.requests))].sort((a, b) => a - b);
    const seeds = q.seeds ?? 1;
    lines.push(
      "",
      `Judged on ${used.map((n) => n.toLocaleString("en-US")).join(", ")} requests a run${
        seeds > 1 ? ` × ${seeds} seeds` : ", 1 seed"
      }: each answer ran again with ${CONFIRM_FACTOR}× the file's requests (up to ${
        CAPACITY_MAX_REQUESTS.toLocaleString("en-US")
      }) to confirm it, and a count its runs did not decide (too short to tell whether it keeps up, or a percentile's 95% interval across its bound) ran again with 4× as many.`,
    );
  }
  return lines;
}

/** The files `--out` writes: plan.json, deployment.yaml (the winner) and scenario.yaml (pinning it). */
export function planFiles(r: PlanResult, outDir: string): Record<string, string> {
  const best: PlannedCandidate = r.ranked[0];
  const q = r.request;
  const commonRel = relative(resolve(outDir), q.commonFile) || q.commonFile;
  const common = readYaml(q.commonFile, denoFileSystem);
  // The winner's runs used more requests than the file asks for (its confirmation, or runs that did not decide it):
  // so does its check.
  const lg = (common.data as { load_gen?: { load_gen_type?: unknown; num_requests?: unknown } } | null)?.load_gen;
  const more = lg?.load_gen_type !== "trace" && lg?.num_requests !== best.requests
    ? [`  load_gen.num_requests: ${best.requests}`]
    : [];
  const scenario = [
    `name: planned-${best.device.toLowerCase()}-${best.parallel}${best.tp}${
      best.topology === "disagg" ? "-disagg" : ""
    }`,
    "description: >",
    `  Written by deno task plan: ${
      best.topology === "disagg" ? `${best.prefill} prefill + ${best.decode} decode` : best.instances
    } × ${best.device} (tp ${best.tp}) serve ${q.targetRate} req/s`,
    `  of ${shown(basename(q.commonFile))} within the SLOs, keeping up with the load.`,
    "tags: [planned]",
    "instance_config: deployment.yaml",
    `common_config: ${JSON.stringify(commonRel)}`,
    "overrides:",
    `  ${rateKey(common)}: ${q.targetRate}`,
    ...more,
    ...(best.topology === "disagg" ? ["  model_config.enable_kv_transfer_modeling: true"] : []),
    ...settingLines(best.settings),
    ...((q.seeds ?? 1) > 1 ? [`seeds: ${q.seeds}`] : []),
    ...sloExpectLines(q.slos),
    "",
  ].join("\n");
  return {
    "plan.json": JSON.stringify(r, finite, 2) + "\n",
    "deployment.yaml": `# Planned by deno task plan (see scenario.yaml).\n${deploymentYaml(best)}`,
    "scenario.yaml": scenario,
  };
}

if (import.meta.main) Deno.exitCode = await taskMain("plan", () => runPlan(Deno.args));
