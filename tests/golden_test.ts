/**
 * The bundled example's output, byte for byte (see testdata/README.md).
 */
import assert from "node:assert/strict";
import { GOLDEN } from "./golden_cases.ts";
import { runCli } from "./_helpers.ts";

for (const g of GOLDEN) {
  Deno.test(`cli ${g.args.join(" ") || "(no arguments)"} prints tests/testdata/${g.file} exactly`, async () => {
    const run = await runCli(g.args);
    assert.equal(run.code, 0, run.stderr);
    const want = Deno.readTextFileSync(new URL(`./testdata/${g.file}`, import.meta.url));
    assert.equal(run.stdout, want, "output changed: if intended, run `deno task golden:update`");
  });
}
