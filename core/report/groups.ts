/**
 * The compact per-group table printed after the summary.
 *
 * @module
 */
import type { PoolStats } from "../metrics/groups.ts";

const fraction = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : "-");

/**
 * Renders the per-group table (a header, then one row per group): batch_occ is
 * the mean batch over max_num_seqs, kv_occ and peak_kv the mean and peak
 * share of KV blocks held, mfu and mbu the share of peak FLOP/s and HBM
 * bandwidth the steps used, all over the run.
 */
export function formatGroupTable(groups: readonly PoolStats[]): string {
  const head = [
    "group",
    "role",
    "engines",
    "batch_occ",
    "kv_occ",
    "peak_kv",
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
    g.headroom.batchOccupancy.toFixed(3),
    g.headroom.kvOccupancy.toFixed(3),
    g.headroom.kvOccupancyPeak.toFixed(3),
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
  const widths = head.map((h, i) => rows.reduce((m, r) => Math.max(m, r[i].length), h.length));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  return ["======== Instance Groups ========", line(head), ...rows.map(line)].join("\n") + "\n";
}
