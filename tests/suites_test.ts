/**
 * The suites. `deno task test` (and a bare `deno test -P`) runs the six modules of tests/suites/, named in deno.json
 * `test.include`, and each of them imports a share of the test modules, which register their tests in its runtime.
 * Why: Deno starts every test module in a runtime of its own, and each runtime pays again for what the modules share.
 * Deno 2.9.6's test runtime fills an 80 MB array for `Deno.bench` samples (0.1 s of CPU each), most modules load
 * yaml, zod and the simulator (0.25 s), and the simulator's hot code is compiled afresh in each runtime before it runs
 * fast. On this 2-core machine, four runs of each alternated: the 53 test modules one by one took 71–73 s of CPU and
 * 39–40 s; as six suites, 48–50 s of CPU and 27–28 s, with the same 500 tests. The suites are in deno.json largest
 * first, so that `--parallel` ends its two lanes close together.
 *
 * A test module still runs on its own (`deno test -P tests/cli_test.ts`, or `deno test -P tests/` for all of them, one
 * runtime each), a failure names the test module's own file and line, and `deno test -P scenarios/` runs the scenario
 * modules as a user's repository does. This test keeps the suites whole: every test module is imported by exactly
 * one suite, and deno.json names every suite.
 */
import assert from "node:assert/strict";
import { ROOT } from "./_helpers.ts";

/** Where test modules live; tests/consumer/ is another repository's (deno.json `test.exclude`). */
const TEST_ROOTS = ["core", "tests", "scenarios"];
const NOT_OURS = new Set(["tests/consumer"]);

/** Every `*_test.ts` under `dir` (relative to the repository), sorted. */
function testModules(dir: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(`${ROOT}${dir}`)) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory && !NOT_OURS.has(path)) out.push(...testModules(path));
    else if (e.isFile && e.name.endsWith("_test.ts")) out.push(path);
  }
  return out.sort();
}

/** The modules a suite file imports (its `import "…";` lines), relative to the repository. */
function suiteImports(suite: string): string[] {
  const text = Deno.readTextFileSync(`${ROOT}${suite}`);
  return [...text.matchAll(/^import "([^"]+)";$/gm)].map((m) =>
    new URL(m[1], `file://${ROOT}${suite}`).pathname.slice(ROOT.length)
  );
}

Deno.test("every test module is in exactly one suite, and deno.json runs every suite", () => {
  const config = JSON.parse(Deno.readTextFileSync(`${ROOT}deno.json`)) as { test: { include: string[] } };
  const suites = [...Deno.readDirSync(`${ROOT}tests/suites`)].map((e) => `tests/suites/${e.name}`).sort();
  assert.deepEqual([...config.test.include].sort(), suites, "deno.json test.include must name each tests/suites/ file");
  const imported = suites.flatMap(suiteImports).sort();
  const all = TEST_ROOTS.flatMap(testModules).sort();
  assert.ok(all.length >= 50 && all.includes("tests/suites_test.ts"), all.join(" "));
  const missing = all.filter((m) => !imported.includes(m));
  assert.deepEqual(missing, [], "test modules no suite imports (add each to one of tests/suites/)");
  assert.deepEqual(imported, all, "a suite imports a module twice, or one that is not a test module");
});
