/**
 * What the simulator takes and gives back. These types know nothing of YAML:
 * `core/config` builds a {@link SimulationInput} from the user's files.
 *
 * @module
 */
import type { MindieLoop, NewTokenRatio, SchedulerName } from "../policy/scheduler.ts";
import type { AdmissionName } from "../policy/admission.ts";
import type { StepCostModel } from "../hardware/cost_model.ts";
import type { BatchShape } from "../hardware/batch.ts";
import type { ArrivalSpec } from "../workload/arrival.ts";
import type { LengthDist } from "../workload/lengths.ts";
import type { RequestClass, RequestDraw, RequestSource } from "../workload/source.ts";

/** What an engine does: everything (aggregated), or one phase (PD-disaggregated). */
export type EngineRole = "both" | "prefill" | "decode";

/** One engine: a DP rank of an instance, with its own scheduler and KV cache. */
export interface EngineSpec {
  /** Aggregated (`both`), or one side of prefill/decode disaggregation. */
  readonly role: EngineRole;
  /** Instance index inside its group. */
  readonly instance: number;
  /**
   * Seconds per token of a reference decode batch on this engine; routers
   * weigh outstanding work by it, so a twice-as-fast engine takes about
   * twice the load.
   */
  readonly tokenTime: number;
  /** KV bytes moved per prompt token when a prompt is transferred into this engine (its layout). */
  readonly kvTransferBytesPerToken: number;
  /** Device-to-device bandwidth of the engine's devices together, bytes/s after efficiency (Infinity: free). */
  readonly linkBandwidth: number;
  /** Fixed latency of one KV transfer, seconds. */
  readonly linkLatency: number;
  /** Label for reports: `<group>/<instance>/dp<rank>`. */
  readonly label: string;
  /** Index of its instance group. */
  readonly group: number;
  /** Its step-time model. */
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
  /** Reuse cached KV blocks of identical prompt prefixes. */
  readonly prefixCaching: boolean;
  /**
   * The engine family's scheduler (core/policy/schedulers/): what runs
   * next, what is admitted, which request is preempted and how. Its
   * admission and batch formation are replaced by `admission` and
   * `mixPrefillDecode` where those differ (a configuration's overrides).
   * Optional: the generic scheduler.
   */
  readonly scheduler?: SchedulerName;
  /**
   * Mix prefill chunks and decodes in one step (vLLM v1). When false, a step
   * is prefill-only whenever a prefill can run, else decode-only (SGLang's
   * default, vLLM v0).
   */
  readonly mixPrefillDecode: boolean;
  /**
   * How requests are admitted: `greedy` (vLLM) when the blocks of the next
   * chunk are free, preempting the newest request when blocks run out;
   * `guaranteed_no_evict` (TensorRT-LLM's default) only when the blocks of
   * the whole request (prompt + output) can be reserved, never preempting.
   */
  readonly admission: AdmissionPolicy;
  /**
   * Steps a decode-only batch runs per scheduling pass (multi-step
   * scheduling; 1 = schedule every step). Optional: 1 when absent.
   */
  readonly schedulerSteps?: number;
  /**
   * µs between a request's send and its arrival in this engine's queue (API
   * server, tokenization, hand-off between processes). Optional: 0.
   */
  readonly requestDelay?: number;
  /**
   * The most prompt tokens one request computes in one step, when set
   * (vLLM's `long_prefill_token_threshold`; 0 or absent: no cap beyond the
   * budget). Optional.
   */
  readonly prefillChunkCap?: number;
  /**
   * SGLang's server arguments and environment overrides of its admission
   * and retraction constants (`max_prefill_tokens`,
   * `SGLANG_RETRACT_DECODE_STEPS`, …), for SGLang's own loop. Optional:
   * its scheduler's defaults.
   */
  readonly sglangTuning?: Partial<NewTokenRatio>;
  /** MindIE's loop constants (`maxPrefillBatchSize`, the queue delay, …). Optional: its scheduler's defaults. */
  readonly mindieTuning?: Partial<MindieLoop>;
  /** Draft tokens verified per decode step (MTP, EAGLE or n-gram; 0 = no speculation). */
  readonly draftTokens: number;
  /** Probability that a draft is accepted given its predecessors were (the same at every position: MTP). */
  readonly draftAcceptance: number;
  /**
   * Per draft position i (from 0), the probability that draft i is
   * accepted given drafts 0 … i − 1 were (EAGLE, n-gram; as their papers
   * report "n-α"). When given, it replaces {@link draftAcceptance}.
   */
  readonly draftAcceptances?: readonly number[];
  /** The model's context length (prompt + output), when known. */
  readonly maxModelLen?: number;
  /** KV offload: blocks of the host tier the prefix cache's evicted blocks move to (0 or absent: none). */
  readonly hostKvBlocks?: number;
  /** Seconds to load one block from the host tier over the host link (all the engine's devices at once). */
  readonly hostBlockLoadSeconds?: number;
}

