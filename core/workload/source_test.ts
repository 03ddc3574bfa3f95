import assert from "node:assert/strict";
import { SYNTHETIC_PREFIX_BLOCK, SyntheticSource } from "./source.ts";
import type { RequestClass } from "./source.ts";

Deno.test("synthetic shared prefixes: ids by class, group and position, as many as the prompt's shared blocks", () => {
  const cls = (name: string, input: number): RequestClass => ({
    name,
    weight: 1,
    input: { dist: "uniform", min: 1, max: input },
    output: { dist: "fixed", value: 4 },
    sharedPrefixTokens: 400,
    prefixGroups: 3,
  });
  const s = new SyntheticSource(2000, { rate: 100, process: "poisson", cv: 1 }, [cls("a", 600), cls("b", 600)], 7);
  const seen = new Set<number>();
  for (let i = 0; i < 2000; i++) {
    const d = s.next();
    const blocks = Math.floor(Math.min(d.input, 400) / SYNTHETIC_PREFIX_BLOCK);
    assert.equal(d.prefix?.ids.length, blocks, `request ${i}: ${d.input} tokens`);
    const ids = d.prefix!.ids;
    if (blocks === 0) continue;
    const base = ids[0];
    assert.equal(base % 1_000_000, 0);
    assert.deepEqual(ids, Array.from({ length: blocks }, (_, j) => base + j));
    seen.add(base);
  }
  // Two classes × three groups.
  assert.equal(seen.size, 6);
});
