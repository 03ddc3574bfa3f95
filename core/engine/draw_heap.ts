/**
 * Requests drawn ahead of their arrival (sessions' later turns, sent a
 * think time after the turn before finished), earliest first: a binary
 * min-heap by arrival, ties in the order they were drawn, so a run is the
 * same whichever way the heap settles.
 *
 * @module
 */
import type { RequestDraw } from "../workload/source.ts";

/** Drawn requests by arrival time (then draw order). */
export class DrawHeap {
  readonly #draws: RequestDraw[] = [];
  readonly #order: number[] = [];
  #drawn = 0;

  /** Requests held. */
  get size(): number {
    return this.#draws.length;
  }

  /** The earliest arrival held, µs (Infinity when empty). */
  get nextArrival(): number {
    return this.#draws.length > 0 ? this.#draws[0].arrival : Infinity;
  }

  /** Holds `d`. */
  push(d: RequestDraw): void {
    const draws = this.#draws, order = this.#order;
    let i = draws.length;
    const o = this.#drawn++;
    draws.push(d);
    order.push(o);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.#before(d.arrival, o, draws[p].arrival, order[p])) break;
      draws[i] = draws[p];
      order[i] = order[p];
      i = p;
    }
    draws[i] = d;
    order[i] = o;
  }

  /** Takes the earliest. Precondition: not empty. */
  pop(): RequestDraw {
    const draws = this.#draws, order = this.#order;
    const top = draws[0];
    const d = draws.pop()!;
    const o = order.pop()!;
    const n = draws.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        let c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && this.#before(draws[c + 1].arrival, order[c + 1], draws[c].arrival, order[c])) c++;
        if (!this.#before(draws[c].arrival, order[c], d.arrival, o)) break;
        draws[i] = draws[c];
        order[i] = order[c];
        i = c;
      }
      draws[i] = d;
      order[i] = o;
    }
    return top;
  }

  #before(a: number, ao: number, b: number, bo: number): boolean {
    return a < b || (a === b && ao < bo);
  }
}
