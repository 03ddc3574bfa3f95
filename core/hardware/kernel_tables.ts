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
import { MonotoneCurve, MonotoneSurface } from "./monotone.ts";

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
  /** The measured latency by token count, monotone. */
  readonly curve: MonotoneCurve;
  readonly memo: Map<number, number>;
}

/** A GEMM shape's nearest measured row, and the times computed for it by M. */
interface GemmShape {
  readonly table: GemmTable;
  readonly row: number;
  readonly memo: Map<number, number>;
  /** Time per unit of 2·N·K/peak at each measured M (M / fraction), monotone. */
  readonly curve: MonotoneCurve;
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

/** A prefill attention table's two head layouts as curves (see KernelTables.prefillAttention). */
interface PrefillCurves {
  readonly small: MonotoneCurve;
  readonly large: MonotoneCurve;
  readonly smallHeads: number;
  readonly largeHeads: number;
}

/** A decode attention table's two head layouts and their surfaces, with the weight of the last `kvHeads` asked. */
interface PreparedDecode {
  readonly small: DecodeShape;
  readonly large: DecodeShape;
  readonly smallSurface: MonotoneSurface | undefined;
  readonly largeSurface: MonotoneSurface | undefined;
  kvHeads: number;
  w: number;
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
      const unit = g.curve.at(m);
      t = unit !== undefined ? (unit * 2 * n * k) / this.#file.peaks[dtype] : NaN;
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
      g = table
        ? {
          table,
          row,
          memo: new Map(),
          curve: new MonotoneCurve(table.m, table.compute[row].map((f, i) => (f ? table.m[i] / f : undefined))),
        }
        : null;
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
    const d = kvBytes < 2 ? this.#decodeFp8 : this.#decodeBf16;
    const p = d === undefined ? this.#prepareDecode(kvBytes) : d;
    if (p === null) return undefined;
    const hbm = this.#file.peaks.hbmBandwidth;
    if (p.kvHeads !== kvHeads) {
      p.kvHeads = kvHeads;
      p.w = headWeight(kvHeads, p.small.kvHeads, p.large.kvHeads);
    }
    const w = p.w;
    return w === 0
      ? this.#decodeTime(p.small, p.smallSurface, seqs, context, bytes, hbm)
      : w === 1
      ? this.#decodeTime(p.large, p.largeSurface, seqs, context, bytes, hbm)
      : (1 - w) * this.#decodeTime(p.small, p.smallSurface, seqs, context, bytes, hbm) +
        w * this.#decodeTime(p.large, p.largeSurface, seqs, context, bytes, hbm);
  }

