/**
 * Measured kernel tables: the batch- and shape-dependent efficiencies that
 * NVIDIA's AIConfigurator measured for each engine's own kernels (GEMMs,
 * decode and prefill attention, custom all-reduce, MoE routed experts, MLA
 * decode and prefill attention), fitted into
 * `data/aiconfigurator/*.json` by `tools/aiconfigurator/fit.ts` (Apache-2.0
 * data, commit 095f58a5; figures only). Where a table covers an operator,
 * its measured time replaces the roofline with constant efficiencies: a
 * GEMM at M = 4 then streams its weights at the 0.2–0.8 of HBM bandwidth
 * the engine's kernel really reaches, and a decode-attention kernel at TP8
 * (one KV head per GPU) reads its KV cache at the 0.05–0.4 of bandwidth it
 * reaches at small batch, not at 0.9.
 *
 * Tables are used only for the engine a deployment names
 * (`serving_config.engine`), so runs without an engine keep the upstream
 * cost model unchanged. Which engine's tables stand for which engine is
 * the engine profile's choice (`ProfileRecord.kernels`).
 *
 * @module
 */
import a100 from "./data/aiconfigurator/a100_sxm.json" with { type: "json" };
import b200 from "./data/aiconfigurator/b200_sxm.json" with { type: "json" };
import h100 from "./data/aiconfigurator/h100_sxm.json" with { type: "json" };
import h200 from "./data/aiconfigurator/h200_sxm.json" with { type: "json" };
import l40s from "./data/aiconfigurator/l40s.json" with { type: "json" };

/** Engines whose kernels AIConfigurator measured and the tables hold. */
export type KernelTableEngine = "trtllm" | "vllm";

type Grid = readonly (readonly (number | null)[])[];

interface GemmTable {
  readonly engine: string;
  readonly version: string;
  readonly dtype: string;
  readonly m: readonly number[];
  readonly compute: Grid;
}

interface DecodeShape {
  readonly kvHeads: number;
  /** Cells above 1.0 of HBM bandwidth (L2-resident benchmark artefacts): the grid is not trusted, the fit is. */
  readonly cellsAboveHbm?: number;
  readonly fit: { readonly overheadUs: number; readonly hbmFraction: number };
  readonly hbmFraction: Grid;
}

interface DecodeTable {
  readonly engine: string;
  readonly version: string;
  readonly kvDtype: string;
  readonly batch: readonly number[];
  readonly context: readonly number[];
  readonly shapes: readonly DecodeShape[];
}

interface PrefillShape {
  readonly kvHeads: number;
  readonly computeFraction: Grid;
}

interface PrefillTable {
  readonly engine: string;
  readonly version: string;
  readonly seqLen: readonly number[];
  readonly batch: readonly number[];
  readonly shapes: readonly PrefillShape[];
}

interface AllReduceTable {
  readonly impl: string;
  readonly version: string;
  readonly bytes: readonly number[];
  readonly tables: readonly {
    readonly gpus: number;
    readonly fit: { readonly latencyUs: number; readonly algBandwidthGBs: number };
    readonly latencyUs: readonly (number | null)[];
  }[];
}

interface MoeTable {
  readonly engine: string;
  readonly version: string;
  readonly dtype: string;
  readonly tokens: readonly number[];
  /** `"tp<moe_tp>ep<moe_ep>"` per row of each shape's grid. */
  readonly splits: readonly string[];
  readonly shapes: readonly {
    readonly hidden: number;
    readonly inter: number;
    readonly experts: number;
    readonly topK: number;
    readonly fraction: Grid;
  }[];
}

interface MlaDecodeTable {
  readonly engine: string;
  readonly version: string;
  readonly kvDtype: string;
  readonly heads: readonly number[];
  readonly batch: readonly number[];
  readonly context: readonly number[];
  readonly fit: readonly ({ readonly overheadUs: number; readonly hbmFraction: number } | null)[];
  readonly hbmFraction: readonly Grid[];
}

interface MlaPrefillTable {
  readonly engine: string;
  readonly version: string;
  readonly heads: readonly number[];
  readonly seqLen: readonly number[];
  readonly computeFraction: Grid;
}

/**
 * A MoE layer's expert computation on one rank: the model's hidden size,
 * per-expert intermediate (before the MoE TP split), experts, top-k, and
 * the MoE TP and EP degrees.
 */
