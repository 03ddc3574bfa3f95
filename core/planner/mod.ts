/**
 * The capacity planner: the cheapest deployment that meets the SLOs at a
 * target load, with its Pareto front.
 *
 * @module
 */
export { instanceRateBound, instanceYaml, planDeployments } from "./planner.ts";
export type {
  CandidateOutcome,
  FailingCandidate,
  InfeasibleCandidate,
  PlannedCandidate,
  PlanRequest,
  PlanResult,
  PlanSlo,
} from "./planner.ts";
