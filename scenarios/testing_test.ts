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

Deno.test("scenarioTests' file globs follow symbolic links: to files, to folders (a cycle walked once), and list a dangling one", () => {
  const dir = Deno.makeTempDirSync({ prefix: "servingcast-links-" });
  try {
    for (const f of ["real/tight.yaml", "real/sub/deep.yaml"]) {
      Deno.mkdirSync(join(dir, f, ".."), { recursive: true });
      Deno.writeTextFileSync(join(dir, f), "");
    }
    Deno.mkdirSync(join(dir, "scenarios"));
    Deno.symlinkSync("../real/tight.yaml", join(dir, "scenarios/tight.yaml"));
    Deno.symlinkSync("../real/sub", join(dir, "scenarios/linked"));
    Deno.symlinkSync("..", join(dir, "scenarios/linked_back")); // a cycle
    Deno.symlinkSync("../real/gone.yaml", join(dir, "scenarios/gone.yaml"));
    const rel = (patterns: string[]) =>
      matchFiles(join(dir, "scenarios"), patterns).map((f) => f.slice(dir.length + "/scenarios/".length));
    assert.deepEqual(rel(["*.yaml"]), ["gone.yaml", "tight.yaml"]);
    assert.deepEqual(rel(["tight.yaml", "gone.yaml"]), ["gone.yaml", "tight.yaml"]);
    // Through linked_back (the parent folder) the walk reaches real/ once, and never scenarios/ again.
    assert.deepEqual(rel(["**/*.yaml"]), [
      "gone.yaml",
      "linked/deep.yaml",
      "linked_back/real/tight.yaml",
      "tight.yaml",
    ]);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
