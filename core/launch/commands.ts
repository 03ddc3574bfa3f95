/**
 * The command that starts one server of a planned deployment on an engine:
 * `vllm serve`, SGLang's `launch_server` or `trtllm-serve`, with each flag
 * set from the settings the plan simulated, and each flag's definition in
 * the engine's source (core/launch/data/<engine>.json names the version
 * and commit those lists were read from).
 *
 * Where an engine has no flag for a simulated setting (vLLM has no INT8 KV
 * cache) or a setting it cannot take (CUDA's vLLM has no 128-token KV
 * block), the command says so in a note instead of inventing one.
 *
 * @module
 */
import type { LaunchSettings } from "./settings.ts";
import { ENGINE_ARGS } from "./engine_args.ts";
import type { LaunchEngine } from "./engine_args.ts";

/** One flag of a command: its name, its value (none for a switch) and where both come from. */
export interface Flag {
  /** `--max-num-seqs`, as the engine spells it. */
  readonly name: string;
  /** Its value; none for a switch. */
  readonly value?: string;
  /** The plan setting the value comes from ("" for a fixed choice, said in `why`). */
  readonly from: string;
  /** Why this value, when the setting alone does not say (a mapping, a default). */
  readonly why?: string;
}

/** A server's command: the program and its arguments before the flags, the flags, and notes on what it cannot set. */
export interface Command {
  /** The engine it runs. */
  readonly engine: LaunchEngine;
  /** `prefill`, `decode`, or `both` (aggregated); `router` for the process that pairs disaggregated servers. */
  readonly role: "prefill" | "decode" | "both" | "router";
  /** The program and its leading arguments (`["vllm", "serve", "<model>"]`). */
  readonly program: readonly string[];
  /** Its flags, in order. */
  readonly flags: readonly Flag[];
  /** The port it serves on. */
  readonly port: number;
  /** The path its readiness is checked on. */
  readonly health: string;
  /** Settings the engine cannot take as simulated, and other caveats. */
  readonly notes: readonly string[];
  /** Files the command reads (TensorRT-LLM's extra options), by name: their YAML text. */
  readonly files?: Readonly<Record<string, string>>;
}

/** Where a flag of `engine` is defined, as the engine's argument list gives it. */
export function flagSource(engine: LaunchEngine, name: string): string {
  return ENGINE_ARGS[engine].locations[name] ?? ENGINE_ARGS[engine].source;
}

const on = (b: boolean, yes: string, no: string) => (b ? yes : no);

/** vLLM's `--kv-cache-dtype` for a simulated KV dtype (vllm/config/cache.py CacheDType), or undefined where it has none. */
const VLLM_KV: Readonly<Record<string, string | undefined>> = { DISABLED: "auto", FP8: "fp8", INT8: undefined };
/** SGLang's `--kv-cache-dtype` (server_args.py: auto, fp8_e5m2, fp8_e4m3, bf16, bfloat16; no plain fp8, no int8). */
const SGLANG_KV: Readonly<Record<string, string | undefined>> = { DISABLED: "auto", FP8: "fp8_e4m3", INT8: undefined };

/** Where an EAGLE draft model goes when the config names none. */
const DRAFT_PLACEHOLDER = "<EAGLE draft model>";
/** What the launch notes say then. */
const EAGLE_MODEL_NOTE = "EAGLE speculation was simulated: name its draft model (serving_config.speculative_config." +
  "draft_model) or replace <EAGLE draft model>";

/**
 * The online quantization an engine applies to a 16-bit checkpoint for a
 * simulated weight format: 8-bit weights and activations are FP8 on the
 * GPUs these engines serve (`--quantization fp8`); other formats need a
 * checkpoint quantized offline, whose name the user gives.
 */
function quantFlag(linear: string): { value?: string; note?: string } {
  if (linear === "DISABLED") return {};
  if (linear === "FP8" || linear.startsWith("W8A8")) return { value: "fp8" };
  return {
    note:
      `weights simulated as ${linear}: serve a checkpoint quantized that way (no online quantization flag gives it)`,
  };
}

