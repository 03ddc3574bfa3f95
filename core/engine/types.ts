/**
 * What the simulator takes and gives back. These types know nothing of YAML:
 * `core/config` builds a {@link SimulationInput} from the user's files.
 *
 * @module
 */
import type { StepCostModel } from "../hardware/cost_model.ts";
import type { ArrivalSpec } from "../workload/arrival.ts";

/** One engine: a DP rank of an instance, with its own scheduler and KV cache. */
export interface EngineSpec {
  /** Label for reports: `<group>/<instance>/dp<rank>`. */
  readonly label: string;
  /** Index of its instance group. */
  readonly group: number;
  readonly cost: StepCostModel;
  /** KV blocks (≥ 0). */
  readonly kvBlocks: number;
  /** Tokens per KV block. */
  readonly blockSize: number;
  /** Tokens per step. */
  readonly maxTokens: number;
  /** Sequences per step. */
  readonly maxSeqs: number;
  /** Split long prompts over several steps. */
  readonly chunkedPrefill: boolean;
  /** The model's context length (prompt + output), when known. */
  readonly maxModelLen?: number;
}

/** The client's workload: identical requests (`fixed_length`). */
export interface WorkloadSpec {
  readonly numRequests: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly arrival: ArrivalSpec;
  /** Requests the client keeps in flight at most. */
  readonly maxConcurrency: number;
  readonly seed: number;
}

/** Routing policy names. */
export type RoutingPolicyName = "least_loaded" | "round_robin" | "least_kv" | "random";

/** Called once per engine step when profiling. */
export interface StepRecord {
  readonly engine: number;
  /** µs */
  readonly start: number;
  /** µs */
  readonly duration: number;
  readonly seqs: number;
  readonly prefillTokens: number;
  readonly decodeTokens: number;
  /** KV blocks in use during the step. */
  readonly kvBlocks: number;
  /** Requests waiting in the engine's queue during the step. */
  readonly waiting: number;
}

/** Everything one simulation needs. */
export interface SimulationInput {
  readonly engines: readonly EngineSpec[];
  readonly workload: WorkloadSpec;
  readonly routing: RoutingPolicyName;
}

/** Options that do not change results. */
export interface SimulationOptions {
  /** Receives every step (profiling). */
  onStep?: (s: StepRecord) => void;
  /** Called now and then with (requests done, requests in all). */
  onProgress?: (done: number, total: number) => void;
}

/** Per-request results, indexed by request id. Times in µs; -1 = never. */
export interface RequestTable {
  readonly count: number;
  readonly arrival: Float64Array;
  readonly send: Float64Array;
  readonly firstToken: Float64Array;
  readonly finish: Float64Array;
  readonly input: Int32Array;
  readonly output: Int32Array;
  readonly preemptions: Int32Array;
  /** Engine index, or -1 when unservable. */
  readonly engine: Int32Array;
}

/** Per-engine counters. */
export interface EngineStats {
  readonly label: string;
  readonly group: number;
  readonly kvBlocks: number;
  readonly steps: number;
  /** µs spent in steps. */
  readonly busy: number;
  readonly peakKvBlocks: number;
  readonly preemptions: number;
  readonly served: number;
  /** Σ sequences over steps (mean batch = this / steps). */
  readonly batchedSeqs: number;
  readonly peakBatch: number;
}

/** What one simulation produced. */
export interface SimulationResult {
  readonly requests: RequestTable;
  /** Requests that could never be served, by reason. */
  readonly unservable: ReadonlyMap<string, number>;
  /** Simulated time at the last event, µs. */
  readonly endTime: number;
  readonly engines: readonly EngineStats[];
}
