/**
 * The capacity planner: the cheapest deployment that meets the SLOs at a
 * target load, with its Pareto front.
 *
 * @module
 */
export {
  assemblePlan,
  candidateList,
  deploymentYaml,
  disaggYaml,
  instanceYaml,
  planDeployments,
  planLaunchFiles,
  planShard,
  rateBounds,
} from "./planner.ts";
export { planChartSpec } from "./chart.ts";
export type {
  CandidateId,
  CandidateOutcome,
  FailingCandidate,
  InfeasibleCandidate,
  ParallelKind,
  PlannedCandidate,
  PlanRequest,
  PlanResult,
  PlanShard,
  PlanSlo,
  RateBounds,
  ShardOutcome,
  Topology,
} from "./planner.ts";
