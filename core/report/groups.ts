/**
 * The compact per-group table printed after the summary.
 *
 * @module
 */
import type { PoolStats } from "../metrics/groups.ts";

/** Renders the per-group table (a header, then one row per group). */
export function formatGroupTable(groups: readonly PoolStats[]): string {
  const head = [
    "group",
    "role",
    "engines",
    "busy",
    "mean_batch",
    "peak_batch",
    "peak_kv",
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
    g.busyFraction.toFixed(3),
    g.meanBatch.toFixed(1),
    String(g.peakBatch),
    g.peakKvFraction.toFixed(3),
    String(g.preemptions),
    String(g.transfers),
    (g.transferBytes / 1e9).toFixed(3),
    g.meanTransferSeconds.toFixed(3),
    String(g.kvWaits),
    g.meanKvWaitSeconds.toFixed(3),
    String(g.served),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  return ["======== Instance Groups ========", line(head), ...rows.map(line)].join("\n") + "\n";
}
