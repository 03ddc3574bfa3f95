/**
 * The documented argument names of each engine a launch configuration is
 * written for, read from the engine's source at a released version (the
 * JSON files in data/ give the repository, commit, files and lines): what
 * a generated command's flags are checked against, so that none is
 * invented.
 *
 * @module
 */
import vllm from "./data/vllm.json" with { type: "json" };
import sglang from "./data/sglang.json" with { type: "json" };
import trtllm from "./data/trtllm.json" with { type: "json" };

/** The engines launch configurations are written for. */
export const LAUNCH_ENGINES = ["vllm", "sglang", "trtllm"] as const;

/** One of {@link LAUNCH_ENGINES}. */
export type LaunchEngine = (typeof LAUNCH_ENGINES)[number];

/** An engine's documented arguments at one version. */
export interface EngineArgs {
  /** `vllm serve <model>`, … */
  readonly command: string;
  /** The release the names follow (`v0.11.0`). */
  readonly version: string;
  /** `owner/name` on GitHub. */
  readonly repo: string;
  /** The release's commit. */
  readonly commit: string;
  /** The files the names were read from (the main ones; the data file lists every file). */
  readonly source: string;
  /** Every long option the command accepts. */
  readonly flags: ReadonlySet<string>;
  /** Where each option is defined (`file:line`). */
  readonly locations: Readonly<Record<string, string>>;
  /** Further commands of the engine a deployment runs (SGLang's router, TensorRT-LLM's disaggregated server) and their options. */
  readonly extra: Readonly<
    Record<string, { readonly command: string; readonly source: string; readonly flags: ReadonlySet<string> }>
  >;
  /** Keys of a YAML the engine reads (TensorRT-LLM's extra LLM API options), by section ("" the top level). */
  readonly keys: Readonly<Record<string, ReadonlySet<string>>>;
}

interface ArgsFile {
  command: string;
  version: string;
  repo: string;
  commit: string;
  /** The files read: paths, or {path, how} (the first two are the ones the names come from). */
  sources: (string | { path: string })[];
  flags: string[];
  flag_locations: Record<string, string>;
}

function argsOf(
  f: ArgsFile,
  extra: EngineArgs["extra"] = {},
  keys: EngineArgs["keys"] = {},
): EngineArgs {
  return {
    command: f.command,
    version: f.version,
    repo: f.repo,
    commit: f.commit,
    source: f.sources.slice(0, 2).map((x) => (typeof x === "string" ? x : x.path)).join(", "),
    flags: new Set(f.flags),
    locations: f.flag_locations,
    extra,
    keys,
  };
}

const router = (sglang as unknown as { router: { command: string; source: string; flags: string[] } }).router;

/** Each engine's documented arguments. */
export const ENGINE_ARGS: Readonly<Record<LaunchEngine, EngineArgs>> = {
  vllm: argsOf(vllm as unknown as ArgsFile),
  sglang: argsOf(sglang as unknown as ArgsFile, {
    router: { command: router.command, source: router.source, flags: new Set(router.flags) },
  }),
  trtllm: trtllmArgs(),
};

function trtllmArgs(): EngineArgs {
  const t = trtllm as unknown as ArgsFile & {
    extra_options: Record<string, unknown>;
    disaggregated?: { command: string; source: string; flags: string[] };
  };
  const keys: Record<string, ReadonlySet<string>> = {};
  for (const [section, names] of Object.entries(t.extra_options)) {
    if (Array.isArray(names)) keys[section === "top_level" ? "" : section] = new Set(names as string[]);
  }
  const d = t.disaggregated;
  const extra: EngineArgs["extra"] = d
    ? { disaggregated: { command: d.command, source: d.source, flags: new Set(d.flags) } }
    : {};
  return argsOf(t, extra, keys);
}
