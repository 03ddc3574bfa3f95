/**
 * What the step former and step accounting see of an engine: its state
 * and the few operations they call. The engine (engine.ts) implements it;
 * they import only this, so that the engine's files form no import cycle.
 *
 * @module
 */
import type { BatchShape } from "../hardware/roofline.ts";
import type { Admission, Scheduler } from "../policy/mod.ts";
import type { Deque } from "./deque.ts";
import type { GapCounts } from "./gap_counts.ts";
import type { KvLedger } from "./kv_ledger.ts";
import type { LazyDecode } from "./lazy_decode.ts";
import type { Request } from "./request.ts";
import type { EngineSpec } from "./types.ts";

/** One engine's state, as its step former and step accounting use it. */
export interface EngineState {
  readonly spec: EngineSpec;
  /** Its KV blocks. */
  readonly ledger: KvLedger;
  /** The lazily accounted cohort of decoders. */
  readonly lazy: LazyDecode;
  /** Its scheduler, with the configuration's overrides. */
  readonly scheduler: Scheduler;
  /** How requests are admitted (the scheduler's). */
  readonly admission: Admission;
  readonly waiting: Deque<Request>;
  /** The batch, in seat order. */
  readonly running: Request[];
  /** Prefill role: requests whose prompt is done, to hand off. */
  readonly handoff: Request[];
  /** The shape of the step being formed or in flight. */
  readonly shape: BatchShape;
  /** The requests the step being applied finished. */
  readonly finished: Request[];
  /** Inter-token gaps: µs → tokens. */
  readonly itl: GapCounts;
  busy: boolean;
  stepStart: number;
  lastStepEnd: number;
  windowLeft: number;
  outstanding: number;
  /** Seconds of host-tier loads the next step waits for (KV offload). */
  hostLoad: number;
  active: number;
  steps: number;
  busyTime: number;
  preemptions: number;
  served: number;
  batchedSeqs: number;
  peakBatch: number;
  seqTime: number;
  kvTime: number;
  kvCachedTime: number;
  peakKvHeld: number;
  flops: number;
  hbmBytes: number;
  transfers: number;
  transferBytes: number;
  transferTime: number;
  kvWaits: number;
  kvWaitTime: number;
  /** Tokens whose KV a request of these lengths ever holds here. */
  kvTokens(input: number, output: number): number;
  /** `r` joins the end of the batch. */
  seat(r: Request): void;
  /**
   * Gives running request `r` `need` more KV blocks, preempting when short
   * or when fewer than `room` blocks are free (a ROOM_ value).
   */
  grow(r: Request, need: number, room?: number): number;
  /** `r` produced its last token at `now`: it is done and (unless its engine keeps it a round) leaves. */
  finish(r: Request, now: number): boolean;
}
