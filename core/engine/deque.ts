/**
 * A double-ended queue on a growable ring buffer: O(1) push and pop at both
 * ends (the waiting queue takes preempted requests back at its front).
 *
 * @module
 */

/** A FIFO queue that also accepts items at its front. */
export class Deque<T> {
  #buf: (T | undefined)[] = new Array(16);
  #head = 0;
  #size = 0;

  /** Items held. */
  get size(): number {
    return this.#size;
  }

  #grow(): void {
    const old = this.#buf;
    const buf = new Array<T | undefined>(old.length * 2);
    for (let i = 0; i < this.#size; i++) buf[i] = old[(this.#head + i) % old.length];
    this.#buf = buf;
    this.#head = 0;
  }

  /** Appends at the back. */
  push(x: T): void {
    if (this.#size === this.#buf.length) this.#grow();
    this.#buf[(this.#head + this.#size++) % this.#buf.length] = x;
  }

  /** Inserts at the front. */
  pushFront(x: T): void {
    if (this.#size === this.#buf.length) this.#grow();
    this.#head = (this.#head - 1 + this.#buf.length) % this.#buf.length;
    this.#buf[this.#head] = x;
    this.#size++;
  }

  /** The front item, or undefined. */
  peek(): T | undefined {
    return this.#size ? this.#buf[this.#head] : undefined;
  }

  /** The item `i` places from the front (0: the front), or undefined. */
  at(i: number): T | undefined {
    return i >= 0 && i < this.#size ? this.#buf[(this.#head + i) % this.#buf.length] : undefined;
  }

  /** Replaces the item `i` places from the front (0: the front). Precondition: 0 ≤ i < size. */
  set(i: number, x: T): void {
    if (!(i >= 0 && i < this.#size)) throw new RangeError(`deque: no item at ${i} of ${this.#size}`);
    this.#buf[(this.#head + i) % this.#buf.length] = x;
  }

  /** Removes and returns the front item, or undefined. */
  shift(): T | undefined {
    if (!this.#size) return undefined;
    const x = this.#buf[this.#head];
    this.#buf[this.#head] = undefined;
    this.#head = (this.#head + 1) % this.#buf.length;
    this.#size--;
    return x;
  }
}
