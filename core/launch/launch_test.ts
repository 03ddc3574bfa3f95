/**
 * Launch configurations against the engines' documented arguments
 * (data/<engine>.json, read from each engine's source at a release) and the
 * Kubernetes API's schema (kubernetes-models): over a grid of deployments,
 * every flag a script or manifest passes is one the engine defines, every
 * choice value one it accepts, every TensorRT-LLM YAML key one its LLM
 * arguments declare, and every object validates.
 */
import assert from "node:assert/strict";
import { parse, parseAllDocuments } from "yaml";
import { StatefulSet } from "kubernetes-models/apps/v1/StatefulSet";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { Service } from "kubernetes-models/v1/Service";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { ENGINE_ARGS, LAUNCH_ENGINES, launchFiles } from "./mod.ts";
import type { LaunchEngine, LaunchSettings, LaunchTarget } from "./mod.ts";

const BASE: LaunchSettings = {
  model: "meta-llama/Llama-3.1-70B-Instruct",
  tp: 2,
  dp: 1,
  ep: 1,
  maxNumSeqs: 256,
  maxTokensBudget: 8192,
  blockSize: 16,
  memoryFraction: 0.9,
  prefixCaching: true,
  chunkedPrefill: true,
  maxModelLen: 2304,
  kvDtype: "DISABLED",
  linearQuant: "DISABLED",
  mtpTokens: 0,
};

/** Deployments over what changes the flags: topology, layout, KV dtype, quantization, MTP, caching, block size. */
function targets(): LaunchTarget[] {
  const out: LaunchTarget[] = [];
  for (const topology of ["agg", "disagg"] as const) {
    for (
      const s of [
        BASE,
        { ...BASE, kvDtype: "FP8", linearQuant: "W8A8_DYNAMIC", prefixCaching: false, chunkedPrefill: false },
        { ...BASE, kvDtype: "INT8", linearQuant: "W4A8_STATIC", blockSize: 128 },
        { ...BASE, model: "deepseek-ai/DeepSeek-V3", tp: 1, dp: 8, ep: 8, mtpTokens: 2, engine: "sglang" },
      ]
    ) {
      for (const device of ["H100_SXM_80G", "MI300X_192G"]) {
        out.push({
          name: `t${out.length}`,
          description: `${topology} on ${device}`,
          device,
          topology,
          instances: topology === "agg" ? 3 : 0,
          prefill: topology === "agg" ? 0 : 2,
          decode: topology === "agg" ? 0 : 1,
          devicesPerInstance: s.tp * s.dp,
          settings: s,
        });
      }
    }
  }
  return out;
}

/** The long options of a script's args array: the first word of each `args=(…)` line. */
function scriptFlags(script: string): string[] {
  const body = script.slice(script.indexOf("args=(\n") + 7, script.indexOf("\n)\n"));
  return body.split("\n").map((l) => l.trim().split(/\s+/)[0]);
}

/**
 * The option names among a container's args (a word that starts with - and is not a negative number), but Python's
 * own `-m` of `python3 -m sglang.launch_server`.
 */
const argFlags = (args: readonly string[]) => args.filter((a) => /^-[-a-z]/.test(a) && a !== "-m");

/** Where a command's flags are checked: the engine's main command, or its router or disaggregated server. */
function allowed(engine: LaunchEngine, router: boolean): ReadonlySet<string> {
  const a = ENGINE_ARGS[engine];
  return router ? (a.extra.router ?? a.extra.disaggregated)!.flags : a.flags;
}