/** The commands of vLLM v0.11.0: one `vllm serve` per role (disaggregated: both with the NIXL connector). */
export function vllmCommands(s: LaunchSettings, roles: readonly ("prefill" | "decode" | "both")[]): Command[] {
  return roles.map((role) => {
    const notes: string[] = [];
    const flags: Flag[] = [
      { name: "--tensor-parallel-size", value: String(s.tp), from: "parallel_config.tp_size" },
    ];
    if (s.dp > 1) flags.push({ name: "--data-parallel-size", value: String(s.dp), from: "parallel_config.dp_size" });
    if (s.ep > 1) {
      flags.push({
        name: "--enable-expert-parallel",
        from: "parallel_config.ep_size",
        why: `experts over TP × DP = ${s.tp * s.dp} devices (vLLM derives the EP size)`,
      });
    }
    flags.push(
      { name: "--max-num-seqs", value: String(s.maxNumSeqs), from: "serving_config.max_num_seqs" },
      { name: "--max-num-batched-tokens", value: String(s.maxTokensBudget), from: "serving_config.max_tokens_budget" },
      {
        name: "--gpu-memory-utilization",
        value: String(s.memoryFraction),
        from: "serving_config.kv_cache_memory_fraction",
      },
      { name: "--max-model-len", value: String(s.maxModelLen), from: "the workload's longest prompt + answer" },
    );
    // vllm/config/cache.py BlockSize: 1, 8, 16, 32, 64, 128, and on CUDA no more than 32.
    if ([1, 8, 16, 32].includes(s.blockSize)) {
      flags.push({ name: "--block-size", value: String(s.blockSize), from: "serving_config.block_size" });
    } else notes.push(`block_size ${s.blockSize} was simulated; vLLM on CUDA takes at most 32 (its default is 16)`);
    const kv = VLLM_KV[s.kvDtype];
    if (kv) flags.push({ name: "--kv-cache-dtype", value: kv, from: "model_config.quantize_attention_action" });
    else notes.push(`KV cache simulated as ${s.kvDtype}: vLLM has no such --kv-cache-dtype`);
    flags.push({
      name: on(s.prefixCaching, "--enable-prefix-caching", "--no-enable-prefix-caching"),
      from: "serving_config.enable_prefix_caching",
    });
    flags.push({
      name: on(s.chunkedPrefill, "--enable-chunked-prefill", "--no-enable-chunked-prefill"),
      from: "serving_config.enable_chunked_prefill",
      ...(s.chunkedPrefill ? {} : { why: "v0.11.0 turns chunked prefill on for generative models whatever this says" }),
    });
    const q = quantFlag(s.linearQuant);
    if (q.value) flags.push({ name: "--quantization", value: q.value, from: "model_config.quantize_linear_action" });
    if (q.note) notes.push(q.note);
    if (s.mtpTokens > 0) {
      flags.push({
        name: "--speculative-config",
        value: JSON.stringify({ method: "mtp", num_speculative_tokens: s.mtpTokens }),
        from: "model_config.num_mtp_tokens",
        why: "the model's own MTP layers draft the tokens",
      });
    }
    const sp = s.speculative;
    if (sp) {
      const from = "serving_config.speculative_config";
      if (sp.method === "ngram") {
        flags.push({
          name: "--speculative-config",
          value: JSON.stringify({
            method: "ngram",
            num_speculative_tokens: sp.tokens,
            prompt_lookup_min: 2,
            prompt_lookup_max: 5,
          }),
          from,
          why: "drafts looked up in the prompt and output; n-gram sizes 2 to 5, as vLLM's benchmarks ran",
        });
      } else {
        flags.push({
          name: "--speculative-config",
          value: JSON.stringify({
            method: "eagle",
            model: sp.draftModel ?? DRAFT_PLACEHOLDER,
            num_speculative_tokens: sp.tokens,
          }),
          from,
          why: "an EAGLE draft head trained for this model",
        });
        if (!sp.draftModel) notes.push(EAGLE_MODEL_NOTE);
      }
    }
    if (role !== "both") {
      flags.push({
        name: "--kv-transfer-config",
        value: JSON.stringify({ kv_connector: "NixlConnector", kv_role: "kv_both" }),
        from: "pd_role",
        why: "both roles take kv_both; a proxy sends each request to a prefill server, then a decode server",
      });
    }
    flags.push(
      { name: "--host", value: "0.0.0.0", from: "", why: "reachable at the pod's address" },
      { name: "--port", value: "8000", from: "", why: "vLLM's default" },
    );
    return { engine: "vllm", role, program: ["vllm", "serve", s.model], flags, port: 8000, health: "/health", notes };
  });
}

