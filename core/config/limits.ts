/**
 * The one table of limits on every count a user controls outside a run's
 * own `limits:` section (core/config/schema.ts, `DEFAULT_LIMITS`): how many
 * seeds, sweep points, shards, fit entries and iterations a task accepts,
 * how big a document it reads, and how long a line it prints. Each limit is
 * far above any real use and far below what takes hours or gigabytes: past
 * it, a task exits 2 naming the key and the limit, before any work.
 *
 * @module
 */

/** Limits of the tasks (`check`, `plan`, `calibrate`, `compare`, `baseline`) and of their messages. */
export const TASK_LIMITS = {
  /**
   * Seeds per run (scenario `seeds`, `plan --seeds`): each seed is a whole
   * run; 100 seeds give a p99 of the per-seed figures a decision needs.
   */
  seeds: 100,
  /**
   * Points of one sweep (the product of its axes' values): a 1,000-point
   * sweep of a 10,000-request run is minutes; beyond it, split the scenario.
   */
  sweepPoints: 1_000,
  /** Values of one sweep axis. */
  sweepValues: 1_000,
  /**
   * Levenberg–Marquardt or pattern-search iterations of one fit
   * (`calibrate` `iterations:`): fits converge in tens.
   */
  calibrateIterations: 10_000,
  /** Entries of a calibration manifest's `fit:` list, or its measured points. */
  fitEntries: 1_000,
  /**
   * Shards of one `plan --shard I/N` search (and so of a `--merge`): a
   * Kubernetes Indexed Job runs at most 100,000 completions; one shard per
   * candidate is the useful most.
   */
  shards: 10_000,
  /**
   * Worker threads of one `plan --workers N`: each holds a simulator (tens of
   * MB); past a few hundred, threads only contend for the cores.
   */
  workers: 256,
  /** The most candidates a `plan --top N` prints. */
  top: 10_000,
  /**
   * Points of one time series read back (`compare` documents): `sim` writes
   * at most 256 buckets; a report draws at most this many.
   */
  timeseriesPoints: 256,
  /**
   * Instance groups of one run document read back (`compare`): a run has
   * one per instance group of its files; 100,000 of them took 122 s and
   * 3.4 GB to compare with a report.
   */
  groups: 1_000,
  /** Characters of one printed error line: the rest of a user's huge value is cut. */
  messageChars: 2_000,
} as const;

/**
 * `message` cut to {@link TASK_LIMITS.messageChars} characters, with the
 * number of characters left out: a 1 MB path in an input never prints a
 * 2 MB line.
 *
 * @example
 * ```ts
 * import { capMessage } from "./limits.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(capMessage("short"), "short");
 * assert.equal(capMessage("x".repeat(5000)).length < 2100, true);
 * ```
 */
export function capMessage(message: string): string {
  const max = TASK_LIMITS.messageChars;
  return message.length <= max ? message : `${message.slice(0, max)}… (${message.length - max} more characters)`;
}
