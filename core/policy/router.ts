/**
 * The routing contract: which engine a new request goes to.
 *
 * @module
 */
import type { PrefixIds } from "../workload/source.ts";

/** What a router may read of the request it places. */
export interface RouteRequest {
  /** Prompt tokens. */
  readonly input: number;
  /** Its prompt's content ids, when known (shared prefixes, sessions). */
  readonly prefix?: PrefixIds;
  /** Its conversation, in a session workload: the engine its last turn went to (−1: none yet). */
  readonly session?: { readonly engine: number };
}

/** What a router may read of an engine. */
export interface EngineLoad {
  /** Position in the simulation's engine list. */
  readonly index: number;
  /** Tokens of assigned work not yet processed. */
  readonly outstanding: number;
  /** Requests assigned and not finished. */
  readonly active: number;
  /** When a router last chose it: the run's count of choices then (0: never chosen). */
  readonly routed: number;
  /** KV blocks a new request could take now (free, less any set aside for admitted requests). */
  readonly freeKvBlocks: number;
  /** Seconds per token of the engine (work is weighed by it across unlike engines). */
  readonly weight: number;
  /** Requests routed to it that are not running yet (on their way, or in its waiting queue). */
  readonly queued: number;
  /** Share of its KV blocks that requests hold (cached blocks nobody uses count as free, as vLLM's gauge has it). */
  readonly kvUsage: number;
  /** Share of `r`'s full prompt blocks its prefix cache holds now (0 without a cache). */
  prefixHit(r: RouteRequest): number;
}

/**
 * Picks an engine for each request.
 *
 * Precondition: `candidates` is non-empty and holds only engines that can
 * serve the request. Postcondition: returns one of `candidates`; the same
 * sequence of calls on the same state returns the same choices (seeded).
 */
export interface Router {
  /** The engine for `request` (routers that read nothing of the request ignore it). */
  choose(candidates: readonly EngineLoad[], request?: RouteRequest): EngineLoad;
  /**
   * When the router takes the candidate of least key ({@link argMin}), the
   * key: a caller may then keep a {@link LoadTree} of a pool instead of
   * asking for every request (the same choice).
   */
  readonly key?: (e: EngineLoad) => number;
  /**
   * True when the choice reads nothing of the engines (round-robin, random:
   * its own cursor or seeded draws only). An engine then changes nothing
   * another engine's choice depends on, and the simulator may run each
   * engine ahead of the clock between the requests routed to it.
   */
  readonly blind?: boolean;
  /**
   * True when the choice reads only `active` and `routed` of the engines (and
   * their fixed weights): an engine's steps then change nothing a choice
   * depends on except by finishing requests, and the simulator may run each engine's
   * steps that finish nobody's request ahead of the clock.
   */
  readonly countsRequests?: boolean;
}

/** Returns the candidate with the smallest key, ties to the earliest candidate. */
export function argMin(candidates: readonly EngineLoad[], key: (e: EngineLoad) => number): EngineLoad {
  let best = candidates[0];
  let bestKey = key(best);
  for (let i = 1; i < candidates.length; i++) {
    const k = key(candidates[i]);
    if (k < bestKey) [best, bestKey] = [candidates[i], k];
  }
  return best;
}
