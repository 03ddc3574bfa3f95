/**
 * The paged KV cache of one engine, counted in blocks of `block_size`
 * tokens. Without prefix caching blocks are interchangeable, so the pool
 * keeps counts only.
 *
 * Invariant (checked): 0 ≤ used ≤ capacity.
 *
 * @module
 */

/** A pool of KV blocks. */
export class BlockPool {
  /** Blocks in the pool. */
  readonly capacity: number;
  #used = 0;
  #peak = 0;

  /** @param capacity blocks in the pool (≥ 0) */
  constructor(capacity: number) {
    this.capacity = capacity;
  }

  /** Blocks in use. */
  get used(): number {
    return this.#used;
  }

  /** Blocks free. */
  get free(): number {
    return this.capacity - this.#used;
  }

  /** Most blocks ever in use at once. */
  get peak(): number {
    return this.#peak;
  }

  /** Takes `n` blocks. Precondition: n ≤ free. */
  allocate(n: number): void {
    this.#used += n;
    if (this.#used > this.capacity) {
      throw new RangeError(`KV pool over capacity: ${this.#used} of ${this.capacity} blocks`);
    }
    if (this.#used > this.#peak) this.#peak = this.#used;
  }

  /** Returns `n` blocks. Precondition: n ≤ used. */
  release(n: number): void {
    this.#used -= n;
    if (this.#used < 0) throw new RangeError(`KV pool under zero: ${this.#used} blocks`);
  }
}
