/**
 * Session affinity: a conversation's turns go to the engine its previous
 * turn went to, where its history is most likely still cached (the sticky
 * sessions of a gateway, llm-d's session-affinity scorer); a first turn, or
 * one whose engine cannot take it, goes least-loaded.
 *
 * @module
 */
import { LeastLoadedRouter } from "./least_loaded.ts";
import { argMin } from "./router.ts";
import type { EngineLoad, Router, RouteRequest } from "./router.ts";

/** Sends a session's turns to one engine; everything else least-loaded. */
export class SessionAffinityRouter implements Router {
  readonly #fallback = new LeastLoadedRouter();

  /** Of the engines it reads only `active`, `routed` and the fixed weight (the session's engine is the request's). */
  readonly countsRequests = true;

  choose(candidates: readonly EngineLoad[], request?: RouteRequest): EngineLoad {
    const last = request?.session?.engine ?? -1;
    if (last >= 0) {
      for (let i = 0; i < candidates.length; i++) if (candidates[i].index === last) return candidates[i];
    }
    return argMin(candidates, this.#fallback.key);
  }
}