/** The client's workload: synthetic (arrival, lengths, classes) or a request source such as a trace. */
export interface WorkloadSpec {
  /** Request classes of a synthetic workload; default: one class of `input` and `output`. */
  readonly classes?: readonly RequestClass[];
  /** Makes a fresh request stream (traces); when set, it replaces arrival, lengths and classes. */
  readonly source?: () => RequestSource;
  /** How to describe the workload, when arrival and lengths do not say it (traces). */
  readonly label?: string;
  /**
   * Multi-turn sessions: the arrival process starts sessions, and each
   * later turn is sent a think time after the previous one finished
   * (core/workload/sessions.ts). `numRequests` counts turns.
   */
  readonly sessions?: SessionSpec;
  /** The public dataset whose length shape the lengths are (core/workload/datasets.ts), when one was named. */
  readonly dataset?: string;
  /** Requests in the run. */
  readonly numRequests: number;
  /** Prompt tokens per request. */
  readonly input: LengthDist;
  /** Output tokens per request. */
  readonly output: LengthDist;
  /** The arrival process. */
  readonly arrival: ArrivalSpec;
  /** Requests the client keeps in flight at most. */
  readonly maxConcurrency: number;
  /** Seed of every random stream. */
  readonly seed: number;
}

/** KV admission policies (core/policy/admission.ts names them). */
export type AdmissionPolicy = AdmissionName;

/** Routing policy names. */
import type { PrefixAwareWeights, RoutingPolicyName } from "../policy/mod.ts";
import type { SessionSpec } from "../workload/sessions.ts";
export type { RoutingPolicyName } from "../policy/mod.ts";

/** Called once per engine step when profiling. */
export interface StepRecord {
  /** Engine index. */
  readonly engine: number;
  /** µs */
  readonly start: number;
  /** µs */
  readonly duration: number;
  /** Sequences in the step. */
  readonly seqs: number;
  /** Prefill tokens in the step. */
  readonly prefillTokens: number;
  /** Decode tokens in the step. */
  readonly decodeTokens: number;
  /** KV blocks held by requests during the step (their own and the cached ones they reference). */
  readonly kvBlocks: number;
  /** Cached KV blocks no request references during the step (reclaimable at once). */
  readonly cachedBlocks: number;
  /**
   * KV blocks set aside for running and incoming requests and not yet taken
   * (guaranteed_no_evict; 0 under greedy). Never negative; with the blocks
   * in use, never more than the engine holds.
   */
  readonly reservedBlocks: number;
  /** Requests waiting in the engine's queue during the step. */
  readonly waiting: number;
  /** Preemptions on the engine so far (before this step ran). */
  readonly preemptions: number;
  /**
   * The step's batch aggregates: the engine's own object, valid only during
   * the call (copy the fields to keep them), so that a hook costs no copy.
   */
  readonly shape: Readonly<BatchShape>;
}

