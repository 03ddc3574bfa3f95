import assert from "node:assert/strict";
import { join } from "node:path";
import { matchFiles } from "./testing.ts";

Deno.test("scenarioTests' file globs: plain names, ./ paths, globs one level and recursive, nothing for no match", () => {
  const dir = Deno.makeTempDirSync({ prefix: "servingcast-globs-" });
  for (const f of ["a.yaml", "b.yml", "sub/c.yaml", "sub/deep/d.yaml", "__baselines__/a.yaml", "notes.txt"]) {
    Deno.mkdirSync(join(dir, f, ".."), { recursive: true });
    Deno.writeTextFileSync(join(dir, f), "");
  }
  const rel = (patterns: string[]) => matchFiles(dir, patterns).map((f) => f.slice(dir.length + 1));
  assert.deepEqual(rel(["*.yaml"]), ["a.yaml"]);
  assert.deepEqual(rel(["a.yaml"]), ["a.yaml"]);
  assert.deepEqual(rel(["./sub/c.yaml", "sub/c.yaml"]), ["sub/c.yaml"]);
  assert.deepEqual(rel(["*.{yaml,yml}"]), ["a.yaml", "b.yml"]);
  assert.deepEqual(rel(["sub/*.yaml"]), ["sub/c.yaml"]);
  assert.deepEqual(rel(["**/*.yaml"]), ["a.yaml", "sub/c.yaml", "sub/deep/d.yaml"]); // never __baselines__
  assert.deepEqual(rel(["missing.yaml", "nowhere/*.yaml", "sub"]), []);
});