/** The commands of SGLang v0.5.4: one `launch_server` per role, and for a disaggregated deployment its router. */
export function sglangCommands(
  s: LaunchSettings,
  roles: readonly ("prefill" | "decode" | "both")[],
  servers: (role: "prefill" | "decode", port: number) => { readonly count: number; readonly urls: readonly string[] },
): Command[] {
  const launched = roles.map((role): Command => {
    const notes: string[] = [];
    const flags: Flag[] = [{ name: "--tp-size", value: String(s.tp), from: "parallel_config.tp_size" }];
    if (s.dp > 1) {
      flags.push(
        { name: "--dp-size", value: String(s.dp), from: "parallel_config.dp_size" },
        { name: "--enable-dp-attention", from: "parallel_config.dp_size", why: "data-parallel attention ranks" },
      );
    }
    if (s.ep > 1) flags.push({ name: "--ep-size", value: String(s.ep), from: "parallel_config.ep_size" });
    flags.push(
      { name: "--max-running-requests", value: String(s.maxNumSeqs), from: "serving_config.max_num_seqs" },
      {
        name: "--chunked-prefill-size",
        value: s.chunkedPrefill ? String(s.maxTokensBudget) : "-1",
        from: "serving_config.max_tokens_budget",
        ...(s.chunkedPrefill ? {} : { why: "-1: chunked prefill off (serving_config.enable_chunked_prefill false)" }),
      },
      { name: "--max-prefill-tokens", value: String(s.maxTokensBudget), from: "serving_config.max_tokens_budget" },
      {
        name: "--mem-fraction-static",
        value: String(s.memoryFraction),
        from: "serving_config.kv_cache_memory_fraction",
        why: "SGLang's share for weights and the KV pool",
      },
      { name: "--page-size", value: String(s.blockSize), from: "serving_config.block_size" },
      { name: "--context-length", value: String(s.maxModelLen), from: "the workload's longest prompt + answer" },
    );
    const kv = SGLANG_KV[s.kvDtype];
    if (kv) flags.push({ name: "--kv-cache-dtype", value: kv, from: "model_config.quantize_attention_action" });
    else notes.push(`KV cache simulated as ${s.kvDtype}: SGLang has no such --kv-cache-dtype`);
    if (!s.prefixCaching) {
      flags.push({
        name: "--disable-radix-cache",
        from: "serving_config.enable_prefix_caching",
        why: "prefix caching off",
      });
    }
    const q = quantFlag(s.linearQuant);
    if (q.value) flags.push({ name: "--quantization", value: q.value, from: "model_config.quantize_linear_action" });
    if (q.note) notes.push(q.note);
    const sp = s.speculative;
    if (sp?.method === "eagle") {
      const from = "serving_config.speculative_config";
      flags.push(
        { name: "--speculative-algorithm", value: "EAGLE", from, why: "an EAGLE draft head trained for this model" },
        { name: "--speculative-draft-model-path", value: sp.draftModel ?? DRAFT_PLACEHOLDER, from },
        { name: "--speculative-num-steps", value: String(sp.tokens), from },
        { name: "--speculative-eagle-topk", value: "1", from: "", why: "one draft chain, as simulated" },
        { name: "--speculative-num-draft-tokens", value: String(sp.tokens + 1), from },
      );
      if (!sp.draftModel) notes.push(EAGLE_MODEL_NOTE);
    } else if (sp) notes.push(`n-gram speculation was simulated: these SGLang flags do not set it up`);
    if (s.mtpTokens > 0) {
      flags.push(
        { name: "--speculative-algorithm", value: "NEXTN", from: "model_config.num_mtp_tokens", why: "the MTP layers" },
        { name: "--speculative-num-steps", value: String(s.mtpTokens), from: "model_config.num_mtp_tokens" },
        { name: "--speculative-eagle-topk", value: "1", from: "", why: "one draft chain, as simulated" },
        { name: "--speculative-num-draft-tokens", value: String(s.mtpTokens + 1), from: "model_config.num_mtp_tokens" },
      );
    }
    if (role !== "both") {
      flags.push(
        { name: "--disaggregation-mode", value: role, from: "pd_role" },
        { name: "--disaggregation-transfer-backend", value: "mooncake", from: "", why: "SGLang's default KV transfer" },
      );
    }
    flags.push(
      { name: "--host", value: "0.0.0.0", from: "", why: "SGLang binds 127.0.0.1 unless told" },
      { name: "--port", value: "30000", from: "", why: "SGLang's default" },
    );
    return {
      engine: "sglang",
      role,
      program: ["python3", "-m", "sglang.launch_server", "--model-path", s.model],
      flags,
      port: 30000,
      health: "/health",
      notes,
    };
  });
  if (!roles.includes("prefill")) return launched;
  const router: Command = {
    engine: "sglang",
    role: "router",
    program: ["python3", "-m", "sglang_router.launch_router"],
    flags: [
      { name: "--pd-disaggregation", from: "pd_role", why: "pairs each request's prefill and decode servers" },
      // One --prefill and one --decode per server: the router picks the pair, and a prefill server's own address is
      // where the decode server fetches its KV cache from.
      ...servers("prefill", 30000).urls.map((u, i) => ({
        name: "--prefill",
        value: `http://${u}`,
        from: "pd_role",
        why: `prefill server ${i + 1}`,
      })),
      ...servers("decode", 30000).urls.map((u, i) => ({
        name: "--decode",
        value: `http://${u}`,
        from: "pd_role",
        why: `decode server ${i + 1}`,
      })),
      { name: "--host", value: "0.0.0.0", from: "" },
      { name: "--port", value: "8000", from: "" },
    ],
    port: 8000,
    health: "/health",
    notes: [],
  };
  return [...launched, router];
}

