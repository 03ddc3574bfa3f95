/**
 * A run's place among the strata of the held-out errors
 * (core/metrics/intervals.ts): its engine, the vendor of its devices and
 * its model's architecture. The scenario runner and the reports ask it of a
 * run; a run that names no engine takes the generic path, which no
 * held-out row grades.
 *
 * @module
 */
import { vendorOf } from "../metrics/intervals.ts";
import type { IntervalContext } from "../metrics/intervals.ts";
import type { RunOutput } from "./run.ts";

/** A run's place among the strata, or undefined for the generic path. */
export function intervalContext(out: RunOutput): IntervalContext | undefined {
  const engine = out.assembled.config.common.serving_config.engine;
  if (engine === undefined) return undefined;
  return {
    engine,
    vendor: vendorOf(out.assembled.groups[0].device.name),
    architecture: out.assembled.model.moe ? "MoE" : "dense",
  };
}
