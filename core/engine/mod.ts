/**
 * The discrete-event serving engine: event queue, requests, paged KV cache,
 * continuous-batching scheduler and the simulation loop.
 *
 * @module
 */
export { simulate } from "./simulator.ts";
export { Engine, unservableCategory, unservableReason } from "./engine.ts";
export { EVENT_PRIORITY, EventQueue } from "./event_queue.ts";
export type { EventKind } from "./event_queue.ts";
export { BlockPool } from "./kv_cache.ts";
export { Deque } from "./deque.ts";
export { Request } from "./request.ts";
export type {
  AdmissionPolicy,
  EngineRole,
  EngineSpec,
  EngineStats,
  RecordedRequest,
  RequestTable,
  RoutingPolicyName,
  SimulationInput,
  SimulationOptions,
  SimulationResult,
  StepRecord,
  TransferRecord,
  WorkloadSpec,
} from "./types.ts";