/** Everything one simulation needs. */
export interface SimulationInput {
  /** The engines, in order (indices are positions here). */
  readonly engines: readonly EngineSpec[];
  /** The client's workload. */
  readonly workload: WorkloadSpec;
  /** How requests are placed on engines. */
  readonly routing: RoutingPolicyName;
  /** `prefix_aware` routing's scorer weights (default: llm-d's, prefix 3, queue 2, KV 2). */
  readonly routingWeights?: PrefixAwareWeights;
}

/** A finished KV transfer (profiling). */
export interface TransferRecord {
  /** Request id. */
  readonly request: number;
  /** Sending engine. */
  readonly from: number;
  /** Receiving engine. */
  readonly to: number;
  /** µs */
  readonly start: number;
  /** µs */
  readonly end: number;
  /** Bytes moved. */
  readonly bytes: number;
}

/** Options that do not change results. */
export interface SimulationOptions {
  /** Receives every step (profiling). */
  onStep?: (s: StepRecord) => void;
  /** Receives every finished KV transfer (profiling). */
  onTransfer?: (t: TransferRecord) => void;
  /** Receives every request as it arrives (`--dump_requests`). */
  onArrival?: (r: RequestDraw) => void;
  /** Called now and then with (requests done, requests in all). */
  onProgress?: (done: number, total: number) => void;
  /**
   * Steps after an engine falls back from lazy decode accounting (see
   * core/engine/engine.ts) before its decoders are accounted lazily again
   * (default 16). Infinity accounts every running request at every step:
   * the reference path, slower. Results are the same bit for bit whatever
   * the value.
   */
  lazyDecodeAfter?: number;
  /**
   * Every routing choice scans its candidates with the router (the
   * reference path, slower on large pools) instead of asking the pool's load
   * tree (core/policy/load_tree.ts). The choices are the same.
   */
  routeByScan?: boolean;
  /**
   * The request table keeps every `keepEvery`-th request only (ids 0,
   * k, 2k, …; default 1: all): a long run's memory stays bounded while
   * {@link onRecord} streams every request's figures into its summary.
   */
  keepEvery?: number;
  /**
   * Receives every request's figures as it finishes or is found unservable
   * (a long run's summary). When engines run ahead of the clock (see
   * {@link lockstep}), requests finishing on different engines may come in
   * another order than their finish times'. The object is valid during the
   * call only (the simulator reuses it for a later request): copy what you
   * keep.
   */
  onRecord?: (r: RecordedRequest) => void;
  /**
   * Every engine's steps go through the event queue in time order, never
   * ahead of the clock (the reference path; see core/engine/simulator.ts).
   * Engines run ahead only when the router reads nothing of them
   * (round-robin, random), no client limit binds, nothing is handed between
   * engines (no PD) and neither {@link onStep} nor {@link onTransfer} is
   * given. The results are the same.
   */
  lockstep?: boolean;
}

/** What {@link SimulationOptions.onRecord} receives of a request (µs; -1: never; engine -1: unservable). */
export interface RecordedRequest {
  /** Index in the workload (arrival order). */
  readonly id: number;
  /** Arrival at the client. */
  readonly arrival: number;
  /** Sent by the client. */
  readonly send: number;
  /** First output token. */
  readonly firstToken: number;
  /** Last output token. */
  readonly finish: number;
  /** Prompt tokens. */
  readonly input: number;
  /** Output tokens. */
  readonly output: number;
  /** Times preempted. */
  readonly preemptions: number;
  /** Engine index (-1: unservable). */
  readonly engine: number;
}

