/**
 * Fuzz target `calibrate`: a small calibration that fits in tens of
 * milliseconds (two short runs, one constant, two iterations), as a
 * manifest of measured runs (vLLM JSON, SGLang JSONL, CSV, a GenAI-Perf
 * export) or as `--scenarios` on a one-case validation scenario, then
 * mutated: hostile values at random keys of the manifest or a results
 * file, dropped keys, a `fit:` list of duplicates, iterations far past the
 * limit (which must be refused, not run), and outputs that point at an
 * input, at a folder or into a missing one, or whose file (the manifest's
 * default output, a device file in the `--output` folder: names the task
 * chose) is a symbolic link out of the case folder (`outside/precious.txt`).
 * A file or folder the user names may itself be a link: that is where they
 * asked the output to go (cli_output.ts). `runCalibrate` runs in-process;
 * the judge wants exit 0 (or 1: the fit made its points worse, not
 * written) or one located exit-2 line, and nothing outside the case
 * folder, nor any input, may change.
 *
 * @module
 */
import { stringify } from "yaml";
import { runCalibrate } from "../../tools/calibrate.ts";
import { HOSTILE, judge, pick, runTask, treeOf } from "./_common.ts";
import type { CaseResult, FuzzTarget } from "./_common.ts";

const INSTANCE =
  "instance_groups:\n  - {num_instances: 1, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: both}\n";
const COMMON = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
  "serving_config: {block_size: 16, max_tokens_budget: 8192}\n";

/** A vLLM `--save-result` object of a short run. */
const vllmRun = (ttft: number, concurrency: number | null) => ({
  completed: 4,
  total_input_tokens: 512,
  total_output_tokens: 32,
  request_rate: "inf",
  max_concurrency: concurrency,
  median_ttft_ms: ttft,
  median_tpot_ms: 8,
  output_throughput: 300,
});

/** A GenAI-Perf summary of a short run. */
const GENAI = {
  time_to_first_token: { unit: "ms", avg: 21, p50: 20 },
  inter_token_latency: { unit: "ms", avg: 8, p50: 8 },
  output_token_throughput: { unit: "tokens/sec", avg: 300 },
  input_sequence_length: { unit: "tokens", avg: 128 },
  output_sequence_length: { unit: "tokens", avg: 8 },
  request_count: { unit: "count", avg: 4 },
  input_config: { concurrency: 2 },
};

const CSV_HEAD = "num_prompts,input_len,output_len,request_rate,max_concurrency,median_ttft_ms,median_tpot_ms," +
  "output_throughput";
const CSV_ROWS = ["4,128,8,inf,1,20,8,", "4,256,8,inf,2,30,9,"];

/** A validation scenario of one request and one measured figure. */
export const SCENARIO = `name: ttft
instances: {instance_groups: [{num_instances: 1, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: both}]}
common:
  model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
  load_gen: {load_gen_type: fixed_length, num_requests: 1, num_input_tokens: 128, num_output_tokens: 2}
measured:
  - {metric: ttft_from_send.median, value: 0.02, max_error: 0.2, source: a made-up figure}
`;

/** Iteration counts far past TASK_LIMITS.calibrateIterations: a case that ran them would take hours. */
const HUGE_ITERATIONS = [100_000_000, 10_001, 4294967297, 1e20];

type Json = Record<string, unknown> | unknown[];

/** A random path to a value inside `data` (at least one step). */
function randomPath(r: () => number, data: unknown): (string | number)[] {
  const path: (string | number)[] = [];
  let v = data;
  while (v !== null && typeof v === "object") {
    const keys: (string | number)[] = Array.isArray(v) ? v.map((_, i) => i) : Object.keys(v);
    if (keys.length === 0 || (path.length > 0 && r() < 0.4)) break;
    const k = pick(r, keys);
    path.push(k);
    v = (v as Record<string | number, unknown>)[k];
  }
  return path;
}

/** `data` with the value at a random path replaced by a hostile one, or its key dropped. */
function mutateJson(r: () => number, data: Json, hostile: unknown[]): void {
  const path = randomPath(r, data);
  if (path.length === 0) return;
  let parent = data as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  if (r() < 0.25 && !Array.isArray(parent)) {
    delete parent[last];
    return;
  }
  const v = pick(r, HOSTILE);
  hostile.push(v);
  // An own key even for '__proto__' (a plain assignment would set the prototype).
  Object.defineProperty(parent, last, { value: v, enumerable: true, writable: true, configurable: true });
}

