/**
 * KV and utilisation figures that mean what they say: KV occupancy and its
 * peak count blocks held by requests or set aside for them; cached blocks
 * no request references are `kv_cached`; `busy_fraction` is the share of
 * the time an engine had a step running, per group.
 */
import assert from "node:assert/strict";
import { runSources } from "../core/assembly/run.ts";
import { YamlSource } from "../core/config/source.ts";
import { pools } from "../core/assembly/run.ts";
import { ROOT } from "./_helpers.ts";

const example = (extra: string) => {
  const i = Deno.readTextFileSync(`${ROOT}examples/instances.yaml`);
  const c = Deno.readTextFileSync(`${ROOT}examples/common.yaml`) + extra;
  return runSources([new YamlSource("instances.yaml", i)], new YamlSource("common.yaml", c));
};

Deno.test("the bundled example with prefix caching on: peak KV occupancy stays under 0.2, the cache counted apart", () => {
  const plain = example("");
  const cached = example("  enable_prefix_caching: true\n");
  const h = cached.summary.headroom;
  assert.ok(h.kvOccupancyPeak < 0.2, `peak ${h.kvOccupancyPeak}`);
  // Finished prompts stay cached: the pool fills with reclaimable blocks, which are not occupancy.
  assert.ok(h.kvCached > 0.5, `kv_cached ${h.kvCached}`);
  // Nothing is shared between these prompts: what requests hold is what they held without the cache.
  assert.equal(h.kvOccupancyPeak, plain.summary.headroom.kvOccupancyPeak);
  assert.equal(plain.summary.headroom.kvCached, 0);
});

Deno.test("busy_fraction is reported per group and overall, between the batch occupancy and 1", () => {
  const out = example("");
  const h = out.summary.headroom;
  assert.ok(h.busyFraction > 0.9 && h.busyFraction <= 1, String(h.busyFraction));
  const groups = pools(out).groups;
  assert.equal(groups.length, 1);
  assert.equal(groups[0].headroom.busyFraction, h.busyFraction);
  // An idle engine is not busy: a tenth of the load leaves it idle most of the time.
  const light = example("").summary.headroom.busyFraction;
  const idle = runSources(
    [new YamlSource("instances.yaml", Deno.readTextFileSync(`${ROOT}examples/instances.yaml`))],
    new YamlSource(
      "common.yaml",
      Deno.readTextFileSync(`${ROOT}examples/common.yaml`).replace("request_rate: 16.0", "request_rate: 0.2")
        .replace("num_requests: 1000", "num_requests: 40"),
    ),
  ).summary.headroom.busyFraction;
  assert.ok(idle < light / 2, `${idle} vs ${light}`);
});
