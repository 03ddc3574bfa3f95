/**
 * Test fixtures: an engine spec with a simple, exact cost model.
 *
 * @module
 */
import type { StepCostModel } from "../hardware/cost_model.ts";
import type { EngineSpec, SimulationInput, WorkloadSpec } from "./types.ts";

/** A step costs `fixed` ms plus `perToken` ms per token. */
export function linearCost(fixed: number, perToken = 0): StepCostModel {
  return { stepTime: (b) => (fixed + perToken * b.tokens) / 1000 };
}

/** An engine with 1 ms steps and plenty of KV, overridable. */
export function engineSpec(o: Partial<EngineSpec> = {}): EngineSpec {
  return {
    label: "e",
    group: 0,
    cost: linearCost(1),
    kvBlocks: 10_000,
    blockSize: 16,
    maxTokens: 8192,
    maxSeqs: 256,
    chunkedPrefill: true,
    prefixCaching: false,
    mixPrefillDecode: true,
    draftTokens: 0,
    draftAcceptance: 0,
    admission: "greedy",
    role: "both",
    instance: 0,
    tokenTime: 1e-3,
    kvTransferBytesPerToken: 1000,
    linkBandwidth: 1e9,
    linkLatency: 0,
    ...o,
  };
}

/** Workload overrides; fixed lengths may be given as plain numbers. */
export type WorkloadOverrides = Partial<WorkloadSpec> & { inputTokens?: number; outputTokens?: number };

/** A workload of identical requests (100 in, 10 out), all at t = 0 unless overridden. */
export function workload(o: WorkloadOverrides = {}): WorkloadSpec {
  const { inputTokens = 100, outputTokens = 10, ...rest } = o;
  return {
    numRequests: 1,
    input: { dist: "fixed", value: inputTokens },
    output: { dist: "fixed", value: outputTokens },
    arrival: { rate: Infinity, process: "constant", cv: 1 },
    maxConcurrency: 1000,
    seed: 0,
    ...rest,
  };
}

/** A simulation input with `n` identical engines. */
export function input(w: WorkloadOverrides, e: Partial<EngineSpec> = {}, n = 1): SimulationInput {
  return { engines: Array.from({ length: n }, () => engineSpec(e)), workload: workload(w), routing: "least_loaded" };
}
