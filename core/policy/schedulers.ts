/**
 * The scheduler registry: every engine family's scheduler by name. Adding
 * an engine's scheduler is one file under schedulers/ and one line here.
 *
 * @module
 */
import type { Scheduler, SchedulerName } from "./scheduler.ts";
import { genericScheduler } from "./schedulers/generic.ts";
import { lmdeployScheduler } from "./schedulers/lmdeploy.ts";
import { mindieScheduler } from "./schedulers/mindie.ts";
import { sglangScheduler } from "./schedulers/sglang.ts";
import { trtllmMaxUtilizationScheduler, trtllmNoEvictScheduler } from "./schedulers/trtllm.ts";
import { vllmV0Scheduler } from "./schedulers/vllm_v0.ts";
import { vllmV1Scheduler } from "./schedulers/vllm_v1.ts";

/** Every scheduler by name. */
export const SCHEDULERS: Readonly<Record<SchedulerName, Scheduler>> = {
  generic: genericScheduler,
  vllm_v0: vllmV0Scheduler,
  vllm_v1: vllmV1Scheduler,
  sglang: sglangScheduler,
  trtllm_guaranteed_no_evict: trtllmNoEvictScheduler,
  trtllm_max_utilization: trtllmMaxUtilizationScheduler,
  mindie: mindieScheduler,
  lmdeploy: lmdeployScheduler,
};
