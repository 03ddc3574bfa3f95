/**
 * What preempting (or retracting) a running request does to it and its
 * engine: its KV is released (its cached prompt blocks indexed so that it
 * may find them again), its reservation given back, its computed tokens
 * dropped (they will be recomputed, generated ones included) and it goes
 * back to the waiting queue: to the front (vLLM, TensorRT-LLM) or to the
 * back (SGLang's retraction).
 *
 * @module
 */
import type { EngineState } from "./engine_state.ts";
import { blockKeys } from "./prefix_cache.ts";
import type { Request } from "./request.ts";

/** Takes `victim`'s KV away on `e` (it is no longer in `e.running`) and queues it again, at the front or the back. */
export function dropKv(e: EngineState, victim: Request, toBack = false): void {
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
  if (toBack) e.waiting.push(victim);
  else e.waiting.pushFront(victim);
}