/** One case: see the module doc. */
async function calibrateCase(r: () => number, root: string): Promise<CaseResult> {
  // The manifest sits two folders down, so that a hostile '../../x' stays inside the case folder.
  const dir = `${root}/a/b`;
  Deno.mkdirSync(dir, { recursive: true });
  Deno.mkdirSync(`${root}/outside`);
  Deno.writeTextFileSync(`${root}/outside/precious.txt`, "precious\n");
  Deno.symlinkSync(`${root}/outside`, `${dir}/linkdir`);
  Deno.mkdirSync(`${dir}/sub`);
  Deno.writeTextFileSync(`${dir}/afile`, "not a folder\n");
  const hostile: unknown[] = [];
  const files: Record<string, string> = { "i.yaml": INSTANCE, "c.yaml": COMMON };
  let argv: string[];
  const scenarios = r() < 0.3;
  if (scenarios && r() < 0.5) {
    // A manifest of scenarios: its keys mutated, the device files going to `output:` (a folder).
    files["s.yaml"] = SCENARIO;
    const manifest: Record<string, unknown> = {
      scenarios: ["s.y*ml"],
      fit: ["step_overhead"],
      folds: 0,
      iterations: 2,
      max_requests: 10,
      output: pick(r, ["out", "out/", "afile", "afile/x", "sub", "new/deeper", "s.yaml"]),
    };
    for (let m = Math.floor(r() * 3); m > 0; m--) mutateJson(r, manifest, hostile);
    files["cal.yaml"] = stringify(manifest);
    argv = [`${dir}/cal.yaml`];
    if (r() < 0.3) {
      // A symbolic link where the device file would go.
      Deno.mkdirSync(`${dir}/out`, { recursive: true });
      Deno.symlinkSync(`${root}/outside/precious.txt`, `${dir}/out/H100_SXM_80G.calibrated.yaml`);
    }
  } else if (scenarios) {
    files["s.yaml"] = SCENARIO;
    argv = ["--scenarios", `${dir}/s.yaml`, "--fit", "step_overhead", "--iterations", "2", "--folds", "0"];
    const flag = r();
    const value = (v: unknown) => (hostile.push(String(v)), String(v));
    if (flag < 0.15) argv.push("--fit", value(pick(r, ["", ",", "matmul,matmul", "bogus", " , step_overhead"])));
    else if (flag < 0.3) argv.push("--iterations", value(pick(r, HUGE_ITERATIONS)));
    else if (flag < 0.45) argv.push("--folds", value(pick(r, HOSTILE)));
    else if (flag < 0.6) argv.push("--max-requests", value(pick(r, HOSTILE)));
    if (r() < 0.6) {
      // (A folder the user names may be a link to one elsewhere: that is where they asked for the files.)
      argv.push("--output", pick(r, [`${dir}/afile`, `${dir}/sub`, `${dir}/new/deeper`, `${dir}/afile/x`, "", dir]));
    } else argv.push("--output", `${dir}/out`);
    if (r() < 0.2) {
      // A symbolic link where the device file would go.
      Deno.mkdirSync(`${dir}/out`, { recursive: true });
      Deno.symlinkSync(`${root}/outside/precious.txt`, `${dir}/out/H100_SXM_80G.calibrated.yaml`);
    }
  } else {
    const kinds = ["vllm", "sglang", "csv", "genai_perf", "file"] as const;
    const measurements: Record<string, string>[] = [];
    const data: Record<string, Json> = {};
    for (let n = 1 + Math.floor(r() * 2); n > 0; n--) {
      const kind = pick(r, kinds);
      const name = `r${n}.${kind === "csv" ? "csv" : kind === "sglang" ? "jsonl" : "json"}`;
      measurements.push({ [kind]: name });
      if (kind === "vllm" || kind === "file") data[name] = vllmRun(20 + 10 * n, pick(r, [1, 2, null]));
      else if (kind === "sglang") data[name] = [vllmRun(20, 1), vllmRun(30, 2)];
      else if (kind === "genai_perf") data[name] = structuredClone(GENAI);
      else files[name] = [CSV_HEAD, ...CSV_ROWS].join("\n") + "\n";
    }
    const manifest: Record<string, unknown> = {
      instance_config: "i.yaml",
      common_config: "c.yaml",
      measurements,
      fit: ["step_overhead"],
      folds: pick(r, [0, 2]),
      iterations: 2,
      output: "out.yaml",
    };
    const mutations = Math.floor(r() * 3);
    for (let m = 0; m < mutations; m++) {
      const what = r();
      const names = Object.keys(data);
      if (what < 0.3) mutateJson(r, manifest, hostile);
      else if (what < 0.55 && names.length) mutateJson(r, data[pick(r, names)], hostile);
      else if (what < 0.65) manifest.fit = Array(pick(r, [2, 7, 4000])).fill(pick(r, ["matmul", "step_overhead"]));
      else if (what < 0.75) manifest.iterations = pick(r, HUGE_ITERATIONS);
      else if (what < 0.9) {
        manifest.output = pick(r, [
          "cal.yaml",
          "i.yaml",
          "linkdir",
          ".",
          "sub",
          "sub/",
          "nodir/x.yaml",
          "afile/x.yaml",
          ...Object.keys(data),
        ]);
      } else if (what < 0.95) {
        // The default output (beside the manifest, a name the task chose) is a link out of the folder: refused.
        delete manifest.output;
        if (!treeOf(dir)["cal.device.yaml"]) Deno.symlinkSync(`${root}/outside/precious.txt`, `${dir}/cal.device.yaml`);
      } else if (files["r1.csv"] ?? files["r2.csv"]) {
        // A hostile cell in a CSV.
        const csv = files["r1.csv"] !== undefined ? "r1.csv" : "r2.csv";
        const lines = files[csv].split("\n");
        const row = 1 + Math.floor(r() * CSV_ROWS.length);
        const cells = lines[row].split(",");
        const v = pick(r, HOSTILE);
        hostile.push(v);
        cells[Math.floor(r() * cells.length)] = String(v).replaceAll("\n", " ").replaceAll(",", ";");
        lines[row] = cells.join(",");
        files[csv] = lines.join("\n");
      }
    }
    for (const [name, d] of Object.entries(data)) {
      files[name] = Array.isArray(d) && name.endsWith(".jsonl")
        ? d.map((o) => JSON.stringify(o)).join("\n") + "\n"
        : JSON.stringify(d, null, 1);
    }
    files["cal.yaml"] = stringify(manifest);
    argv = [`${dir}/cal.yaml`];
  }
  for (const [name, text] of Object.entries(files)) Deno.writeTextFileSync(`${dir}/${name}`, text);
  const outside = treeOf(`${root}/outside`);
  const inputs = Object.fromEntries(Object.keys(files).map((n) => [n, Deno.readTextFileSync(`${dir}/${n}`)]));
  const hugeAsked = argv.some((a, i) => argv[i - 1] === "--iterations" && Number(a) > 10_000) ||
    /^iterations: (1e\+?20|\d{5,})$/m.test(files["cal.yaml"] ?? "");
  const run = await runTask(runCalibrate, argv);
  const verdict = judge(run, {
    alsoOk: [1],
    echoed: hostile.filter((v): v is string => typeof v === "string"),
    located: [...Object.keys(files), "--output", "--fit", "--iterations", "--folds", "--max-requests", "--scenarios"],
    files,
  });
  if (verdict.outcome === "finding") return verdict;
  const finding = (detail: string): CaseResult => ({ outcome: "finding", detail, files });
  if (hugeAsked && verdict.outcome !== "located") return finding(`iterations past the limit were run: ${argv}`);
  if (JSON.stringify(treeOf(`${root}/outside`)) !== JSON.stringify(outside)) {
    return finding("a file outside the case folder changed");
  }
  for (const [name, text] of Object.entries(inputs)) {
    if (Deno.readTextFileSync(`${dir}/${name}`) !== text) return finding(`the input ${name} was written over`);
  }
  return verdict;
}

/** The `calibrate` fuzz target (see the module doc). */
export const CALIBRATE_TARGET: FuzzTarget = { name: "calibrate", weight: 1, run: calibrateCase };
