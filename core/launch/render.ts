/**
 * Launch commands as files: a bash script per server (its flags one per
 * line, each with where its value and its name come from), and a
 * Kubernetes manifest per engine that runs every server of the deployment.
 *
 * Kubernetes: each server role is a StatefulSet with a headless Service, so
 * that each instance has a stable name the router (SGLang's router,
 * TensorRT-LLM's disaggregated server) lists; a router is a Deployment with
 * a Service. An instance is one pod holding all its devices: the planner's
 * instances fit one node (at most 8 devices).
 *
 * @module
 */
import type { Command, Flag } from "./commands.ts";
import { flagSource } from "./commands.ts";
import { ENGINE_ARGS } from "./engine_args.ts";
import type { LaunchEngine } from "./engine_args.ts";
import type { Platform } from "../hardware/devices.ts";

/** A shell word: as it is when it needs no quoting, else single-quoted. */
export function shellWord(s: string): string {
  return /^[\w./:=@+,-]+$/.test(s) ? s : `'${s.replaceAll("'", `'"'"'`)}'`;
}

/** The engines' names as their projects write them. */
export const ENGINE_TITLE: Readonly<Record<LaunchEngine, string>> = {
  vllm: "vLLM",
  sglang: "SGLang",
  trtllm: "TensorRT-LLM",
};

/** What a flag's comment says (a script's and a manifest's): the plan setting, why, and where the engine defines it. */
export function flagComment(engine: LaunchEngine, f: Flag, router: boolean): string {
  const where = router
    ? (ENGINE_ARGS[engine].extra.router ?? ENGINE_ARGS[engine].extra.disaggregated)?.source ?? ""
    : flagSource(engine, f.name);
  return [f.from, f.why, where].filter(Boolean).join("; ");
}

/** The lines that say which version of the engine the names follow. */
export function versionLines(engine: LaunchEngine, prefix = "# "): string[] {
  const a = ENGINE_ARGS[engine];
  return [
    `${prefix}Flag names follow ${ENGINE_TITLE[engine]} ${a.version} (${a.repo}@${
      a.commit.slice(0, 12)
    }: ${a.source}).`,
    `${prefix}Each flag's comment gives the plan setting its value comes from and where the engine defines it.`,
  ];
}

/**
 * A bash script running one server: `title` and the version lines, the
 * command's notes, then its flags (one per line, commented) and the
 * program. Paths under /config/ are the script's own folder.
 */
export function scriptOf(cmd: Command, title: string): string {
  const lines = ["#!/usr/bin/env bash", `# ${title}`, ...versionLines(cmd.engine)];
  for (const n of cmd.notes) lines.push(`# Note: ${n}.`);
  lines.push("set -euo pipefail", 'here="$(cd "$(dirname "$0")" && pwd)"', "args=(");
  const router = cmd.role === "router";
  for (const f of cmd.flags) {
    const value = f.value === undefined
      ? ""
      : f.value.startsWith("/config/")
      ? ` "\${here}/${f.value.slice("/config/".length)}"`
      : ` ${shellWord(f.value)}`;
    lines.push(`  ${f.name}${value}  # ${flagComment(cmd.engine, f, router)}`);
  }
  lines.push(")", `exec ${cmd.program.map(shellWord).join(" ")} "\${args[@]}"`, "");
  return lines.join("\n");
}

/** Container images by engine and platform (the projects' published images, at the version the flags follow). */
const IMAGES: Readonly<Record<LaunchEngine, Partial<Record<Platform, string>>>> = {
  // Docker Hub vllm/vllm-openai (CUDA); ROCm builds are AMD's rocm/vllm.
  vllm: { cuda: "vllm/vllm-openai:v0.11.0", rocm: "rocm/vllm:latest" },
  // Docker Hub lmsysorg/sglang (CUDA; its ROCm images carry a -rocm suffix).
  sglang: { cuda: "lmsysorg/sglang:v0.5.4", rocm: "lmsysorg/sglang:latest" },
  // NGC nvcr.io/nvidia/tensorrt-llm/release (CUDA only).
  trtllm: { cuda: "nvcr.io/nvidia/tensorrt-llm/release:1.0.0" },
};

