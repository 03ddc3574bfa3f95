/**
 * Workload generation: seeded random streams, arrival processes,
 * token-length distributions and multi-turn sessions.
 *
 * @module
 */
export { Rng, RNG_STREAMS } from "./rng.ts";
export type { RngStream } from "./rng.ts";
export { ArrivalClock } from "./arrival.ts";
export type { ArrivalSpec, RateSegment } from "./arrival.ts";
export { describeLength, drawLength, maxLength, meanLength } from "./lengths.ts";
export type { LengthBin, LengthDist } from "./lengths.ts";
export { SYNTHETIC_PREFIX_BLOCK, SyntheticSource } from "./source.ts";
export type { PrefixIds, RequestClass, RequestDraw, RequestSource, SessionLink } from "./source.ts";
export { describeThink, meanThink, Session, SessionSource } from "./sessions.ts";
export type { SessionSpec, ThinkTime } from "./sessions.ts";
export { formatTraceLine, isTraceError, parseCsvLine, parseJsonLine, splitCsv, TraceSource } from "./trace.ts";
export type { TraceFieldError, TraceRecord, TraceTiming } from "./trace.ts";
