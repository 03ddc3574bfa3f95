/**
 * Launch configurations of a planned deployment: for each engine (vLLM,
 * SGLang, TensorRT-LLM), a script per server and a Kubernetes manifest
 * that runs them all, with flags set from the settings the plan simulated.
 * Flag names follow each engine's documented arguments at a released
 * version (data/), and a test checks every generated name against them.
 *
 * @module
 */
import { Document } from "yaml";
import type { YAMLSeq } from "yaml";
import { platformOf } from "../hardware/devices.ts";
import { sglangCommands, trtllmCommands, vllmCommands } from "./commands.ts";
import type { Command } from "./commands.ts";
import { ENGINE_ARGS, LAUNCH_ENGINES } from "./engine_args.ts";
import type { LaunchEngine } from "./engine_args.ts";
import { ENGINE_TITLE, flagComment, imageOf, kubernetesObjects, scriptOf, versionLines } from "./render.ts";
import type { ManifestServer } from "./render.ts";
import type { LaunchSettings } from "./settings.ts";

export { ENGINE_ARGS, LAUNCH_ENGINES } from "./engine_args.ts";
export type { EngineArgs, LaunchEngine } from "./engine_args.ts";
export { launchSettings } from "./settings.ts";
export type { LaunchSettings } from "./settings.ts";
export type { Command, Flag, OptionKey } from "./commands.ts";

/** A deployment to write launch configurations for. */
export interface LaunchTarget {
  /** A name for its Kubernetes objects (lower case, digits and dashes). */
  readonly name: string;
  /** What it is, for the files' first line: "5 prefill + 2 decode × H200_SXM_141G (tp 2)". */
  readonly description: string;
  /** Its device type (catalog name). */
  readonly device: string;
  /** Aggregated, or prefill/decode disaggregated. */
  readonly topology: "agg" | "disagg";
  /** Aggregated instances (0 when disaggregated). */
  readonly instances: number;
  /** Prefill instances (0 when aggregated). */
  readonly prefill: number;
  /** Decode instances (0 when aggregated). */
  readonly decode: number;
  /** Devices each instance holds. */
  readonly devicesPerInstance: number;
  /** The settings it was simulated with. */
  readonly settings: LaunchSettings;
}

/** The servers of `t` on `engine`, by role, with the names their objects get. */
function commandsOf(t: LaunchTarget, engine: LaunchEngine): Command[] {
  const roles = t.topology === "disagg" ? (["prefill", "decode"] as const) : (["both"] as const);
  // Each server's address: its StatefulSet pod's name under the role's headless Service.
  const service = (role: "prefill" | "decode") => `${t.name}-${engine}-${role}`;
  const servers = (role: "prefill" | "decode", port: number) => {
    const n = role === "prefill" ? t.prefill : t.decode;
    return { count: n, urls: Array.from({ length: n }, (_, i) => `${service(role)}-${i}.${service(role)}:${port}`) };
  };
  if (engine === "vllm") return vllmCommands(t.settings, roles);
  if (engine === "sglang") return sglangCommands(t.settings, roles, servers);
  return trtllmCommands(t.settings, roles, servers);
}

/** How many of a role's servers run, and the devices each holds. */
function sized(t: LaunchTarget, c: Command): { replicas: number; devices: number } {
  if (c.role === "router") return { replicas: 1, devices: 0 };
  const replicas = c.role === "prefill" ? t.prefill : c.role === "decode" ? t.decode : t.instances;
  return { replicas, devices: t.devicesPerInstance };
}

/**
 * The launch files of a deployment, by path under its folder:
 * `<engine>/<role>.sh` for each server (with the YAML files it reads
 * beside it), `<engine>/kubernetes.yaml`, and `README.md` saying what
 * each engine cannot take as simulated. An engine with no image for the
 * device's platform (TensorRT-LLM off CUDA) gets none, and the README says
 * so.
 *
 * @example The vLLM script of one H100 instance of Llama-3.1-8B
 * ```ts
 * import { launchFiles } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const files = launchFiles({
 *   name: "h100-tp1", description: "1 × H100_SXM_80G (tp 1)", device: "H100_SXM_80G", topology: "agg",
 *   instances: 1, prefill: 0, decode: 0, devicesPerInstance: 1,
 *   settings: {
 *     model: "meta-llama/Llama-3.1-8B-Instruct", tp: 1, dp: 1, ep: 1, maxNumSeqs: 256, maxTokensBudget: 8192,
 *     blockSize: 16, memoryFraction: 0.9, prefixCaching: true, chunkedPrefill: true, maxModelLen: 2048,
 *     kvDtype: "FP8", linearQuant: "DISABLED", mtpTokens: 0,
 *   },
 * });
 * assert.match(files["vllm/both.sh"], /^ {2}--kv-cache-dtype fp8 {2}# model_config\.quantize_attention_action; /m);
 * assert.match(files["vllm/both.sh"], /^exec vllm serve meta-llama\/Llama-3\.1-8B-Instruct "\$\{args\[@\]\}"$/m);
 * ```
 */