/** TensorRT-LLM's `kv_cache_config.dtype` (llm_args.py: "auto", or "fp8"). */
const TRTLLM_KV: Readonly<Record<string, string | undefined>> = { DISABLED: "auto", FP8: "fp8", INT8: undefined };

/** One key of TensorRT-LLM's extra options YAML: its path (section, key), value and why. */
export interface OptionKey {
  /** The section ("" for the top level), as data/trtllm.json's extra_options names it. */
  readonly section: string;
  /** The key within it. */
  readonly key: string;
  /** Its value. */
  readonly value: string | number | boolean;
  /** The plan setting it comes from ("" for a fixed choice). */
  readonly from: string;
  /** Why this value, when the setting alone does not say. */
  readonly why?: string;
}

/**
 * The commands of TensorRT-LLM v1.0.0 (PyTorch backend): one `trtllm-serve`
 * per role, each with its extra LLM API options YAML, and for a
 * disaggregated deployment the `trtllm-serve disaggregated` server that
 * pairs them, with its configuration.
 */
export function trtllmCommands(
  s: LaunchSettings,
  roles: readonly ("prefill" | "decode" | "both")[],
  servers: (role: "prefill" | "decode", port: number) => { readonly count: number; readonly urls: readonly string[] },
): Command[] {
  const out = roles.map((role): Command => {
    const notes: string[] = [];
    const world = s.tp * s.dp;
    const flags: Flag[] = [
      { name: "--backend", value: "pytorch", from: "", why: "the PyTorch backend (no engine build)" },
      {
        name: "--tp_size",
        value: String(world),
        from: "parallel_config.tp_size × dp_size",
        ...(s.dp > 1
          ? { why: "the instance's ranks; attention runs data-parallel over them (enable_attention_dp)" }
          : {}),
      },
    ];
    if (s.ep > 1) flags.push({ name: "--ep_size", value: String(s.ep), from: "parallel_config.ep_size" });
    flags.push(
      { name: "--max_batch_size", value: String(s.maxNumSeqs), from: "serving_config.max_num_seqs" },
      { name: "--max_num_tokens", value: String(s.maxTokensBudget), from: "serving_config.max_tokens_budget" },
      { name: "--max_seq_len", value: String(s.maxModelLen), from: "the workload's longest prompt + answer" },
      {
        name: "--kv_cache_free_gpu_memory_fraction",
        value: String(s.memoryFraction),
        from: "serving_config.kv_cache_memory_fraction",
        why: "repeated in the YAML's kv_cache_config, which replaces this",
      },
      {
        name: "--extra_llm_api_options",
        value: `/config/extra-${role}.yaml`,
        from: "",
        why: "its keys, each from a plan setting",
      },
      { name: "--host", value: "0.0.0.0", from: "", why: "reachable at the pod's address" },
      { name: "--port", value: "8000", from: "", why: "trtllm-serve's default" },
    );
    const keys: OptionKey[] = [
      {
        section: "kv_cache_config",
        key: "free_gpu_memory_fraction",
        value: s.memoryFraction,
        from: "serving_config.kv_cache_memory_fraction",
      },
      {
        section: "kv_cache_config",
        key: "enable_block_reuse",
        value: s.prefixCaching,
        from: "serving_config.enable_prefix_caching",
      },
    ];
    const kv = TRTLLM_KV[s.kvDtype];
    if (kv) {
      keys.push({
        section: "kv_cache_config",
        key: "dtype",
        value: kv,
        from: "model_config.quantize_attention_action",
      });
    } else notes.push(`KV cache simulated as ${s.kvDtype}: TensorRT-LLM's kv_cache_config.dtype takes auto or fp8`);
    keys.push({
      section: "",
      key: "enable_chunked_prefill",
      value: s.chunkedPrefill,
      from: "serving_config.enable_chunked_prefill",
    });
    if (s.dp > 1) keys.push({ section: "", key: "enable_attention_dp", value: true, from: "parallel_config.dp_size" });
    if (role === "prefill") {
      keys.push({
        section: "",
        key: "disable_overlap_scheduler",
        value: true,
        from: "pd_role",
        why: "not supported on context servers (docs/source/features/disagg-serving.md:118)",
      });
    }
    if (role !== "both") {
      keys.push(
        {
          section: "cache_transceiver_config",
          key: "backend",
          value: "DEFAULT",
          from: "pd_role",
          why: "KV transfer between roles",
        },
        {
          section: "cache_transceiver_config",
          key: "max_tokens_in_buffer",
          value: s.maxModelLen,
          from: "the workload's longest prompt + answer",
          why: "at least the longest prompt (docs/source/features/disagg-serving.md:111)",
        },
      );
    }
    if (s.speculative) {
      notes.push(
        `${s.speculative.method} speculation was simulated: this options file does not set it up (TensorRT-LLM's ` +
          `speculative_config takes decoding_type Eagle or NGram)`,
      );
    }
    if (s.mtpTokens > 0) {
      keys.push(
        { section: "speculative_config", key: "decoding_type", value: "MTP", from: "model_config.num_mtp_tokens" },
        {
          section: "speculative_config",
          key: "num_nextn_predict_layers",
          value: s.mtpTokens,
          from: "model_config.num_mtp_tokens",
        },
      );
    }
    const q = quantFlag(s.linearQuant);
    if (q.value || q.note) {
      notes.push(
        `weights simulated as ${s.linearQuant}: TensorRT-LLM quantizes no checkpoint online; serve one quantized to it (ModelOpt)`,
      );
    }
    return {
      engine: "trtllm",
      role,
      program: ["trtllm-serve", s.model],
      flags,
      port: 8000,
      health: "/health",
      notes,
      files: { [`extra-${role}.yaml`]: optionsYaml(keys) },
    };
  });
  if (!roles.includes("prefill")) return out;
  const p = servers("prefill", 8000), d = servers("decode", 8000);
  const config = [
    "# trtllm-serve disaggregated's configuration (keys: docs/source/features/disagg-serving.md:140-153, v1.0.0).",
    "hostname: 0.0.0.0",
    "port: 8000",
    "backend: pytorch",
    "context_servers:",
    `  num_instances: ${p.count}`,
    "  urls:",
    ...p.urls.map((u) => `    - "${u}"`),
    "generation_servers:",
    `  num_instances: ${d.count}`,
    "  urls:",
    ...d.urls.map((u) => `    - "${u}"`),
    "",
  ].join("\n");
  out.push({
    engine: "trtllm",
    role: "router",
    program: ["trtllm-serve", "disaggregated"],
    flags: [{ name: "-c", value: "/config/disagg.yaml", from: "", why: "the servers it pairs" }],
    port: 8000,
    health: "/health",
    notes: [],
    files: { "disagg.yaml": config },
  });
  return out;
}

/** Extra options as YAML, each key with a comment naming the plan setting it comes from. */
function optionsYaml(keys: readonly OptionKey[]): string {
  const lines = ["# TensorRT-LLM v1.0.0 extra LLM API options (keys: tensorrt_llm/llmapi/llm_args.py)."];
  const sections = [...new Set(keys.map((k) => k.section))].sort((a, b) => (a === "" ? -1 : b === "" ? 1 : 0));
  for (const section of sections) {
    if (section) lines.push(`${section}:`);
    for (const k of keys.filter((x) => x.section === section)) {
      const why = [k.from, k.why].filter(Boolean).join("; ");
      lines.push(`${section ? "  " : ""}${k.key}: ${JSON.stringify(k.value)}${why ? `  # ${why}` : ""}`);
    }
  }
  return lines.join("\n") + "\n";
}
