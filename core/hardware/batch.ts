/**
 * What a step's time depends on: a few aggregates of its batch, and where
 * the time goes.
 *
 * @module
 */

/** The aggregates of one engine step that its time depends on. */
export interface BatchShape {
  /** Tokens processed this step (prefill chunk tokens + decode tokens). */
  tokens: number;
  /** Sequences in the batch. */
  seqs: number;
  /** Sequences that produce a token this step (need logits). */
  logitsRows: number;
  /** Tokens of prefill chunks. */
  prefillTokens: number;
  /** Σ over prefill chunks of query–key pairs (causal: new × (past + (new + 1) / 2)). */
  prefillPairs: number;
  /** Σ over prefill chunks of context length read (past + new). */
  prefillContext: number;
  /** Decoding sequences. */
  decodeSeqs: number;
  /** Query tokens of the decoding sequences: one each, 1 + drafts with MTP. */
  decodeTokens: number;
  /** Σ over decoding sequences of context length read (KV tokens, the new ones included). */
  decodeContext: number;
  /**
   * Share of the fixed host step cost this step pays: 1 (or absent) when the
   * engine scheduled it, 0 for the later steps of a multi-step window.
   */
  hostShare?: number;
}

/** An empty batch shape, to fill in. */
export function emptyBatch(): BatchShape {
  return {
    tokens: 0,
    seqs: 0,
    logitsRows: 0,
    prefillTokens: 0,
    prefillPairs: 0,
    prefillContext: 0,
    decodeSeqs: 0,
    decodeTokens: 0,
    decodeContext: 0,
  };
}

/** A decode-only step: `seqs` sequences with `context` tokens of KV each. */
export function decodeBatch(seqs: number, context: number): BatchShape {
  return {
    ...emptyBatch(),
    tokens: seqs,
    seqs,
    logitsRows: seqs,
    decodeSeqs: seqs,
    decodeTokens: seqs,
    decodeContext: seqs * context,
  };
}

/** A prefill-only step: one whole prompt of `tokens` tokens. */
export function prefillBatch(tokens: number): BatchShape {
  return {
    ...emptyBatch(),
    tokens,
    seqs: 1,
    logitsRows: 1,
    prefillTokens: tokens,
    prefillPairs: (tokens * (tokens + 1)) / 2,
    prefillContext: tokens,
  };
}

/** Time of the layer blocks by kind, seconds (accumulated per layer). */
export interface TimeParts {
  /** Projection, MLP and expert GEMMs. */
  linear: number;
  /** Attention kernels over the KV cache. */
  attention: number;
  /** Norms, rotary embedding, activation, KV-cache writes. */
  elementwise: number;
  /** Collectives: TP all-reduces, all-gathers, EP all-to-alls. */
  communication: number;
}

/** Where a step's time goes, seconds; the fields sum to `total`. */
export interface StepBreakdown extends TimeParts {
  /** LM head GEMM, logits gather and sampling. */
  lmHead: number;
  /** Host: step overhead and (optionally) the host-to-device input copy. */
  host: number;
  /** The sum of the above. */
  total: number;
}