Deno.test("every flag a launch script passes is one its engine defines, at the version the file names", () => {
  let checked = 0;
  for (const t of targets()) {
    const files = launchFiles(t);
    for (const [path, text] of Object.entries(files)) {
      if (!path.endsWith(".sh")) continue;
      const engine = path.split("/")[0] as LaunchEngine;
      const flags = allowed(engine, path.endsWith("router.sh"));
      for (const f of scriptFlags(text)) {
        assert.ok(
          flags.has(f),
          `${t.description}: ${path} passes ${f}, which ${engine} ${ENGINE_ARGS[engine].version} lacks`,
        );
        checked++;
      }
      assert.match(
        text,
        new RegExp(`^# Flag names follow \\S+ ${ENGINE_ARGS[engine].version.replaceAll(".", "\\.")} \\(`, "m"),
      );
      // Each flag line says where its value and its name come from.
      for (const line of text.split("\n").filter((l) => /^ {2}-/.test(l))) assert.match(line, / {2}# \S/, line);
    }
  }
  assert.ok(checked > 500, `${checked}`);
});

Deno.test("choice values are ones the engines accept: KV dtypes, block sizes, quantization, disaggregation modes", () => {
  const value = (text: string, flag: string) =>
    [...text.matchAll(new RegExp(`^ {2}${flag} (\\S+)`, "gm"))].map((m) => m[1].replace(/^'|'$/g, ""));
  for (const t of targets()) {
    const f = launchFiles(t);
    if (f["vllm/both.sh"] ?? f["vllm/prefill.sh"]) {
      const v = f["vllm/both.sh"] ?? f["vllm/prefill.sh"];
      // vllm/config/cache.py: CacheDType and BlockSize (on CUDA at most 32).
      for (const x of value(v, "--kv-cache-dtype")) {
        assert.ok(["auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2"].includes(x), x);
      }
      for (const x of value(v, "--block-size")) assert.ok(["1", "8", "16", "32"].includes(x), x);
      for (const x of value(v, "--quantization")) assert.equal(x, "fp8");
    }
    const s = f["sglang/both.sh"] ?? f["sglang/prefill.sh"];
    if (s) {
      // python/sglang/srt/server_args.py: --kv-cache-dtype choices, --speculative-algorithm choices.
      for (const x of value(s, "--kv-cache-dtype")) {
        assert.ok(["auto", "fp8_e5m2", "fp8_e4m3", "bf16", "bfloat16"].includes(x), x);
      }
      for (const x of value(s, "--speculative-algorithm")) {
        assert.ok(["EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM"].includes(x));
      }
    }
    if (t.topology === "disagg" && f["sglang/prefill.sh"]) {
      assert.deepEqual(value(f["sglang/prefill.sh"], "--disaggregation-mode"), ["prefill"]);
      assert.deepEqual(value(f["sglang/decode.sh"], "--disaggregation-mode"), ["decode"]);
      // The router lists each server: 2 prefill, 1 decode.
      assert.equal(value(f["sglang/router.sh"], "--prefill").length, 2);
      assert.equal(value(f["sglang/router.sh"], "--decode").length, 1);
    }
  }
  // What an engine cannot take as simulated is said, not invented: vLLM and SGLang have no INT8 KV cache.
  const int8 = launchFiles(targets().find((t) => t.settings.kvDtype === "INT8")!);
  assert.match(int8["vllm/both.sh"], /^# Note: KV cache simulated as INT8: vLLM has no such --kv-cache-dtype\.$/m);
  assert.doesNotMatch(int8["vllm/both.sh"], /^ {2}--kv-cache-dtype/m);
  assert.match(int8["vllm/both.sh"], /^# Note: block_size 128 was simulated; vLLM on CUDA takes at most 32/m);
  assert.match(int8["README.md"], /Not as simulated: .*INT8/);
});

Deno.test("TensorRT-LLM's extra options and disaggregated configuration use only keys v1.0.0 declares", () => {
  const keys = ENGINE_ARGS.trtllm.keys;
  let checked = 0;
  for (const t of targets().filter((x) => x.device === "H100_SXM_80G")) {
    const files = launchFiles(t);
    for (const [path, text] of Object.entries(files)) {
      if (!/extra-\w+\.yaml$/.test(path)) continue;
      const doc = parse(text) as Record<string, unknown>;
      for (const [k, v] of Object.entries(doc)) {
        assert.ok(keys[""].has(k), `${path}: top-level ${k}`);
        if (v !== null && typeof v === "object") {
          for (const sub of Object.keys(v)) {
            assert.ok(keys[k]?.has(sub), `${path}: ${k}.${sub}`);
            checked++;
          }
        }
      }
      // kv_cache_config replaces the CLI's memory fraction: the YAML repeats it.
      assert.equal((doc.kv_cache_config as Record<string, unknown>).free_gpu_memory_fraction, 0.9);
      if (t.topology === "disagg") {
        assert.ok(doc.cache_transceiver_config, `${path}: every disaggregated server needs it`);
      }
    }
    if (t.topology === "disagg") {
      const d = parse(files["trtllm/disagg.yaml"]) as Record<string, { num_instances: number; urls: string[] }>;
      assert.deepEqual(Object.keys(d).sort(), ["backend", "context_servers", "generation_servers", "hostname", "port"]);
      assert.deepEqual([d.context_servers.num_instances, d.context_servers.urls.length], [2, 2]);
      assert.deepEqual([d.generation_servers.num_instances, d.generation_servers.urls.length], [1, 1]);
    }
  }
  assert.ok(checked > 20, `${checked}`);
  // No TensorRT-LLM off CUDA: the README says so.
  const rocm = launchFiles(targets().find((t) => t.device === "MI300X_192G")!);
  assert.equal(Object.keys(rocm).some((p) => p.startsWith("trtllm/")), false);
  assert.match(rocm["README.md"], /^- TensorRT-LLM: none; it has no published image for MI300X_192G \(rocm\)\.$/m);
});

Deno.test("every Kubernetes manifest validates against the Kubernetes API schema, and runs each server the plan counts", () => {
  const KINDS: Record<string, new (o: never) => { validate(): void }> = {
    StatefulSet: StatefulSet as never,
    Deployment: Deployment as never,
    Service: Service as never,
    ConfigMap: ConfigMap as never,
  };
  let objects = 0;
  for (const t of targets()) {
    for (const engine of LAUNCH_ENGINES) {
      const text = launchFiles(t)[`${engine}/kubernetes.yaml`];
      if (!text) continue;
      const docs = parseAllDocuments(text).map((d) =>
        d.toJS() as { kind: string; metadata: { name: string }; spec?: Record<string, unknown> }
      );
      for (const o of docs) {
        assert.ok(KINDS[o.kind], `${engine}: ${o.kind}`);
        new KINDS[o.kind](o as never).validate();
        assert.ok(o.metadata.name.length <= 63, o.metadata.name);
        objects++;
      }
      // Replicas: each role's instance count (the router one), each pod holding an instance's devices.
      const sets = docs.filter((o) => o.kind === "StatefulSet") as unknown as {
        metadata: { name: string };
        spec: {
          replicas: number;
          template: { spec: { containers: { args: string[]; resources: { limits: Record<string, number> } }[] } };
        };
      }[];
      const count = (role: string) => sets.find((s) => s.metadata.name.endsWith(`-${role}`))?.spec.replicas;
      if (t.topology === "agg") assert.equal(count("both"), 3);
      else assert.deepEqual([count("prefill"), count("decode")], [2, 1]);
      for (const s of sets) {
        const c = s.spec.template.spec.containers[0];
        assert.deepEqual(Object.values(c.resources.limits), [t.devicesPerInstance]);
        for (const f of argFlags(c.args)) assert.ok(ENGINE_ARGS[engine].flags.has(f), `${engine} manifest: ${f}`);
      }
    }
  }
  assert.ok(objects > 100, `${objects}`);
});