/** The extended resource a device plugin exposes each platform's devices as. */
const DEVICE_RESOURCE: Readonly<Record<Platform, string>> = {
  cuda: "nvidia.com/gpu",
  rocm: "amd.com/gpu",
  ascend: "huawei.com/Ascend910",
};

/** The image of an engine on a platform, or undefined where it has none. */
export function imageOf(engine: LaunchEngine, platform: Platform): string | undefined {
  return IMAGES[engine][platform];
}

/** A server of a manifest: its command, how many instances, and the devices each holds. */
export interface ManifestServer {
  readonly command: Command;
  /** The Kubernetes name of its StatefulSet (or Deployment) and Service. */
  readonly name: string;
  readonly replicas: number;
  /** Devices per instance (0 for a router). */
  readonly devices: number;
}

/** The Kubernetes objects of a deployment on one engine, as plain objects (apps/v1 and v1 kinds). */
export function kubernetesObjects(
  engine: LaunchEngine,
  platform: Platform,
  servers: readonly ManifestServer[],
  app: string,
): Record<string, unknown>[] {
  const image = imageOf(engine, platform)!;
  const objects: Record<string, unknown>[] = [];
  for (const s of servers) {
    const labels = { app, "servingcast.dev/role": s.command.role, "servingcast.dev/name": s.name };
    const files = s.command.files ?? {};
    const hasFiles = Object.keys(files).length > 0;
    if (hasFiles) {
      objects.push({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `${s.name}-config`, labels },
        data: files,
      });
    }
    const args = [
      ...s.command.program.slice(1),
      ...s.command.flags.flatMap((f) => (f.value === undefined ? [f.name] : [f.name, f.value])),
    ];
    const container = {
      name: s.command.role,
      image,
      command: [s.command.program[0]],
      args,
      ports: [{ name: "http", containerPort: s.command.port }],
      readinessProbe: { httpGet: { path: s.command.health, port: s.command.port }, periodSeconds: 10 },
      ...(s.devices > 0
        ? {
          resources: { limits: { [DEVICE_RESOURCE[platform]]: s.devices } },
          env: [{
            name: "HF_TOKEN",
            valueFrom: { secretKeyRef: { name: "hf-token", key: "token", optional: true } },
          }],
        }
        : {}),
      volumeMounts: [
        ...(s.devices > 0 ? [{ name: "shm", mountPath: "/dev/shm" }] : []),
        ...(hasFiles ? [{ name: "config", mountPath: "/config" }] : []),
      ],
    };
    const volumes = [
      // Collectives between an instance's devices pass through shared memory, which a container's default 64 MiB
      // does not hold.
      ...(s.devices > 0 ? [{ name: "shm", emptyDir: { medium: "Memory" } }] : []),
      ...(hasFiles ? [{ name: "config", configMap: { name: `${s.name}-config` } }] : []),
    ];
    const template = { metadata: { labels }, spec: { containers: [container], volumes } };
    const selector = { matchLabels: labels };
    objects.push(
      s.command.role === "router"
        ? {
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: s.name, labels },
          spec: { replicas: s.replicas, selector, template },
        }
        : {
          apiVersion: "apps/v1",
          kind: "StatefulSet",
          metadata: { name: s.name, labels },
          spec: { serviceName: s.name, replicas: s.replicas, podManagementPolicy: "Parallel", selector, template },
        },
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: s.name, labels },
        spec: {
          // A server role's Service is headless: each instance keeps its own name (<name>-<i>.<name>).
          ...(s.command.role === "router" ? {} : { clusterIP: "None" }),
          selector: labels,
          ports: [{ name: "http", port: s.command.port, targetPort: s.command.port }],
        },
      },
    );
  }
  return objects;
}
