/**
 * Test fixtures: engine loads for the routers' tests.
 *
 * @module
 */
import type { RouteRequest } from "./router.ts";

/** A mutable engine load. */
export interface Load {
  index: number;
  outstanding: number;
  active: number;
  routed: number;
  freeKvBlocks: number;
  weight: number;
  queued: number;
  kvUsage: number;
  /** Share of any request's prompt blocks cached here (what `EngineLoad.prefixHit` answers). */
  hit: number;
  prefixHit(r: RouteRequest): number;
}

/** Engine `index`, idle, weight 1, with `fields` set. */
export function load(index: number, fields: Partial<Omit<Load, "index" | "prefixHit">> = {}): Load {
  return {
    index,
    outstanding: 0,
    active: 0,
    routed: 0,
    freeKvBlocks: 0,
    weight: 1,
    queued: 0,
    kvUsage: 0,
    hit: 0,
    prefixHit(this: Load) {
      return this.hit;
    },
    ...fields,
  };
}
