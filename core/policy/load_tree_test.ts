import assert from "node:assert/strict";
import fc from "fast-check";
import { LoadTree } from "./load_tree.ts";
import { argMin } from "./router.ts";
import type { EngineLoad } from "./router.ts";
import { load } from "./_fixtures.ts";
import type { Load } from "./_fixtures.ts";

Deno.test("a load tree picks what a scan picks, ties to the earliest engine, as loads change (property-based)", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 40 }),
      // Changes: (engine, new load) pairs between choices; small loads so that ties are common.
      fc.array(fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 5 })), { maxLength: 6 }), { maxLength: 30 }),
      (n, rounds) => {
        const pool: Load[] = Array.from({ length: n }, (_, i) => load(i, { outstanding: i % 3 }));
        const key = (e: EngineLoad) => e.outstanding;
        const tree = new LoadTree(pool, key);
        assert.equal(tree.best(), argMin(pool, key));
        for (const changes of rounds) {
          for (const [at, value] of changes) {
            pool[at % n].outstanding = value;
            tree.touch(at % n);
          }
          assert.equal(tree.best(), argMin(pool, key));
        }
      },
    ),
    { numRuns: 300, seed: 29 },
  );
});
