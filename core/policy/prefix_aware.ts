/**
 * Prefix-aware routing, scored as the llm-d inference scheduler scores its
 * endpoints (Filter → Score → Pick): each scorer gives every candidate a
 * score in [0, 1], the weighted sum picks the engine, ties drawn at random
 * (llm-d's max-score picker). The scorers and their default weights are
 * llm-d's (its documented default profile; Red Hat OpenShift AI's
 * "Configuring scheduler settings" gives queue 2 and prefix cache 3):
 *
 * - **prefix cache** (weight 3): the share of the request's full prompt
 *   blocks the engine's prefix cache holds now, read from the cache itself
 *   (llm-d's precise prefix-cache scorer, fed by the engines' KV events);
 * - **queue** (weight 2): (max − q) / (max − min) of the requests waiting
 *   across the candidates, 1 when they all wait alike;
 * - **KV-cache utilization** (weight 2): 1 − the share of KV blocks in use.
 *
 * @module
 */
import type { Rng } from "../workload/rng.ts";
import type { EngineLoad, Router, RouteRequest } from "./router.ts";

/** Weights of the three scorers. */
export interface PrefixAwareWeights {
  /** Prefix-cache hit share. */
  readonly prefix: number;
  /** Queue depth (normalized across the candidates). */
  readonly queue: number;
  /** Free KV share. */
  readonly kv: number;
}

/** llm-d's default weights: prefix cache 3, queue 2, KV-cache utilization 2. */
export const LLM_D_WEIGHTS: PrefixAwareWeights = { prefix: 3, queue: 2, kv: 2 };

/** Routes to the engine of the highest weighted score. */
export class PrefixAwareRouter implements Router {
  readonly #rng: Rng;
  readonly #w: PrefixAwareWeights;
  /** Candidates tied at the best score (reused). */
  readonly #tied: EngineLoad[] = [];

  /**
   * @param rng the routing stream (ties)
   * @param weights the scorers' weights
   */
  constructor(rng: Rng, weights: PrefixAwareWeights = LLM_D_WEIGHTS) {
    this.#rng = rng;
    this.#w = weights;
  }

  choose(candidates: readonly EngineLoad[], request?: RouteRequest): EngineLoad {
    const w = this.#w;
    let minQ = Infinity, maxQ = -Infinity;
    for (const e of candidates) {
      if (e.queued < minQ) minQ = e.queued;
      if (e.queued > maxQ) maxQ = e.queued;
    }
    const tied = this.#tied;
    tied.length = 0;
    let best = -Infinity;
    for (const e of candidates) {
      const queue = maxQ > minQ ? (maxQ - e.queued) / (maxQ - minQ) : 1;
      const prefix = request && w.prefix > 0 ? e.prefixHit(request) : 0;
      const score = w.prefix * prefix + w.queue * queue + w.kv * (1 - e.kvUsage);
      if (score > best) {
        best = score;
        tied.length = 0;
      }
      if (score === best) tied.push(e);
    }
    return tied.length === 1 ? tied[0] : tied[Math.floor(this.#rng.uniform() * tied.length)];
  }
}
