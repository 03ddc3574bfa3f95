/**
 * Fuzz target: a consumer repository's file tree as `scenarioTests` sees
 * it. Each case lays out a `scenarios/` folder with scenarios that pass,
 * fail their SLO or are broken (mutated YAML), placed directly, behind a
 * symbolic link to a file elsewhere, inside a linked folder, as a link that
 * points nowhere, or beside a link cycle; then lists the tests
 * `scenarioTestCases` would register for a random glob and runs them. The
 * promise of a gate: every file the glob names is a test (a link is
 * followed, never skipped), a passing scenario passes, a failing or broken
 * one fails with its file named, listing never throws, and nothing outside
 * the case folder changes.
 *
 * @module
 */
import picomatch from "picomatch";
import { stringify } from "yaml";
import { scenarioTestCases } from "../../scenarios/testing.ts";
import { mutate, pick, treeOf } from "./_common.ts";
import type { CaseResult, FuzzTarget } from "./_common.ts";

const CONSUMER = new URL("../consumer/scenarios/configs/", import.meta.url).pathname;

/** What a scenario of the case is meant to do. */
type Kind = "pass" | "fail" | "broken" | "dangling";

/** One scenario's YAML: configs by absolute path (so a link's folder does not matter). */
function scenarioText(dir: string, name: string, kind: Kind, r: () => number): string {
  const doc = {
    name,
    instance_config: `${dir}/configs/h100.yaml`,
    common_config: `${dir}/configs/chat.yaml`,
    expect: kind === "fail" ? { "ttft.p99": "< 1us" } : { total_requests: "== 200", "ttft.p99": "< 60s" },
  };
  const text = stringify(doc);
  // Broken: a mutation, which the loader refuses (or which leaves a scenario that runs: judged only as registered).
  return kind === "broken" ? mutate(text, r) : text;
}

/** Builds, lists, runs and judges one tree. */
async function treeCase(r: () => number, dir: string): Promise<CaseResult> {
  Deno.mkdirSync(`${dir}/configs`);
  for (const f of ["h100.yaml", "chat.yaml", "chat_trace.jsonl"]) {
    Deno.copyFileSync(`${CONSUMER}${f}`, `${dir}/configs/${f}`);
  }
  Deno.mkdirSync(`${dir}/scenarios/sub`, { recursive: true });
  Deno.mkdirSync(`${dir}/real/shared`, { recursive: true });
  Deno.mkdirSync(`${dir}/outside`);
  Deno.writeTextFileSync(`${dir}/outside/precious.txt`, "precious\n");
  const before = treeOf(`${dir}/outside`);

  // Each entry: its path relative to scenarios/ and what it should do.
  const entries: { rel: string; kind: Kind }[] = [];
  const n = 1 + Math.floor(r() * 4);
  let linkedFolder = false;
  for (let i = 0; i < n; i++) {
    const kind: Kind = pick(r, ["pass", "fail", "broken", "dangling"] as const);
    const ext = r() < 0.8 ? "yaml" : "yml";
    const name = `s${i}`;
    const where = pick(r, ["top", "sub", "link", "folder-link"] as const);
    const text = scenarioText(dir, name, kind, r);
    if (kind === "dangling") {
      Deno.symlinkSync(`../real/gone${i}.${ext}`, `${dir}/scenarios/${name}.${ext}`);
      entries.push({ rel: `${name}.${ext}`, kind });
    } else if (where === "top" || where === "sub") {
      const rel = where === "top" ? `${name}.${ext}` : `sub/${name}.${ext}`;
      Deno.writeTextFileSync(`${dir}/scenarios/${rel}`, text);
      entries.push({ rel, kind });
    } else if (where === "link") {
      Deno.writeTextFileSync(`${dir}/real/${name}.${ext}`, text);
      Deno.symlinkSync(`../real/${name}.${ext}`, `${dir}/scenarios/${name}.${ext}`);
      entries.push({ rel: `${name}.${ext}`, kind });
    } else {
      Deno.writeTextFileSync(`${dir}/real/shared/${name}.${ext}`, text);
      if (!linkedFolder) Deno.symlinkSync("../real/shared", `${dir}/scenarios/linked`);
      linkedFolder = true;
      entries.push({ rel: `linked/${name}.${ext}`, kind });
    }
  }
  // A link cycle: walking it must end, and add nothing.
  if (r() < 0.5) Deno.symlinkSync(".", `${dir}/scenarios/loop`);
  // A link to a file outside, which must be read, never written.
  if (r() < 0.3) Deno.symlinkSync("../outside/precious.txt", `${dir}/scenarios/notes.txt`);

  const patterns = pick(r, [["*.yaml"], ["**/*.yaml"], ["*.{yaml,yml}"], ["**/*.{yaml,yml}"], ["linked/*.yaml"]]);
  const files = { tree: JSON.stringify(treeOf(`${dir}/scenarios`)), patterns: patterns.join(" ") };
  const finding = (detail: string): CaseResult => ({ outcome: "finding", detail, files });
  let cases;
  try {
    cases = scenarioTestCases(`${dir}/scenarios`, { files: patterns });
  } catch (e) {
    return finding(`listing threw: ${e instanceof Error ? e.message : e}`);
  }
  const isMatch = picomatch(patterns);
  const expected = entries.filter((e) => isMatch(e.rel));
  for (const e of expected) {
    const found = cases.filter((c) => c.file.endsWith(`scenarios/${e.rel}`));
    if (found.length !== 1) return finding(`${e.rel} (${e.kind}) registered ${found.length} times`);
    const failures: string[] = [];
    try {
      await found[0].fn((_name, fn) => {
        try {
          fn();
        } catch (err) {
          failures.push(err instanceof Error ? err.message : String(err));
        }
        return Promise.resolve(true);
      });
    } catch (err) {
      failures.push(err instanceof Error ? err.message : String(err));
    }
    if (e.kind === "pass" && failures.length) return finding(`${e.rel} should pass: ${failures.join(" | ")}`);
    if ((e.kind === "fail" || e.kind === "dangling") && failures.length === 0) {
      return finding(`${e.rel} (${e.kind}) passed`);
    }
    const loadFailed = found[0].name === `scenario ${found[0].file}`;
    if ((loadFailed || e.kind === "dangling") && !failures.some((f) => f.includes(e.rel))) {
      return finding(`${e.rel} (${e.kind}) failed without naming its file: ${failures.join(" | ")}`);
    }
  }
  if (expected.length === 0 && !(cases.length === 1 && cases[0].name.startsWith("scenarios ("))) {
    return finding(`nothing matches, yet ${cases.length} tests instead of one failing placeholder`);
  }
  if (JSON.stringify(treeOf(`${dir}/outside`)) !== JSON.stringify(before)) return finding("a file outside changed");
  return { outcome: expected.some((e) => e.kind === "pass") ? "ok" : "located" };
}

/** `scenarioTests` over generated consumer trees. */
export const SCENARIO_TREE_TARGET: FuzzTarget = { name: "scenarioTests", weight: 1, run: treeCase };