export function launchFiles(t: LaunchTarget): Record<string, string> {
  const platform = platformOf(t.device);
  const files: Record<string, string> = {};
  const readme = [
    `# Launch configurations: ${t.description}`,
    "",
    `Written by \`deno task plan\` for ${t.settings.model}${
      t.settings.engine ? `, simulated with the ${t.settings.engine} profile` : ""
    }.`,
    "Each engine's folder has a script per server (`<role>.sh`, run one per instance) and `kubernetes.yaml`, which",
    "runs them all: an instance is a pod holding its devices (create a `hf-token` secret for gated models).",
    "",
  ];
  for (const engine of LAUNCH_ENGINES) {
    const title = ENGINE_TITLE[engine];
    if (!imageOf(engine, platform)) {
      readme.push(`- ${title}: none; it has no published image for ${t.device} (${platform}).`);
      continue;
    }
    const commands = commandsOf(t, engine);
    const servers: ManifestServer[] = commands.map((c) => ({
      command: c,
      name: `${t.name}-${engine}-${c.role}`,
      ...sized(t, c),
    }));
    for (const s of servers) {
      const what = s.command.role === "router"
        ? "the router that pairs prefill and decode servers"
        : `${s.replicas} × ${s.command.role === "both" ? "" : `${s.command.role} `}server${
          s.replicas > 1 ? "s" : ""
        } (run one per instance)`;
      files[`${engine}/${s.command.role}.sh`] = scriptOf(s.command, `${title}: ${what} of ${t.description}.`);
      for (const [name, text] of Object.entries(s.command.files ?? {})) files[`${engine}/${name}`] = text;
    }
    files[`${engine}/kubernetes.yaml`] = manifestYaml(engine, platform, servers, t);
    const notes = [...new Set(commands.flatMap((c) => c.notes))];
    const simulated = t.settings.engine === engine ? " (the profile the plan simulated)" : "";
    readme.push(
      `- ${title} ${ENGINE_ARGS[engine].version}${simulated}: ${
        commands.map((c) => `\`${engine}/${c.role}.sh\``).join(", ")
      }, \`${engine}/kubernetes.yaml\`.${notes.length ? ` Not as simulated: ${notes.join("; ")}.` : ""}`,
    );
    if (engine === "vllm" && t.topology === "disagg") {
      readme.push(
        "  vLLM v0.11.0 ships no router for disaggregated serving: a proxy sends each request to a prefill server (1",
        "  token), then to a decode server (tests/v1/kv_connector/nixl_integration/toy_proxy_server.py shows the",
        "  protocol; llm-d or Dynamo do it in production).",
      );
    }
  }
  files["README.md"] = readme.join("\n") + "\n";
  return files;
}

/** The manifest as YAML documents, each flag of a container's args with its comment. */
function manifestYaml(
  engine: LaunchEngine,
  platform: ReturnType<typeof platformOf>,
  servers: readonly ManifestServer[],
  t: LaunchTarget,
): string {
  const head = [
    `# Kubernetes objects running ${t.description} on ${ENGINE_TITLE[engine]} (written by deno task plan).`,
    ...versionLines(engine),
  ].join("\n");
  const docs = kubernetesObjects(engine, platform, servers, t.name).map((o) => {
    const doc = new Document(o, { aliasDuplicateObjects: false });
    const spec = (o as { kind: string }).kind;
    if (spec === "StatefulSet" || spec === "Deployment") {
      const args = doc.getIn(["spec", "template", "spec", "containers", 0, "args"], true) as YAMLSeq | undefined;
      const server = servers.find((s) => s.name === (o as { metadata: { name: string } }).metadata.name)!;
      for (const item of args?.items ?? []) {
        const text = String((item as { value: unknown }).value);
        const f = server.command.flags.find((x) => x.name === text);
        if (f) (item as { comment?: string }).comment = ` ${flagComment(engine, f, server.command.role === "router")}`;
      }
    }
    return doc.toString({ lineWidth: 0 });
  });
  return `${head}\n${docs.map((d) => `---\n${d}`).join("")}`;
}
