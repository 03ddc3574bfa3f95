/**
 * Workload generation: seeded random streams and arrival processes.
 *
 * @module
 */
export { Rng, RNG_STREAMS } from "./rng.ts";
export type { RngStream } from "./rng.ts";
export { ArrivalClock } from "./arrival.ts";
export type { ArrivalSpec } from "./arrival.ts";
