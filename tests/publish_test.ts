/**
 * The package as others get it (issue 14): the command line runs from its
 * import specifier, not only from a clone's working directory; deno.json
 * names the entry points, the licence and a version the changelog records;
 * the licence file exists. (`deno publish --dry-run` itself runs in .ci/run:
 * it checks the package's files, slow types and excluded imports.)
 */
import assert from "node:assert/strict";
import denoJson from "../deno.json" with { type: "json" };
import { ROOT, runDeno } from "./_helpers.ts";
import { EXAMPLE } from "../cli.ts";

/** The environment variables the `sim` permission set allows (the CLI and its npm libraries read them). */
const SIM_ENV = denoJson.permissions.sim.env.join(",");

Deno.test("the CLI runs from its file: URL specifier in another working directory, with the bundled example", async () => {
  const cwd = Deno.makeTempDirSync({ prefix: "servingcast-specifier-" });
  try {
    // Explicit permissions, as a user without this deno.json passes them: read only the package's own folder (the
    // example is found beside cli.ts, not in the working directory), the environment the sim set allows, no prompt.
    const run = await runDeno(
      [
        "run",
        "--quiet",
        "--no-prompt",
        `--allow-read=${ROOT}`,
        `--allow-env=${SIM_ENV}`,
        new URL("../cli.ts", import.meta.url).href,
        "--quiet",
      ],
      cwd,
    );
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, "");
    assert.match(run.stdout, /^ {9}E2E_TIME\(s\) {2}TTFT\(s\)/);
    assert.match(run.stdout, /\n======== Overall Summary ========\n/);
    assert.match(run.stdout, /\ntotal_requests +1000\.000\n/);
    assert.deepEqual([...Deno.readDirSync(cwd)], [], "nothing written to the working directory");
  } finally {
    Deno.removeSync(cwd, { recursive: true });
  }
});

Deno.test("deno.json names the entry points, the licence and the changelog's newest version", () => {
  const exports = denoJson.exports as Record<string, string>;
  assert.equal(exports["."], "./mod.ts");
  assert.equal(exports["./cli"], "./cli.ts");
  for (const [name, file] of Object.entries(exports)) {
    assert.ok(Deno.statSync(new URL(`../${file}`, import.meta.url)).isFile, `export ${name}: ${file}`);
  }
  assert.equal(denoJson.license, "MIT");
  assert.match(denoJson.version, /^\d+\.\d+\.\d+$/);

  // Keep a Changelog: "## [Unreleased]" first, then "## [X.Y.Z] - YYYY-MM-DD", newest first.
  const changelog = Deno.readTextFileSync(new URL("../CHANGELOG.md", import.meta.url));
  const versions = [...changelog.matchAll(/^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$/gm)].map((m) => m[1]);
  assert.ok(versions.length > 0, "CHANGELOG.md has no '## [X.Y.Z] - YYYY-MM-DD' entry");
  assert.equal(versions[0], denoJson.version, "the newest CHANGELOG.md entry is deno.json's version");
  assert.match(changelog, /^## \[Unreleased\]$/m);

  // The package carries what the CLI reads at run time: the bundled example beside cli.ts.
  const include = denoJson.publish.include;
  for (const required of ["mod.ts", "cli.ts", "examples/", "LICENSE", "CHANGELOG.md", "README.md"]) {
    assert.ok(include.includes(required), `publish.include lacks ${required}`);
  }
  for (const url of [EXAMPLE.instance, EXAMPLE.common]) {
    assert.ok(Deno.statSync(url).isFile, url.href);
    assert.ok(url.href.startsWith(new URL("../examples/", import.meta.url).href), url.href);
  }
});

Deno.test("the MIT licence file exists with the copyright line", () => {
  const license = Deno.readTextFileSync(new URL("../LICENSE", import.meta.url));
  assert.match(license, /^MIT License\n\nCopyright \(c\) 2026 the ServingCast authors\n/);
  assert.match(license, /THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND/);
});
