/**
 * Counts of inter-token gaps (integer µs → tokens), for the ITL column.
 *
 * A map from gap to count was the obvious structure and the slowest part
 * of a long run: a decoding batch's steps grow by a µs or so as its context
 * grows, so nearly every step looked up another key (the map's lookups were
 * 20% of the compressed day of `examples/fleet/`). An engine's gaps are
 * its steps' durations, mostly, which drift slowly: the next gap is nearly
 * always within a few hundred µs of the last.
 * So the gaps are counted in pages of 256 µs (typed arrays, made as
 * gaps first fall in them), 64 gaps at a time: a step only writes its gap
 * in a short list (a page written at every step missed the cache, 135 ns a
 * step on the day: 64 engines' pages do not stay in it between their
 * steps). Gaps of a second or more (a request
 * that waited, preempted, between two tokens) go to a map. Earlier versions
 * were slower: sorted arrays searched by bisection, new gaps merged in
 * batches (15% of the day: its engines see 18,000 distinct gaps each); a
 * log of every step's gap, sorted and merged when full (the sorts took 8%
 * of a run); the same allocating the merged arrays (their garbage, outside
 * the JS heap, grew the process by 50 MB). Counts are integers, so the
 * counts are the map's whatever the order they came in.
 *
 * A run's engines share one (the simulator's): with one each, 512 engines
 * of a low-load day kept 149 pages each, 3% full (157 MB for 300,000
 * requests), and counting into them missed the cache at 16% of the run;
 * shared, the run's gaps fall in a few hundred pages that stay in it.
 *
 * @module
 */

/** Gaps per page (a power of two). */
const PAGE = 256;
/** Gaps from here on (about a second) are counted in a map: pages would be sparse. */
const FAR = 2 ** 20;

/** Gaps held before they are counted into the pages. */
const HELD = 64;

/** Gap (µs) → tokens that came after such a gap. */
export class GapCounts {
  /** Page k counts the gaps [k × PAGE, (k + 1) × PAGE); made as gaps first fall in it. */
  readonly #pages: (Float64Array | undefined)[] = [];
  /** Gaps from {@link FAR} on, and any not a whole µs. */
  #far?: Map<number, number>;
  /** Gaps added and not counted yet, and their tokens. */
  readonly #held = new Float64Array(2 * HELD);
  #n = 0;

  /** Counts `n` tokens that came `gap` µs after their previous one. */
  add(gap: number, n: number): void {
    const i = this.#n;
    this.#held[2 * i] = gap;
    this.#held[2 * i + 1] = n;
    this.#n = i + 1;
    if (i + 1 === HELD) this.#count();
  }

  /** Counts the held gaps into the pages (those of one page one after another: one lookup). */
  #count(): void {
    const held = this.#held;
    const pages = this.#pages;
    const end = 2 * this.#n;
    let last = -1;
    let page: Float64Array | undefined;
    for (let i = 0; i < end; i += 2) {
      const gap = held[i];
      const n = held[i + 1];
      if (!(gap >= 0 && gap < FAR && gap === Math.floor(gap))) {
        const far = this.#far ??= new Map();
        far.set(gap, (far.get(gap) ?? 0) + n);
        continue;
      }
      const k = Math.floor(gap / PAGE);
      if (k !== last) {
        // Grown one slot at a time: an index beyond the end would turn the array into a dictionary (a hash lookup
        // at every gap).
        while (pages.length <= k) pages.push(undefined);
        page = pages[k] ?? (pages[k] = new Float64Array(PAGE));
        last = k;
      }
      page![gap - k * PAGE] += n;
    }
    this.#n = 0;
  }

  /** The counts as a map, by ascending gap (then the far ones). */
  toMap(): Map<number, number> {
    this.#count();
    const out = new Map<number, number>();
    const pages = this.#pages;
    for (let k = 0; k < pages.length; k++) {
      const page = pages[k];
      if (page === undefined) continue;
      for (let j = 0; j < PAGE; j++) if (page[j] > 0) out.set(k * PAGE + j, page[j]);
    }
    // A far gap is never a page's (a whole µs below FAR): no key is shared.
    if (this.#far) { for (const [gap, n] of this.#far) out.set(gap, n); }
    return out;
  }
}
