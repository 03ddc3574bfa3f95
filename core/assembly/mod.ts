/**
 * Assembly: one run from a validated configuration. The engines' specs,
 * cost models, memory plans and workload are built from the config
 * ({@link buildPlan}), simulated and summarized ({@link runFiles}), and the
 * run is placed among the strata of the prediction intervals.
 *
 * @module
 */
export { buildPlan, GENERIC_PATH_NOTICE } from "./plan.ts";
export type { GroupPlan, PlanOptions, SimulationPlan } from "./plan.ts";
export { workloadOf } from "./workload.ts";
export { describeRun, diagnostics, pools, runFiles, runLoaded, runSources } from "./run.ts";
export type { RunOptions, RunOutput } from "./run.ts";
export { intervalContext } from "./interval_context.ts";
