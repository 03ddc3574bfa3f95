/**
 * Counts of inter-token gaps (integer µs → tokens), for the ITL column.
 *
 * A map from gap to count was the obvious structure and the slowest part
 * of a long run: a decoding batch's steps grow by a µs or so as its context
 * grows, so nearly every step looked up a new key in a map of thousands
 * (the map's lookups were 20% of the compressed day of `examples/fleet/`).
 * Here a step appends its gap and count to a log, packed into one double
 * (`gap × 2^21 + count`, exact below 2^53); a full log is sorted (a typed
 * array's native numeric sort) and merged, in place, into sorted arrays of
 * distinct gaps and their counts. (A first version allocated the merged
 * arrays at each merge: their garbage, outside the JS heap, grew the
 * process by 50 MB over a million requests.) Gaps or counts too large to pack (a gap over 35
 * minutes, a million tokens at once) go to a map beside. Counts are
 * integers and every sum of them is exact, so the counts are the map's,
 * whatever the order they came in.
 *
 * @module
 */

/** A packed entry's count field: counts below this pack. */
const COUNT_SPAN = 2 ** 21;
/** Gaps below this pack (2^31 µs: about 35 minutes). */
const GAP_SPAN = 2 ** 31;
/** Entries logged before the log is merged into the sorted counts. */
const LOG_SIZE = 4096;

/** Gap (µs) → tokens that came after such a gap. */
export class GapCounts {
  #log = new Float64Array(LOG_SIZE);
  #logged = 0;
  /** The log's distinct gaps and their counts, while it is merged. */
  readonly #logGaps = new Float64Array(LOG_SIZE);
  readonly #logCounts = new Float64Array(LOG_SIZE);
  /** The sorted distinct gaps merged so far, and their counts: the first `#merged` slots. */
  #gaps = new Float64Array(LOG_SIZE);
  #counts = new Float64Array(LOG_SIZE);
  #merged = 0;
  /** Gaps or counts too large to pack. */
  #large?: Map<number, number>;
  /** The latest gap added and its count not yet logged (consecutive steps often take the same µs). */
  #gap = -1;
  #count = 0;

  /** Counts `n` tokens that came `gap` µs after their previous one (integers, `gap` ≥ 0, `n` ≥ 1). */
  add(gap: number, n: number): void {
    if (gap === this.#gap && this.#count + n < COUNT_SPAN) {
      this.#count += n;
      return;
    }
    this.#flush();
    if (gap < GAP_SPAN && n < COUNT_SPAN) {
      this.#gap = gap;
      this.#count = n;
    } else {
      const large = this.#large ??= new Map();
      large.set(gap, (large.get(gap) ?? 0) + n);
    }
  }

  /** Logs the pending gap. */
  #flush(): void {
    if (this.#gap < 0) return;
    if (this.#logged === LOG_SIZE) this.#merge();
    this.#log[this.#logged++] = this.#gap * COUNT_SPAN + this.#count;
    this.#gap = -1;
    this.#count = 0;
  }

  /**
   * Merges the log into the sorted counts, in place: from the back, so that
   * the merged entries never overwrite one not yet read (a merge allocates
   * nothing but when the counts outgrow their arrays, which then double).
   */
  #merge(): void {
    const m = this.#logged;
    if (m === 0) return;
    const log = this.#log.subarray(0, m);
    log.sort();
    const lg = this.#logGaps;
    const lc = this.#logCounts;
    let d = 0;
    for (let k = 0; k < m; k++) {
      const gap = Math.floor(log[k] / COUNT_SPAN);
      const count = log[k] - gap * COUNT_SPAN;
      if (d > 0 && lg[d - 1] === gap) lc[d - 1] += count;
      else {
        lg[d] = gap;
        lc[d++] = count;
      }
    }
    const n = this.#merged;
    const need = n + d;
    if (need > this.#gaps.length) {
      let size = this.#gaps.length * 2;
      while (size < need) size *= 2;
      const gaps = new Float64Array(size);
      const counts = new Float64Array(size);
      gaps.set(this.#gaps.subarray(0, n));
      counts.set(this.#counts.subarray(0, n));
      this.#gaps = gaps;
      this.#counts = counts;
    }
    const gaps = this.#gaps;
    const counts = this.#counts;
    let i = n - 1;
    let j = d - 1;
    let w = need - 1;
    while (j >= 0) {
      if (i >= 0 && gaps[i] > lg[j]) {
        gaps[w] = gaps[i];
        counts[w--] = counts[i--];
      } else if (i >= 0 && gaps[i] === lg[j]) {
        gaps[w] = gaps[i];
        counts[w--] = counts[i--] + lc[j--];
      } else {
        gaps[w] = lg[j];
        counts[w--] = lc[j--];
      }
    }
    // Each gap already counted left a slot free between the untouched front and the merged back: the back moves up.
    const hole = w - i;
    if (hole > 0) {
      gaps.copyWithin(i + 1, w + 1, need);
      counts.copyWithin(i + 1, w + 1, need);
    }
    this.#merged = need - hole;
    this.#logged = 0;
  }

  /** The counts as a map, by ascending gap (then the large gaps). */
  toMap(): Map<number, number> {
    this.#flush();
    this.#merge();
    const out = new Map<number, number>();
    for (let i = 0; i < this.#merged; i++) out.set(this.#gaps[i], this.#counts[i]);
    if (this.#large) { for (const [gap, n] of this.#large) out.set(gap, (out.get(gap) ?? 0) + n); }
    return out;
  }
}
