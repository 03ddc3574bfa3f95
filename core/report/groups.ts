/**
 * The compact per-group table printed after the summary.
 *
 * @module
 */
import type { PoolStats } from "../metrics/groups.ts";
import { alignColumns } from "../text/columns.ts";

const fraction = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : "-");

/**
 * Renders the per-group table (a header, then one row per group): batch_occ is
 * the mean batch over max_num_seqs, kv_occ and peak_kv the mean and peak
 * share of KV blocks held, mfu and mbu the share of peak FLOP/s and HBM
 * bandwidth the steps used, all over the run.
 *
 * @example One row per group
 * ```ts
 * import { formatGroupTable, pools, runSources, YamlSource } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const out = runSources([new YamlSource("i.yaml", i)], new YamlSource("c.yaml", c));
 * const [title, head, row] = formatGroupTable(pools(out).groups).split("\n");
 * assert.equal(title, "======== Instance Groups ========");
 * assert.match(head, /^group +role +engines/);
 * assert.match(row, /^group0 +both +1 .* 4$/);
 * ```
 */
export function formatGroupTable(groups: readonly PoolStats[]): string {
  const head = [
    "group",
    "role",
    "engines",
    "busy",
    "batch_occ",
    "kv_occ",
    "peak_kv",
    "kv_cached",
    "mfu",
    "mbu",
    "mean_batch",
    "peak_batch",
    "preemptions",
    "kv_transfers",
    "transfer_GB",
    "mean_transfer(s)",
    "kv_waits",
    "mean_kv_wait(s)",
    "served",
  ];
  const rows = groups.map((g) => [
    g.group,
    g.role,
    String(g.engines),
    g.headroom.busyFraction.toFixed(3),
    g.headroom.batchOccupancy.toFixed(3),
    g.headroom.kvOccupancy.toFixed(3),
    g.headroom.kvOccupancyPeak.toFixed(3),
    g.headroom.kvCached.toFixed(3),
    fraction(g.headroom.mfu),
    fraction(g.headroom.mbu),
    g.meanBatch.toFixed(1),
    String(g.peakBatch),
    String(g.preemptions),
    String(g.transfers),
    (g.transferBytes / 1e9).toFixed(3),
    g.meanTransferSeconds.toFixed(3),
    String(g.kvWaits),
    g.meanKvWaitSeconds.toFixed(3),
    String(g.served),
  ]);
  const lines = alignColumns([head, ...rows], { align: (i) => (i < 2 ? "left" : "right") });
  return ["======== Instance Groups ========", ...lines].join("\n") + "\n";
}
