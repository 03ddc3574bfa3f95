/**
 * Finds the scenario files: `scenarios/*.yaml` and `scenarios/validation/*.yaml`.
 *
 * @module
 */

const root = new URL(".", import.meta.url).pathname;

function yamlIn(dir: string): string[] {
  return [...Deno.readDirSync(dir)].filter((e) => e.isFile && /\.ya?ml$/.test(e.name)).map((e) => dir + e.name).sort();
}

/**
 * The files named on a command line, each folder replaced by its own
 * scenario files (`*.yaml` and `*.yml` directly in it, sorted), as
 * `deno test` takes a folder and `scenarioTests` its default pattern.
 *
 * @returns the files, or the first folder that holds none (for the task's one-line error)
 */
export function expandFolders(paths: readonly string[]): { files: string[] } | { empty: string } {
  const files: string[] = [];
  for (const p of paths) {
    let folder = false;
    try {
      folder = Deno.statSync(p).isDirectory;
    } catch {
      // Not there, or not readable: the task reads it and says why.
    }
    if (!folder) {
      files.push(p);
      continue;
    }
    const found = yamlIn(p.endsWith("/") ? p : `${p}/`);
    if (found.length === 0) return { empty: p };
    files.push(...found);
  }
  return { files };
}

/** Every scenario file, the top level first. */
export function scenarioFiles(): string[] {
  return [...topLevelFiles(), ...validationFiles()];
}

/** The scenarios of `scenarios/` itself (deployments and SLOs, not calibration cases). */
export function topLevelFiles(): string[] {
  return yamlIn(root);
}

/** The validation scenarios (rows that grade the model; scenarios/validation/*.yaml). */
export function validationFiles(): string[] {
  return yamlIn(`${root}validation/`);
}

/** The folder of the fit sets: scenarios whose rows set calibrated constants. */
export const FIT_DIR = `${root}validation/fit`;

/** The registry of sources and rigs. */
export const REGISTRY_FILE = `${root}validation/registry/sources.yaml`;

/** Every scenario with measured rows: the validation scenarios, then each fit set's, folder by folder. */
export function measuredFiles(): string[] {
  const sets = [...Deno.readDirSync(FIT_DIR)].filter((e) => e.isDirectory).map((e) => e.name).sort();
  return [...validationFiles(), ...sets.flatMap((d) => yamlIn(`${FIT_DIR}/${d}/`))];
}

/** Cases of shared/reference/calibration.md that no validation scenario runs yet, and why. */
export const PENDING_CASES: readonly { case: string; reason: string }[] = [
  {
    case:
      "§6 SGLang DeepSeek-V3 decode, 9 × 8 H100 (EP72), 256 sequences per GPU, 2K context: 22,282 output tok/s per node",
    reason:
      "holding 256 sequences per GPU in steady state takes a prefill pool of ~6 nodes feeding the 9 decode nodes and tens of millions of decode tokens, too slow a run for the test suite; the step-time model alone gives 27,900 tok/s per node (+25%), pinned in core/hardware/moe_test.ts",
  },
  {
    case:
      "§6 DeepSeek production H800 prefill (EP32, ~73,700 input tok/s per node) and decode (EP144, ~14,800 output tok/s per node)",
    reason:
      "24-hour averages over unknown batch sizes, and the prefill figure counts prefix-cache hits: they need disaggregation and prefix caching first",
  },
  {
    case: "§1 matrix-multiply efficiency",
    reason: "not a serving run: these figures set the efficiency constants of core/hardware/devices.ts and kernels.ts",
  },
];

/** A path relative to scenarios/. */
export function relative(file: string): string {
  return file.startsWith(root) ? file.slice(root.length) : file;
}