  /** Seconds of one layout: per byte at this batch and context, from the monotone surface of (context × batch) / fraction. */
  #decodeTime(
    s: DecodeShape,
    surface: MonotoneSurface | undefined,
    seqs: number,
    context: number,
    bytes: number,
    hbm: number,
  ): number {
    const unit = surface?.at(context, seqs);
    return unit !== undefined && unit > 0
      ? (bytes * unit) / (context * seqs * hbm)
      : s.fit.overheadUs * 1e-6 + bytes / (s.fit.hbmFraction * hbm);
  }

  /** What decode attention at `kvBytes` per value reads, looked up once per KV dtype (it is asked at every step). */
  #prepareDecode(kvBytes: number): PreparedDecode | null {
    const t = this.#decode.get(kvBytes < 2 ? "fp8" : "bf16") ?? this.#decode.get("bf16");
    let p: PreparedDecode | null = null;
    if (t && t.shapes.length > 0) {
      const [small, large] = headLayouts(t.shapes);
      const surface = (s: DecodeShape) =>
        s.cellsAboveHbm ? undefined : this.#surfaceOf(s, t.context, t.batch, s.hbmFraction);
      p = { small, large, smallSurface: surface(small), largeSurface: surface(large), kvHeads: NaN, w: 0 };
    }
    if (kvBytes < 2) this.#decodeFp8 = p;
    else this.#decodeBf16 = p;
    return p;
  }

  /** {@link #prepareDecode}'s answers (undefined: not asked yet; null: no table). */
  #decodeFp8: PreparedDecode | null | undefined;
  #decodeBf16: PreparedDecode | null | undefined;

  #surfaces = new WeakMap<object, MonotoneSurface | undefined>();

  /**
   * The monotone surface of a grid of fractions of a bandwidth over
   * (context, batch): time per byte-normalized unit, (context × batch) /
   * fraction, undefined when no cell was measured.
   */
  #surfaceOf(key: object, context: readonly number[], batch: readonly number[], g: Grid): MonotoneSurface | undefined {
    if (this.#surfaces.has(key)) return this.#surfaces.get(key);
    const measured = g.some((row) => row.some((f) => f !== null && f > 0));
    const surface = measured
      ? new MonotoneSurface(
        context,
        batch,
        g.map((row, i) => row.map((f, j) => (f ? (context[i] * batch[j]) / f : undefined))),
      )
      : undefined;
    this.#surfaces.set(key, surface);
    return surface;
  }

  /**
   * One layer's causal prefill attention of `flops` over sequences of
   * about `seqLen` tokens with `kvHeads` KV heads on the device: the
   * measured fraction of the BF16 peak at that length (batch 1).
   */
  prefillAttention(flops: number, seqLen: number, kvHeads: number): number | undefined {
    const p = this.#prefillCurves === undefined ? this.#preparePrefill() : this.#prefillCurves;
    if (p === null) return undefined;
    const us = p.small.at(seqLen);
    const ul = p.large.at(seqLen);
    if (us === undefined || ul === undefined) return undefined;
    const w = headWeight(kvHeads, p.smallHeads, p.largeHeads);
    const u = (1 - w) * us + w * ul;
    return u > 0 ? (flops * u) / (seqLen * seqLen * this.#file.peaks.bf16) : undefined;
  }

  /** The prefill table's two head layouts as curves of time per unit of flops / peak, built once (null: no table). */
  #prefillCurves: PrefillCurves | null | undefined;

  /** Builds {@link #prefillCurves}: seqLen² / fraction at batch 1, monotone in seqLen. */
  #preparePrefill(): PrefillCurves | null {
    const t = this.#prefill;
    if (!t || t.shapes.length === 0) return this.#prefillCurves = null;
    const [small, large] = headLayouts(t.shapes);
    const curve = (s: PrefillShape) =>
      this.#curveOf(
        s,
        t.seqLen,
        t.seqLen.map((l, i) => (s.computeFraction[i][0] ? (l * l) / s.computeFraction[i][0]! : undefined)),
      );
    return this.#prefillCurves = {
      small: curve(small),
      large: curve(large),
      smallHeads: small.kvHeads,
      largeHeads: large.kvHeads,
    };
  }

  #curves = new WeakMap<object, MonotoneCurve>();

  /** A monotone curve, built once per table row. */
  #curveOf(key: object, xs: readonly number[], times: readonly (number | undefined)[]): MonotoneCurve {
    let c = this.#curves.get(key);
    if (!c) this.#curves.set(key, c = new MonotoneCurve(xs, times));
    return c;
  }

  /**
   * One rank's routed-expert computation of a MoE layer (gate+up GEMM,
   * activation, down GEMM) when `tokens` tokens enter the MoE group: the
   * latency the engine's MoE kernel was measured at for the nearest
   * measured shape (log hidden, intermediate, experts, top-k) and MoE TP ×
   * EP split (log TP, log EP), rebuilt from the table's fraction and the
   * benchmark's own roofline (balanced routing), never decreasing in
   * `tokens`. Undefined when the tables hold no MoE of that dtype.
   *
   * With expert parallelism the benchmark's token count is per EP rank: at
   * large counts the time it measured for T tokens at EP e is that of about
   * T·k token-expert pairs on one rank (the fractions at 16k tokens fall as
   * ~1/e: 0.31 at EP1, 0.11 at EP2, 0.05 at EP8, 0.016 at EP32 for vLLM's
   * DeepSeek-V3 kernel on H100), so a group of `tokens` is looked up at
   * tokens / e.
   */
  moe(shape: MoeShape, tokens: number, dtype: "bf16" | "fp8"): number | undefined {
    const row = this.#moeRow(shape, dtype);
    if (!row) return undefined;
    const t = Math.max(1, tokens / shape.ep);
    let v = row.memo.get(t);
    if (v === undefined) {
      v = row.curve.at(t) ?? NaN;
      row.memo.set(t, v);
    }
    return Number.isNaN(v) ? undefined : v;
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
        // The measured latency at each token count: the benchmark's roofline (balanced routing) over its fraction.
        const fraction = best.fraction[split];
        const inter = shape.inter / shape.moeTp;
        const ffn = 3 * shape.hidden * inter;
        const latency = t.tokens.map((x, i) => {
          const f = fraction[i];
          if (!f) return undefined;
          const pairs = (x * shape.topK) / shape.ep;
          const touched = Math.min(shape.experts / shape.ep, Math.max(1, pairs));
          const memory = (touched * ffn * (dtype === "fp8" ? 1 : 2)) / this.#file.peaks.hbmBandwidth;
          const compute = (2 * pairs * ffn) / this.#file.peaks[dtype];
          return (memory > compute ? memory : compute) / f;
        });
        r = { curve: new MonotoneCurve(t.tokens, latency), memo: new Map() };
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
      const unit = this.#surfaceOf(t.hbmFraction[i], t.context, t.batch, t.hbmFraction[i])?.at(context, seqs);
      const fit = t.fit[i];
      if (unit !== undefined && unit > 0) return (bytes * unit) / (context * seqs * hbm);
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
      const row = t.computeFraction[i];
      const u = this.#curveOf(row, t.seqLen, t.seqLen.map((l, j) => (row[j] ? (l * l) / row[j]! : undefined))).at(
        seqLen,
      );
      return u !== undefined && u > 0 ? (flops * u) / (seqLen * seqLen * peak) : undefined;
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
    // Measured latencies, monotone in size (flat below the smallest message: a latency floor); beyond the largest
    // measured size the fit, never below the last measured latency.
    const curve = this.#curveOf(a, table.bytes, a.latencyUs.map((x) => x ?? undefined));
    const fit = a.fit.latencyUs + bytes / (a.fit.algBandwidthGBs * 1e3);
    if (curve.empty) return fit * 1e-6;
    const last = curve.xs[curve.xs.length - 1];
    if (bytes <= last) return (bytes < curve.xs[0] ? curve.ys[0] : curve.at(bytes)!) * 1e-6;
    return Math.max(fit, curve.ys[curve.ys.length - 1]) * 1e-6;
  }
}
