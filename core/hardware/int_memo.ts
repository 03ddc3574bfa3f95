/**
 * Values remembered by a count (a token count, a batch size): in an array
 * for counts below a bound, in a map beyond it.
 *
 * The cost model asks such memos at every engine step (the token-count
 * parts, the LM head, the decode-attention column). As maps, their lookups
 * hashed the key each time: the token-count parts' alone were 5% of a
 * low-load day on 256 engines (cpu profile, line by line).
 *
 * @module
 */

/** Counts below this are held in the array (grown as they come); larger ones, and any other key, in the map. */
const DENSE = 1 << 14;

/** Values by count. */
export class IntMemo<T> {
  readonly #dense: (T | undefined)[] = [];
  readonly #sparse = new Map<number, T>();
  #size = 0;

  /** Values held. */
  get size(): number {
    return this.#size;
  }

  /** The value of `k`, or undefined. */
  get(k: number): T | undefined {
    const d = this.#dense;
    if (k >= 0 && k < DENSE && k === Math.floor(k)) return k < d.length ? d[k] : undefined;
    return this.#sparse.get(k);
  }

  /** Holds `v` for `k`. */
  set(k: number, v: T): void {
    if (k >= 0 && k < DENSE && k === Math.floor(k)) {
      const d = this.#dense;
      // Grown one slot at a time: an index beyond the end would make the array a dictionary.
      while (d.length <= k) d.push(undefined);
      if (d[k] === undefined) this.#size++;
      d[k] = v;
    } else {
      if (!this.#sparse.has(k)) this.#size++;
      this.#sparse.set(k, v);
    }
  }

  /** Forgets every value. */
  clear(): void {
    this.#dense.fill(undefined);
    this.#sparse.clear();
    this.#size = 0;
  }
}