export interface MoeShape {
  /** Hidden size. */
  readonly hidden: number;
  /** Per-expert intermediate size of the whole model (before the MoE TP split). */
  readonly inter: number;
  /** Routed experts. */
  readonly experts: number;
  /** Experts per token. */
  readonly topK: number;
  /** MoE tensor-parallel degree (each expert's intermediate split this many ways). */
  readonly moeTp: number;
  /** Expert-parallel degree. */
  readonly ep: number;
}

/** A MoE shape's nearest measured row, and the fractions interpolated for it by token count. */
interface MoeRow {
  readonly tokens: readonly number[];
  readonly fraction: readonly (number | null)[];
  readonly memo: Map<number, number>;
}

/** A GEMM shape's nearest measured row, and the times computed for it by M. */
interface GemmShape {
  readonly table: GemmTable;
  readonly row: number;
  readonly memo: Map<number, number>;
}

/** One GPU's file, as `tools/aiconfigurator/fit.ts` writes it (see the folder's README). */
interface AicFile {
  readonly device: string;
  readonly peaks: { readonly bf16: number; readonly fp8: number; readonly hbmBandwidth: number };
  readonly gemmShapes: readonly string[];
  readonly gemm: readonly GemmTable[];
  readonly decodeAttention: readonly DecodeTable[];
  readonly prefillAttention: readonly PrefillTable[];
  readonly allReduce: readonly AllReduceTable[];
  readonly moe?: readonly MoeTable[];
  readonly mlaDecode?: readonly MlaDecodeTable[];
  readonly mlaPrefill?: readonly MlaPrefillTable[];
}

/** The files by catalog device name (a Map: a device named like an Object property finds nothing). */
const FILES: ReadonlyMap<string, AicFile> = new Map(
  ([a100, b200, h100, h200, l40s] as unknown as AicFile[]).map((f) => [f.device, f]),
);

/**
 * Linear interpolation of `ys` over `xs` at `x` in log x, between the
 * measured (non-null) points around it, clamped to the first and last
 * measured points (efficiencies level off beyond the measured range).
 */
function interpLog(xs: readonly number[], ys: readonly (number | null)[], x: number): number | undefined {
  let lo = -1;
  for (let i = 0; i < xs.length; i++) {
    const y = ys[i];
    if (y === null || y === undefined) continue;
    if (xs[i] >= x) {
      if (lo < 0 || xs[i] === x) return y;
      const t = Math.log(x / xs[lo]) / Math.log(xs[i] / xs[lo]);
      return ys[lo]! + t * (y - ys[lo]!);
    }
    lo = i;
  }
  return lo < 0 ? undefined : ys[lo]!;
}

/** Bilinear interpolation over a grid `g[row][col]` in log row and log column; undefined where unmeasured. */
function interpGrid(
  rows: readonly number[],
  cols: readonly number[],
  g: Grid,
  r: number,
  c: number,
): number | undefined {
  const i = bracket(rows, r);
  const a = interpLog(cols, g[i[0]], c);
  const b = interpLog(cols, g[i[1]], c);
  if (a === undefined || b === undefined) return undefined;
  if (i[0] === i[1]) return a;
  const t = Math.log(Math.min(Math.max(r, rows[i[0]]), rows[i[1]]) / rows[i[0]]) / Math.log(rows[i[1]] / rows[i[0]]);
  return a + t * (b - a);
}

/** Indices of the grid points around x (equal at the ends). */
function bracket(xs: readonly number[], x: number): [number, number] {
  if (x <= xs[0]) return [0, 0];
  for (let i = 1; i < xs.length; i++) if (x <= xs[i]) return [i - 1, i];
  return [xs.length - 1, xs.length - 1];
}

/** The measured layouts with the fewest and the most KV heads per GPU. */
function headLayouts<T extends { readonly kvHeads: number }>(shapes: readonly T[]): [T, T] {
  return [
    shapes.reduce((a, s) => (s.kvHeads < a.kvHeads ? s : a)),
    shapes.reduce((a, s) => (s.kvHeads > a.kvHeads ? s : a)),
  ];
}

/** Weight of the larger of two KV-head layouts (1 and 8 per GPU) at `kvHeads`, in log scale. */
function headWeight(kvHeads: number, small: number, large: number): number {
  if (kvHeads <= small) return 0;
  if (kvHeads >= large) return 1;
  return Math.log(kvHeads / small) / Math.log(large / small);
}

/**
 * One engine's measured kernels on one GPU. Every method returns seconds,
 * or undefined where the tables do not cover the case (another dtype, an
 * unmeasured cell): the caller then uses the roofline.
 */