/** Per-request results, indexed by request id. Times in µs; -1 = never. */
export interface RequestTable {
  /** Requests in the table. */
  readonly count: number;
  /**
   * The table holds every `stride`-th request of the run (row i is request
   * i × stride; absent: 1, every request): a long run's thinned table
   * (SimulationOptions.keepEvery). Rates read from it scale by it.
   */
  readonly stride?: number;
  /** Arrival at the client, µs. */
  readonly arrival: Float64Array;
  /** Client send time, µs. */
  readonly send: Float64Array;
  /** First output token, µs. */
  readonly firstToken: Float64Array;
  /** Last output token, µs. */
  readonly finish: Float64Array;
  /** Prompt tokens. */
  readonly input: Int32Array;
  /** Output tokens. */
  readonly output: Int32Array;
  /** Times preempted. */
  readonly preemptions: Int32Array;
  /** Engine index, or -1 when unservable. */
  readonly engine: Int32Array;
}

/** Per-engine counters. */
export interface EngineStats {
  /** Engine label. */
  readonly label: string;
  /** Instance-group index. */
  readonly group: number;
  /** KV blocks of the engine. */
  readonly kvBlocks: number;
  /** Steps run. */
  readonly steps: number;
  /** µs spent in steps. */
  readonly busy: number;
  /**
   * Most KV blocks held by requests or set aside for them at once (cached
   * blocks no request references are not counted: they are reclaimable).
   */
  readonly peakKvBlocks: number;
  /** Preemptions on this engine. */
  readonly preemptions: number;
  /** Requests finished here. */
  readonly served: number;
  /** Σ sequences over steps (mean batch = this / steps). */
  readonly batchedSeqs: number;
  /** Largest batch (sequences). */
  readonly peakBatch: number;
  /** Role of the engine. */
  readonly role: EngineRole;
  /** Instance index inside its group. */
  readonly instance: number;
  /** KV transfers sent (prefill) or received (decode). */
  readonly transfers: number;
  /** Bytes of those transfers. */
  readonly transferBytes: number;
  /** Σ µs the transfers took on the wire. */
  readonly transferTime: number;
  /** Requests that waited for KV room before their transfer could start (decode). */
  readonly kvWaits: number;
  /** Σ µs they waited. */
  readonly kvWaitTime: number;
  /** Prefix caching: prompt blocks looked up, and found cached. */
  readonly cachePromptBlocks: number;
  /** Prompt blocks found cached. */
  readonly cacheHitBlocks: number;
  /** Prompt tokens looked up. */
  readonly cachePromptTokens: number;
  /** Prompt tokens found cached (skipped by prefill). */
  readonly cacheHitTokens: number;
  /** Prompt tokens loaded from the host tier (KV offload) instead of computed (absent: no host tier). */
  readonly cacheHostHitTokens?: number;
  /** Blocks the host tier holds at the end (absent: no host tier). */
  readonly hostBlocks?: number;
  /** Σ reference counts of cached blocks at the end (0 when every request left). */
  readonly cacheReferenced: number;
  /** `max_num_seqs` of the engine. */
  readonly maxSeqs: number;
  /** Σ sequences in the batch × step µs. */
  readonly seqTime: number;
  /** Σ KV blocks held by requests or set aside for them × step µs. */
  readonly kvTime: number;
  /** Σ cached KV blocks no request references (reclaimable) × step µs. */
  readonly kvCachedTime: number;
  /** Σ model FLOPs of the steps (0 when the cost model does not count them). */
  readonly flops: number;
  /** Σ HBM bytes of the steps (0 when the cost model does not count them). */
  readonly hbmBytes: number;
  /** Peak FLOP/s of the engine's devices (0 when unknown). */
  readonly peakFlops: number;
  /** Peak HBM bytes/s of the engine's devices (0 when unknown). */
  readonly peakBandwidth: number;
}

/** What one simulation produced. */
export interface SimulationResult {
  /** Per-request results. */
  readonly requests: RequestTable;
  /** Requests that could never be served, by reason. */
  readonly unservable: ReadonlyMap<string, number>;
  /** Simulated time at the last event, µs. */
  readonly endTime: number;
  /** Per-engine counters. */
  readonly engines: readonly EngineStats[];
  /** Inter-token gaps of every engine: µs → how many output tokens came after such a gap. */
  readonly itl: ReadonlyMap<number, number>;
}
