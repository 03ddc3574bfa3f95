/**
 * Assembly: one run from a validated configuration. The engines' specs,
 * cost models, memory sizing and workload are built from the config
 * ({@link assemble}), simulated and summarized ({@link runFiles}), and the
 * run is placed among the strata of the prediction intervals.
 *
 * @module
 */
export { assemble, GENERIC_PATH_NOTICE } from "./assemble.ts";
export type { AssembledGroup, AssembledRun, AssemblyOptions } from "./assemble.ts";
export { workloadOf } from "./workload.ts";
export { describeRun, diagnostics, pools, runFiles, runLoaded, runSources, saturationProbe } from "./run.ts";
export type { RunOptions, RunOutput } from "./run.ts";
export { intervalContext } from "./interval_context.ts";
export { mergeShards, parseShard, runIdentity, SHARD_FORMAT, shardFile, shardInput, unshardable } from "./shard.ts";
export type { Shard, ShardEngine, ShardFile, ShardTable } from "./shard.ts";
export { TABLE_COLUMNS } from "./shard.ts";
