/**
 * The suites. `deno task test` (and a bare `deno test -P`) runs the six modules of tests/suites/, named in deno.json
 * `test.include`, and each of them imports a share of the test modules, which register their tests in its runtime.
 * Why: Deno starts every test module in a runtime of its own, and each runtime pays again for what the modules share.
 * Deno 2.9.6's test runtime fills an 80 MB array for `Deno.bench` samples (0.1 s of CPU each), most modules load
 * yaml, zod and the simulator (0.25 s), and the simulator's hot code is compiled afresh in each runtime before it runs
 * fast. On this 2-core machine, four runs of each alternated: the 53 test modules one by one took 71–73 s of CPU and
 * 39–40 s; as six suites, 48–50 s of CPU and 27–28 s, with the same 500 tests. deno.json lists the suites largest
 * first (by their time alone), so that `--parallel` ends its two lanes close together.
 *
 * A test module still runs on its own (`deno test -P tests/cli_test.ts`, or `deno test -P tests/ core/ scenarios/` for
 * all of them, one runtime each), a failing test names its module's own file and line, and `deno test -P scenarios/`
 * runs the scenario modules as a user's repository does. What sharing a runtime changes: an uncaught error (a throw at
 * a module's top level, an unhandled rejection) is reported against the suite and cancels the suite's remaining tests;
 * the run fails either way, and the module run alone shows it in isolation. This test keeps the suites whole: every
 * file Deno would take for a test module is imported by exactly one suite, a suite holds nothing but those imports,
 * and deno.json names every suite.
 */
import assert from "node:assert/strict";
import denoJson from "../deno.json" with { type: "json" };
import { NOT_TESTED, ROOT } from "./_helpers.ts";

/** Deno's default test-module names, `{*_,*.,}test.{ts,tsx,mts,js,mjs,jsx}`: what `deno test DIR` runs. */
const TEST_MODULE = /^(?:.*[._])?test\.(?:ts|tsx|mts|js|mjs|jsx)$/;

/**
 * Every file of the repository Deno would take for a test module (symbolic links followed), relative to it, sorted:
 * all but `.git`, `node_modules` and what deno.json excludes (`exclude`, `test.exclude`).
 */
function testModules(): string[] {
  const skipped = [...NOT_TESTED, ".git/", "node_modules/"];
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(`${ROOT}${dir}`)) {
      const path = `${dir}${e.name}`;
      const kind = e.isSymlink ? Deno.statSync(`${ROOT}${path}`) : e;
      if (kind.isDirectory) {
        if (!skipped.includes(`${path}/`)) walk(`${path}/`);
      } else if (kind.isFile && TEST_MODULE.test(e.name) && !skipped.includes(path)) out.push(path);
    }
  };
  walk("");
  return out.sort();
}

/**
 * The modules a suite imports, relative to the repository. A suite holds nothing else: past its comments, every line
 * is `import "…";` (so no import hides in a comment, and no test is defined in a suite itself).
 */
function suiteImports(suite: string): string[] {
  const code = Deno.readTextFileSync(`${ROOT}${suite}`).replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const lines = code.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  return lines.map((line) => {
    const m = /^import "([^"]+)";$/.exec(line);
    assert.ok(m, `${suite}: a suite holds only import "…"; lines and comments, not: ${line}`);
    return new URL(m[1], `file://${ROOT}${suite}`).pathname.slice(ROOT.length);
  });
}

Deno.test("every test module is in exactly one suite, and deno.json runs every suite", () => {
  const suites = [...Deno.readDirSync(`${ROOT}tests/suites`)].map((e) => `tests/suites/${e.name}`).sort();
  assert.deepEqual(
    [...denoJson.test.include].sort(),
    suites,
    "deno.json test.include must name each tests/suites/ file",
  );
  const imported = suites.flatMap(suiteImports).sort();
  const all = testModules();
  assert.ok(all.length >= 50 && all.includes("tests/suites_test.ts"), all.join(" "));
  const missing = all.filter((m) => !imported.includes(m));
  assert.deepEqual(missing, [], "test modules no suite imports (add each to one of tests/suites/)");
  assert.deepEqual(imported, all, "a suite imports a module twice, or one that is not a test module");
});
