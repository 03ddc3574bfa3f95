/**
 * The simulation's event queue: a binary min-heap ordered by (time,
 * priority, sequence number). Time is integer microseconds; same-time events
 * run in the order of the {@link EVENT_PRIORITY} table, then in the order
 * they were pushed, so a run is fully deterministic.
 *
 * @module
 */

/** Same-time ordering: lower runs first. */
export const EVENT_PRIORITY = {
  /** An engine step ends: tokens land, requests finish, KV blocks free. */
  STEP_END: 0,
  /** A prefill → decode KV transfer completes (target: transfer id). */
  TRANSFER_END: 1,
  /** A request arrives at the client. */
  ARRIVAL: 2,
  /** A sent request reaches its engine's queue after the per-request latency (target: engine). */
  REQUEST_IN: 3,
  /** An idle engine looks at its queue; last, so that every same-time arrival joins the step. */
  ENGINE_WAKE: 4,
} as const;

/** An event kind. */
export type EventKind = keyof typeof EVENT_PRIORITY;

/** A scheduled event. `target` is the engine index (or unused). */
export interface SimEvent {
  readonly time: number;
  readonly priority: number;
  readonly seq: number;
  readonly kind: EventKind;
  readonly target: number;
  /** For TRANSFER_END: the transfer's version when planned (stale ones are ignored). */
  readonly version: number;
}

function before(a: SimEvent, b: SimEvent): boolean {
  if (a.time !== b.time) return a.time < b.time;
  if (a.priority !== b.priority) return a.priority < b.priority;
  return a.seq < b.seq;
}

/** A min-heap of events. */
export class EventQueue {
  #heap: SimEvent[] = [];
  #seq = 0;

  /** Events waiting. */
  get size(): number {
    return this.#heap.length;
  }

  /**
   * Schedules an event.
   *
   * @param time µs, an integer not before the current time
   * @param kind the event kind (sets its same-time priority)
   * @param target the engine index the event is for
   */
  push(time: number, kind: EventKind, target = -1, version = 0): void {
    const e: SimEvent = { time, priority: EVENT_PRIORITY[kind], seq: this.#seq++, kind, target, version };
    const h = this.#heap;
    let i = h.length;
    h.push(e);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(e, h[p])) break;
      h[i] = h[p];
      i = p;
    }
    h[i] = e;
  }

  /** Removes and returns the earliest event, or undefined when empty. */
  pop(): SimEvent | undefined {
    const h = this.#heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      let i = 0;
      const n = h.length;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && before(h[r], h[l]) ? r : l;
        if (!before(h[c], last)) break;
        h[i] = h[c];
        i = c;
      }
      h[i] = last;
    }
    return top;
  }
}
