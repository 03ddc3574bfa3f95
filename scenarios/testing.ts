/**
 * Scenario files as `Deno.test`s, for any repository: a platform team keeps
 * its serving configs and scenarios in its own repository and gates every
 * change with a three-line test module:
 *
 * ```ts ignore
 * import { scenarioTests } from "@servingcast/servingcast";
 *
 * scenarioTests(import.meta.url);
 * ```
 *
 * (Not run as a doc test: a running test cannot register tests.) Every path a scenario names (instance and common files, model
 * `config.json` folders, device files, traces, baselines) resolves relative
 * to the scenario file itself, never to ServingCast's own folder.
 *
 * @module
 */
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import picomatch from "picomatch";
import { fileURLToPath } from "node:url";
import { loadScenario, runScenario } from "../core/scenario/mod.ts";
import type { ScenarioResult } from "../core/scenario/mod.ts";

/** Options of {@link scenarioTests}. */
export interface ScenarioTestOptions {
  /** Glob(s) of scenario files, relative to the base folder (default `*.yaml`: the folder's own scenarios). */
  readonly files?: string | readonly string[];
  /** Only scenarios with one of these tags (default: all). */
  readonly tags?: readonly string[];
  /**
   * The folder of the baseline snapshots, relative to the base folder
   * (default: `__baselines__` beside each scenario).
   */
  readonly baselineDir?: string;
  /** Called with each scenario's run after its steps (for reports). */
  readonly onRun?: (file: string, run: ScenarioResult) => void;
}

/** The folder of `base`: a module URL (its folder), a folder URL, or a path. */
function baseFolder(base: string | URL): string {
  const text = String(base);
  if (!text.startsWith("file:")) return text;
  const path = fileURLToPath(text);
  return text.endsWith("/") ? path : dirname(path);
}

/** Folders a scenario search never enters. */
const SKIPPED = new Set([".git", "node_modules", "__baselines__"]);

/**
 * The files under `folder` matching any of the globs (picomatch syntax,
 * relative to `folder`), sorted: the walk starts at each glob's static
 * folder (`validation/**` walks only `validation/`).
 */
export function matchFiles(folder: string, patterns: readonly string[]): string[] {
  const isMatch = picomatch([...patterns]);
  const found = new Set<string>();
  const walk = (rel: string, deep: boolean) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(join(folder, rel))];
    } catch {
      return; // a glob's folder that does not exist matches nothing
    }
    for (const e of entries) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (e.isFile && isMatch(path)) found.add(path);
      else if (e.isDirectory && deep && !SKIPPED.has(e.name)) walk(path, deep);
    }
  };
  for (const p of patterns) {
    const { base, glob, isGlob } = picomatch.scan(p);
    if (!isGlob) {
      // A plain file name: that file, when it is one.
      const rel = base.replace(/^\.\//, "");
      if (fileAt(join(folder, rel))) found.add(rel);
    } else walk(base, glob.includes("/") || glob.includes("**"));
  }
  return [...found].sort().map((f) => join(folder, f));
}

function fileAt(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** How a path is shown in test names and messages: relative to the working folder when inside it. */
function shown(path: string): string {
  const r = relative(Deno.cwd(), path);
  return r.startsWith("..") || isAbsolute(r) ? path : r;
}

/**
 * Registers one `Deno.test` per scenario file, with one step per assertion,
 * measurement and baseline check; a failing step's message names the
 * scenario file, line and column, the bound and the value. A scenario that
 * cannot be loaded (bad YAML, an unknown key) is a failing test with its
 * located message, not an error at import.
 *
 * Run them with the permissions the scenarios need (`deno test -P` with a
 * permission set in your deno.json: read, and the environment variables
 * ServingCast's libraries read).
 *
 * @param base where the scenarios are: the calling module's `import.meta.url`
 *   (its folder), a folder URL, or a folder path
 * @param options which files, tags and baseline folder
 * @returns the scenario files registered, in order
 *
 * @example Register the scenarios beside a test module (not run as a doc test: a running test cannot register tests)
 * ```ts ignore
 * import { scenarioTests } from "@servingcast/servingcast";
 *
 * scenarioTests(import.meta.url, { tags: ["h100"] });
 * ```
 */
export function scenarioTests(base: string | URL, options: ScenarioTestOptions = {}): string[] {
  const folder = baseFolder(base);
  const patterns = typeof options.files === "string" ? [options.files] : options.files ?? ["*.yaml"];
  const files = matchFiles(folder, patterns);
  if (files.length === 0) {
    // A gate that checks nothing must not pass: a typo in a glob is a failing test.
    const message = `no scenario file matches ${patterns.map((p) => `'${p}'`).join(" or ")} in ${shown(folder)}`;
    Deno.test(`scenarios (${patterns.join(", ")})`, () => {
      throw new Error(message);
    });
    return [];
  }
  const baselineDir = options.baselineDir === undefined ? undefined : resolve(folder, options.baselineDir);
  const tags = options.tags ?? [];
  const registered: string[] = [];
  for (const file of files) {
    const path = shown(file);
    let scenario;
    try {
      scenario = loadScenario(path, undefined, { baselineDir });
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      Deno.test(`scenario ${path}`, () => {
        throw new Error(message);
      });
      registered.push(path);
      continue;
    }
    if (tags.length && !tags.some((t) => scenario.tags.includes(t))) continue;
    registered.push(path);
    const s = scenario;
    Deno.test(`scenario ${s.name} (${path})`, async (t) => {
      const run = runScenario(s);
      options.onRun?.(path, run);
      for (const c of run.checks) {
        await t.step(c.name, () => {
          if (!c.pass) throw new Error(c.message);
        });
      }
      for (const m of run.measurements) {
        const want = m.measurement;
        const band = `±${(want.maxError * 100).toFixed(0)}% of measured ${want.value}`;
        const name = want.knownGap === undefined
          ? `${want.key} within ${band}`
          : `${want.key} outside ${band} (known gap)`;
        await t.step(name, () => {
          if (!m.pass) throw new Error(m.message);
        });
      }
    });
  }
  if (registered.length === 0) {
    const message = `none of the ${files.length} scenario files in ${shown(folder)} has the tag ${
      tags.map((t) => `'${t}'`).join(" or ")
    }`;
    Deno.test(`scenarios tagged ${tags.join(", ")}`, () => {
      throw new Error(message);
    });
  }
  return registered;
}
