/**
 * What preempting (or retracting) a running request does to it and its
 * engine: its KV is released (its cached prompt blocks indexed so that it
 * may find them again), its reservation given back, its computed tokens
 * dropped (they will be recomputed, generated ones included). Where it
 * waits is its caller's decision: the front of the waiting queue (vLLM,
 * TensorRT-LLM), after the step's admissions (vLLM V0) or the back
 * (SGLang's retraction).
 *
 * @module
 */
import type { EngineState } from "./engine_state.ts";
import { blockKeys } from "./prefix_cache.ts";
import type { Request } from "./request.ts";

/** Takes `victim`'s KV away on `e` (it is no longer in `e.running`; its caller queues it again). */
export function dropKv(e: EngineState, victim: Request): void {
  // From its first preemption it may find its own blocks cached again (KvLedger.release indexes them): it needs
  // their keys, as its first admission computed the others (with that engine's block size).
  if (victim.preemptions === 0 && victim.cacheKeys !== undefined) {
    victim.cacheKeys = blockKeys(victim.prefix, victim.keyBlockSize, victim.input, victim.id);
  }
  e.ledger.release(victim, victim.blocks);
  e.ledger.unreserve(victim);
  e.outstanding += victim.computed;
  victim.blocks = 0;
  victim.computed = 0;
  victim.scheduled = 0;
  victim.preemptions++;
  e.preemptions++;
}
