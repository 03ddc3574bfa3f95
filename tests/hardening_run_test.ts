/**
 * Issue 11, run, output and engine side: every bad input is a clear exit 2
 * before the run where it can be, and resources stay bounded.
 */
import assert from "node:assert/strict";
import { COMMON_OK, INSTANCE_OK, ROOT, runCli, runDeno, writeTemp } from "./_helpers.ts";
import { outputDirProblem, outputFileProblem } from "../cli_output.ts";

// ---- Finding 2: output paths are checked before the run, write errors are exit 2 ----

Deno.test("output paths: a missing folder, a folder or a file where a folder is needed are named with the flag", () => {
  const dir = writeTemp({ "f.txt": "x" });
  assert.equal(
    outputFileProblem("--output_json", `${dir}missing/out.json`),
    `--output_json: cannot write ${dir}missing/out.json: folder ${dir}missing does not exist`,
  );
  assert.equal(outputFileProblem("--output_json", dir), `--output_json: ${dir} is a directory; expected a file path`);
  assert.equal(
    outputFileProblem("--dump_requests", `${dir}f.txt/d.jsonl`),
    `--dump_requests: cannot write ${dir}f.txt/d.jsonl: ${dir}f.txt is not a folder`,
  );
  assert.equal(outputFileProblem("--output_json", `${dir}new.json`), undefined);
  assert.equal(
    outputDirProblem("--profiling_output_path", `${dir}f.txt`),
    `--profiling_output_path: ${dir}f.txt is not a folder`,
  );
  assert.equal(
    outputDirProblem("--profiling_output_path", `${dir}f.txt/sub`),
    `--profiling_output_path: cannot create ${dir}f.txt/sub: ${dir}f.txt is not a folder`,
  );
  assert.equal(outputDirProblem("--profiling_output_path", `${dir}a/b`), undefined);
});

Deno.test("cli: a bad output path is exit 2 before the run; a write error after it is exit 2 too", async () => {
  const dir = writeTemp({ "i.yaml": INSTANCE_OK, "c.yaml": COMMON_OK });
  const files = ["--instance_config_path", `${dir}i.yaml`, "--common_config_path", `${dir}c.yaml`, "--quiet"];
  const missing = await runCli([...files, "--output_json", `${dir}nope/out.json`]);
  assert.equal(missing.code, 2);
  assert.equal(missing.stdout, "", "nothing simulated");
  assert.equal(
    missing.stderr,
    `servingcast: --output_json: cannot write ${dir}nope/out.json: folder ${dir}nope does not exist\n`,
  );
  const prof = await runCli([...files, "--enable_profiling", "--profiling_output_path", `${dir}c.yaml`]);
  assert.equal(prof.code, 2);
  assert.equal(prof.stderr, `servingcast: --profiling_output_path: ${dir}c.yaml is not a folder\n`);
  if (Deno.build.os === "linux") {
    // Deno asks for --allow-all to touch /dev; with it, the write fails for want of space.
    const full = await runDeno([
      "run",
      "--quiet",
      "--allow-all",
      `${ROOT}cli.ts`,
      ...files,
      "--output_json",
      "/dev/full",
    ]);
    assert.equal(full.code, 2);
    assert.equal(full.stderr, "servingcast: --output_json: cannot write /dev/full: no space left on device\n");
  }
});