export class KernelTables {
  /** The engine whose kernels were measured, and its version. */
  readonly label: string;
  #file: AicFile;
  #gemm = new Map<string, GemmTable>();
  #shapes: { n: number; k: number }[];
  #decode = new Map<string, DecodeTable>();
  #prefill?: PrefillTable;
  #allReduce?: AllReduceTable;
  #moe = new Map<string, MoeTable>();
  #mlaDecode = new Map<string, MlaDecodeTable>();
  #mlaPrefill?: MlaPrefillTable;

  private constructor(file: AicFile, engine: KernelTableEngine) {
    this.#file = file;
    const versions = new Set<string>();
    for (const g of file.gemm) {
      if (g.engine === engine) {
        this.#gemm.set(g.dtype, g);
        versions.add(g.version);
      }
    }
    this.#shapes = file.gemmShapes.map((s) => {
      const [n, k] = s.split(" ")[1].split("x").map(Number);
      return { n, k };
    });
    for (const d of file.decodeAttention) if (d.engine === engine) this.#decode.set(d.kvDtype, d);
    this.#prefill = file.prefillAttention.find((p) => p.engine === engine);
    this.#allReduce = file.allReduce.find((a) => a.impl === `${engine}-custom`);
    for (const m of file.moe ?? []) if (m.engine === engine) this.#moe.set(m.dtype, m);
    // MLA: where vLLM's attention-only MLA kernels were not measured (B200), SGLang's stand in.
    const mlaEngine = (file.mlaDecode ?? []).some((d) => d.engine === engine) ? engine : "sglang";
    for (const d of file.mlaDecode ?? []) if (d.engine === mlaEngine) this.#mlaDecode.set(d.kvDtype, d);
    this.#mlaPrefill = (file.mlaPrefill ?? []).find((p) => p.engine === mlaEngine);
    this.label = `AIConfigurator ${engine} ${[...versions].join("/")} kernel tables`;
  }

  /** The tables of `engine` on catalog device `device`, if AIConfigurator measured that GPU and engine. */
  static of(device: string, engine: KernelTableEngine): KernelTables | undefined {
    const f = FILES.get(device);
    if (!f || !f.gemm.some((g) => g.engine === engine)) return undefined;
    return new KernelTables(f, engine);
  }

  /**
   * A dense GEMM (M × K)·(K × N) of `dtype`: the FLOPs at the fraction of
   * peak the engine's GEMM reaches at this M for the nearest measured
   * shape (in log N and log K; the tables hold the Llama-3.1-8B/70B linear
   * layers at TP1 and TP8).
   */
  gemm(m: number, n: number, k: number, dtype: "bf16" | "fp8"): number | undefined {
    const g = this.#gemmShape(n, k, dtype);
    if (!g) return undefined;
    // Steps repeat batch sizes: each shape keeps the times it has computed, by M.
    let t = g.memo.get(m);
    if (t === undefined) {
      const frac = interpLog(g.table.m, g.table.compute[g.row], Math.max(1, m));
      t = frac !== undefined && frac > 0 ? (2 * m * n * k) / (frac * this.#file.peaks[dtype]) : NaN;
      g.memo.set(m, t);
    }
    return Number.isNaN(t) ? undefined : t;
  }

  #shapeCache = { bf16: new Map<number, GemmShape | null>(), fp8: new Map<number, GemmShape | null>() };

  /** The measured row nearest to N × K (in log N and log K) in the `dtype` table, found once per shape. */
  #gemmShape(n: number, k: number, dtype: "bf16" | "fp8") {
    const cache = this.#shapeCache[dtype];
    const key = n * 4_294_967_296 + k; // exact for N, K below 2^21
    let g = cache.get(key);
    if (g === undefined) {
      const table = this.#gemm.get(dtype);
      let row = 0;
      let dist = Infinity;
      for (let i = 0; i < this.#shapes.length; i++) {
        const s = this.#shapes[i];
        const d = Math.log(s.n / n) ** 2 + Math.log(s.k / k) ** 2;
        if (d < dist) {
          dist = d;
          row = i;
        }
      }
      g = table ? { table, row, memo: new Map() } : null;
      cache.set(key, g);
    }
    return g;
  }

  /**
   * One layer's decode attention: `seqs` sequences with `context` KV
   * tokens each on average, `kvHeads` KV heads on the device, reading
   * `bytes` of KV cache (`kvBytes` per value). The measured fraction of
   * HBM bandwidth at that batch and context, between the one-KV-head and
   * eight-KV-head layouts. Beyond the measured cells (very large batch ×
   * context) the nearest measured fraction holds; a row with no cell at
   * all falls back to the fitted fixed cost + bandwidth.
   */
  decodeAttention(seqs: number, context: number, kvHeads: number, kvBytes: number, bytes: number): number | undefined {
    const t = this.#decode.get(kvBytes < 2 ? "fp8" : "bf16") ?? this.#decode.get("bf16");
    if (!t || t.shapes.length === 0) return undefined;
    const [small, large] = headLayouts(t.shapes);
    const hbm = this.#file.peaks.hbmBandwidth;
    const time = (s: DecodeShape) => {
      const f = s.cellsAboveHbm ? undefined : interpGrid(t.context, t.batch, s.hbmFraction, context, seqs);
      return f !== undefined && f > 0 ? bytes / (f * hbm) : s.fit.overheadUs * 1e-6 + bytes / (s.fit.hbmFraction * hbm);
    };
    const w = headWeight(kvHeads, small.kvHeads, large.kvHeads);
    return w === 0 ? time(small) : w === 1 ? time(large) : (1 - w) * time(small) + w * time(large);
  }

  /**
   * One layer's causal prefill attention of `flops` over sequences of
   * about `seqLen` tokens with `kvHeads` KV heads on the device: the
   * measured fraction of the BF16 peak at that length (batch 1).
   */
  prefillAttention(flops: number, seqLen: number, kvHeads: number): number | undefined {
    const t = this.#prefill;
    if (!t || t.shapes.length === 0) return undefined;
    const [small, large] = headLayouts(t.shapes);
    const frac = (s: PrefillShape) => interpGrid(t.seqLen, t.batch, s.computeFraction, seqLen, 1);
    const fs = frac(small);
    const fl = frac(large);
    if (fs === undefined || fl === undefined) return undefined;
    const w = headWeight(kvHeads, small.kvHeads, large.kvHeads);
    const f = (1 - w) * fs + w * fl;
    return f > 0 ? flops / (f * this.#file.peaks.bf16) : undefined;
  }

  /**
   * One rank's routed-expert computation of a MoE layer (gate+up GEMM,
   * activation, down GEMM): `tokens` tokens enter the MoE group and make
   * `pairs` token-expert pairs on this rank over `touched` distinct local
   * experts, with `dtype` weights. The roofline max(touched experts' weight
   * bytes / HBM, FLOPs / peak) divided by the fraction of it the engine's
   * MoE kernel reached at that token count (balanced routing), for the
   * nearest measured shape (log hidden, intermediate, experts, top-k) and
   * MoE TP × EP split (log TP, log EP). Undefined when the tables hold no
   * MoE of that dtype.
   */
  moe(shape: MoeShape, tokens: number, touched: number, pairs: number, dtype: "bf16" | "fp8"): number | undefined {
    const row = this.#moeRow(shape, dtype);
    if (!row) return undefined;
    let f = row.memo.get(tokens);
    if (f === undefined) {
      f = interpLog(row.tokens, row.fraction, Math.max(1, tokens)) ?? NaN;
      row.memo.set(tokens, f);
    }
    if (!(f > 0)) return undefined;
    const ffn = 3 * shape.hidden * (shape.inter / shape.moeTp);
    const memory = (touched * ffn * (dtype === "fp8" ? 1 : 2)) / this.#file.peaks.hbmBandwidth;
    const compute = (2 * pairs * ffn) / this.#file.peaks[dtype];
    return (memory > compute ? memory : compute) / f;
  }

  #moeRows = new WeakMap<MoeShape, { bf16?: MoeRow | null; fp8?: MoeRow | null }>();

  /** The measured fractions nearest to a MoE shape and split, found once per shape object. */
  #moeRow(shape: MoeShape, dtype: "bf16" | "fp8"): MoeRow | null {
    let e = this.#moeRows.get(shape);
    if (!e) this.#moeRows.set(shape, e = {});
    let r = e[dtype];
    if (r === undefined) {
      r = null;
      const t = this.#moe.get(dtype);
      if (t && t.shapes.length) {
        const l = (a: number, b: number) => Math.log(a / b) ** 2;
        let best = t.shapes[0], dist = Infinity;
        for (const s of t.shapes) {
          const d = l(s.hidden, shape.hidden) + l(s.inter, shape.inter) + l(s.experts, shape.experts) +
            l(s.topK, shape.topK);
          if (d < dist) [best, dist] = [s, d];
        }
        let split = 0, sd = Infinity;
        t.splits.forEach((name, i) => {
          const [tp, ep] = name.slice(2).split("ep").map(Number);
          const d = l(tp, shape.moeTp) + l(ep, shape.ep);
          if (d < sd && best.fraction[i].some((x) => x !== null)) [split, sd] = [i, d];
        });
        r = { tokens: t.tokens, fraction: best.fraction[split], memo: new Map() };
      }
      e[dtype] = r;
    }
    return r;
  }

  /**
   * One layer's absorbed MLA decode attention (FlashMLA-style): `seqs`
   * sequences with `context` latent tokens each on average, `heads` query
   * heads on the device (times the query tokens per sequence with MTP),
   * reading `bytes` of latent cache (`kvBytes` per value). The measured
   * fraction of HBM bandwidth at that batch and context, interpolated in
   * log heads between the 16- and 128-head layouts; cells never measured
   * fall back to that layout's fitted fixed cost + bandwidth.
   */
  mlaDecode(seqs: number, context: number, heads: number, kvBytes: number, bytes: number): number | undefined {
    const t = this.#mlaDecode.get(kvBytes < 2 ? "fp8" : "bf16") ?? this.#mlaDecode.get("bf16");
    if (!t) return undefined;
    const hbm = this.#file.peaks.hbmBandwidth;
    const time = (i: number) => {
      const f = interpGrid(t.context, t.batch, t.hbmFraction[i], context, seqs);
      const fit = t.fit[i];
      if (f !== undefined && f > 0) return bytes / (f * hbm);
      return fit ? fit.overheadUs * 1e-6 + bytes / (fit.hbmFraction * hbm) : undefined;
    };
    return this.#byHeads(t.heads, heads, time);
  }

  /**
   * One layer's causal MLA prefill attention of `flops` (as `mlaBlock`
   * counts them: 192-dim QKᵀ and 128-dim PV over half the score matrix)
   * over sequences of about `seqLen` tokens with `heads` query heads on
   * the device: the measured fraction of the BF16 peak (batch 1).
   */
  mlaPrefill(flops: number, seqLen: number, heads: number): number | undefined {
    const t = this.#mlaPrefill;
    if (!t) return undefined;
    const peak = this.#file.peaks.bf16;
    return this.#byHeads(t.heads, heads, (i) => {
      const f = interpLog(t.seqLen, t.computeFraction[i], seqLen);
      return f !== undefined && f > 0 ? flops / (f * peak) : undefined;
    });
  }

  /** A time at `heads` query heads, log-interpolated between the measured head counts around it. */
  #byHeads(grid: readonly number[], heads: number, time: (i: number) => number | undefined): number | undefined {
    let lo = 0, hi = 0;
    for (let i = 0; i < grid.length; i++) {
      if (grid[i] <= heads && (grid[lo] > heads || grid[i] > grid[lo])) lo = i;
      if (grid[i] >= heads && (grid[hi] < heads || grid[i] < grid[hi])) hi = i;
    }
    if (grid[lo] > heads) lo = hi; // below the smallest layout
    if (grid[hi] < heads) hi = lo; // above the largest
    const a = time(lo);
    if (lo === hi || a === undefined) return a;
    const b = time(hi);
    if (b === undefined) return undefined;
    const w = Math.log(heads / grid[lo]) / Math.log(grid[hi] / grid[lo]);
    return (1 - w) * a + w * b;
  }

  /**
   * The engine's custom all-reduce of `bytes` over `gpus` GPUs of one node:
   * the measured time at that message size (2, 4 or 8 GPUs), the fit
   * beyond the largest measured size.
   */
  allReduce(gpus: number, bytes: number): number | undefined {
    if (gpus >= 64) return this.#allReduceTime(gpus, bytes);
    const key = bytes * 64 + gpus; // exact for integer sizes below 2^47 bytes
    const hit = this.#allReduceMemo.get(key);
    if (hit !== undefined) return Number.isNaN(hit) ? undefined : hit;
    const t = this.#allReduceTime(gpus, bytes);
    this.#allReduceMemo.set(key, t ?? NaN);
    return t;
  }

  #allReduceMemo = new Map<number, number>();

  #allReduceTime(gpus: number, bytes: number): number | undefined {
    const table = this.#allReduce;
    const a = table?.tables.find((t) => t.gpus === gpus);
    if (!table || !a) return undefined;
    const us = interpLog(table.bytes, a.latencyUs, Math.max(bytes, table.bytes[0]));
    const fit = a.fit.latencyUs + bytes / (a.fit.algBandwidthGBs * 1e3);
    const last = table.bytes[a.latencyUs.length - 1];
    return (us === undefined || bytes > last ? fit : us) * 1e-6;
  }
}
