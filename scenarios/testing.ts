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
 * folder (`validation/**` walks only `validation/`). Symbolic links are
 * followed, to files and to folders (each real folder walked once, so a
 * link cycle ends): a gate never passes over a file it was pointed at. A
 * link that points nowhere is listed too, so that its test fails on it.
 */
export function matchFiles(folder: string, patterns: readonly string[]): string[] {
  const isMatch = picomatch([...patterns]);
  const found = new Set<string>();
  const walked = new Set<string>();
  const walk = (rel: string, deep: boolean) => {
    const at = join(folder, rel);
    let entries: Deno.DirEntry[];
    try {
      const real = Deno.realPathSync(at);
      if (walked.has(real)) return; // a link back to a folder already walked
      walked.add(real);
      entries = [...Deno.readDirSync(at)];
    } catch {
      return; // a glob's folder that does not exist matches nothing
    }
    for (const e of entries) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      const kind = e.isSymlink ? linkKind(join(folder, path)) : e.isFile ? "file" : e.isDirectory ? "dir" : "other";
      if ((kind === "file" || kind === "dangling") && isMatch(path)) found.add(path);
      else if (kind === "dir" && deep && !SKIPPED.has(e.name)) walk(path, deep);
    }
  };
  for (const p of patterns) {
    const { base, glob, isGlob } = picomatch.scan(p);
    if (!isGlob) {
      // A plain file name: that file, when it is one (or a link to one, or a link that points nowhere).
      const rel = base.replace(/^\.\//, "");
      const kind = linkKind(join(folder, rel));
      if (kind === "file" || kind === "dangling") found.add(rel);
    } else walk(base, glob.includes("/") || glob.includes("**"));
  }
  return [...found].sort().map((f) => join(folder, f));
}

/** What `path` is once links are followed: a file, a folder, something else, a link to nothing, or nothing. */
function linkKind(path: string): "file" | "dir" | "other" | "dangling" | "none" {
  try {
    const st = Deno.statSync(path);
    return st.isFile ? "file" : st.isDirectory ? "dir" : "other";
  } catch {
    try {
      return Deno.lstatSync(path).isSymlink ? "dangling" : "none";
    } catch {
      return "none";
    }
  }
}

/** How a path is shown in test names and messages: relative to the working folder when inside it. */
function shown(path: string): string {
  const r = relative(Deno.cwd(), path);
  return r.startsWith("..") || isAbsolute(r) ? path : r;
}

/** One test {@link scenarioTests} registers: its name, and its body, given a way to run named steps. */
export interface ScenarioTestCase {
  /** The test's name (`scenario <name> (<file>)`). */
  readonly name: string;
  /** The scenario file, as shown (relative to the working folder when inside it). */
  readonly file: string;
  /** Runs the test; throws on failure. `step` runs one named step (Deno's `t.step`). */
  readonly fn: (step: (name: string, fn: () => void) => Promise<unknown>) => Promise<void>;
}

/**
 * The tests {@link scenarioTests} registers, without registering them: one
 * per scenario file the globs match (links followed), a failing one for a
 * file that cannot be loaded, and a failing one when nothing matches or no
 * file has the tags. Used by scenarioTests and by the fuzzer.
 */
export function scenarioTestCases(base: string | URL, options: ScenarioTestOptions = {}): ScenarioTestCase[] {
  const folder = baseFolder(base);
  const patterns = typeof options.files === "string" ? [options.files] : options.files ?? ["*.yaml"];
  const files = matchFiles(folder, patterns);
  const failing = (name: string, file: string, message: string): ScenarioTestCase => ({
    name,
    file,
    fn: () => Promise.reject(new Error(message)),
  });
  if (files.length === 0) {
    // A gate that checks nothing must not pass: a typo in a glob is a failing test.
    const message = `no scenario file matches ${patterns.map((p) => `'${p}'`).join(" or ")} in ${shown(folder)}`;
    return [failing(`scenarios (${patterns.join(", ")})`, shown(folder), message)];
  }
  const baselineDir = options.baselineDir === undefined ? undefined : resolve(folder, options.baselineDir);
  const tags = options.tags ?? [];
  const cases: ScenarioTestCase[] = [];
  for (const file of files) {
    const path = shown(file);
    let scenario;
    try {
      scenario = loadScenario(path, undefined, { baselineDir });
    } catch (e) {
      cases.push(failing(`scenario ${path}`, path, e instanceof Error ? e.message : String(e)));
      continue;
    }
    if (tags.length && !tags.some((t) => scenario.tags.includes(t))) continue;
    const s = scenario;
    cases.push({
      name: `scenario ${s.name} (${path})`,
      file: path,
      fn: async (step) => {
        const run = runScenario(s);
        options.onRun?.(path, run);
        for (const c of run.checks) {
          await step(c.name, () => {
            if (!c.pass) throw new Error(c.message);
          });
        }
        for (const m of run.measurements) {
          const want = m.measurement;
          const band = `±${(want.maxError * 100).toFixed(0)}% of measured ${want.value}`;
          const name = want.knownGap === undefined
            ? `${want.key} within ${band}`
            : `${want.key} outside ${band} (known gap)`;
          await step(name, () => {
            if (!m.pass) throw new Error(m.message);
          });
        }
      },
    });
  }
  if (cases.length === 0) {
    const message = `none of the ${files.length} scenario files in ${shown(folder)} has the tag ${
      tags.map((t) => `'${t}'`).join(" or ")
    }`;
    return [failing(`scenarios tagged ${tags.join(", ")}`, shown(folder), message)];
  }
  return cases;
}

/**
 * Registers one `Deno.test` per scenario file, with one step per assertion,
 * measurement and baseline check; a failing step's message names the
 * scenario file, line and column, the bound and the value. A scenario that
 * cannot be loaded (bad YAML, an unknown key, a link that points nowhere)
 * is a failing test with its located message, not an error at import.
 * Scenario files reached through symbolic links are tested like the others.
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
  const cases = scenarioTestCases(base, options);
  for (const c of cases) Deno.test(c.name, (t) => c.fn((name, fn) => t.step(name, fn)));
  // The placeholders for "nothing matched" and "no file has the tags" register no file.
  return cases.filter((c) => c.name.startsWith("scenario ")).map((c) => c.file);
}
