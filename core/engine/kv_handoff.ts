/**
 * The KV hand-off of prefill/decode disaggregation, on each side: the
 * decode engine takes the blocks of a prompt about to arrive (or makes it
 * wait), the prompt lands there, and the prefill engine frees what it held.
 *
 * @module
 */
import type { Engine } from "./engine.ts";
import type { Request } from "./request.ts";

/**
 * Decode role: `e` takes the KV blocks of `r`'s prompt, about to arrive.
 *
 * @returns false when there is no room yet (the request waits: backpressure)
 */
export function reserveIncoming(e: Engine, r: Request): boolean {
  const s = e.spec;
  const blocks = Math.ceil(r.input / s.blockSize);
  // The admission policy sets aside what it does for the rest of the
  // sequence (guaranteed_no_evict: all of it, so the decode engine never
  // preempts; greedy: nothing).
  const full = e.admission.admitBlocks(blocks, Math.ceil(e.kvTokens(r.input, r.output) / s.blockSize));
  // The engine caches landed prompts' blocks: unreferenced ones are reclaimed, but only for a prompt that fits
  // (as an admission, a transfer that must wait changes nothing).
  if (full > e.freeKvBlocks) return false;
  e.ledger.take(r, blocks, full);
  r.blocks = blocks;
  r.decodeEngine = e.index;
  e.outstanding += r.output - 1;
  e.active++;
  return true;
}

/** Decode role: `r`'s prompt KV has landed on `e`; it decodes from here. */
export function landed(e: Engine, r: Request): void {
  r.computed = r.input;
  e.ready.push(r);
}

/**
 * Prefill role: `r`'s prompt KV has left `e`; its blocks are free. The
 * blocks of its own content leave as a finished request's do (one
 * anonymous run in the LRU, not indexed): only this request could hit
 * them, and it never comes back here (preempted on its decode engine, it
 * is recomputed there).
 */
export function releaseHeld(e: Engine, r: Request): void {
  e.ledger.release(r, r.heldBlocks, true);
  r.heldBlocks = 0;
}
