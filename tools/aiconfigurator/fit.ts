/**
 * Offline fitter: reads NVIDIA AIConfigurator's measured kernel tables
 * (parquet, Apache-2.0, github.com/ai-dynamo/aiconfigurator) and writes small
 * per-GPU efficiency tables as JSON into `core/hardware/data/aiconfigurator/`.
 *
 * Not part of the test suite or CI. Usage (see README.md beside this file):
 *
 * ```sh
 * deno run --allow-read --allow-write tools/aiconfigurator/fit.ts \
 *   --data /tmp/aic/aic-core/src/aiconfigurator_core/systems/data --commit <hash>
 * ```
 *
 * Only figures are carried over; every formula here is ServingCast's own.
 *
 * @module
 */
import { asyncBufferFromFile, parquetReadObjects } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import { DEVICE_CATALOG } from "../../core/hardware/devices.ts";
import type { DeviceSpec } from "../../core/hardware/device.ts";

/** One parquet row: column name to value (INT64 columns arrive as bigint). */
type Row = Record<string, unknown>;

/** Where the data directory sits inside the AIConfigurator repository. */
const DATA_PREFIX = "aic-core/src/aiconfigurator_core/systems/data";

/** AIConfigurator system directory → ServingCast catalog device. */
const GPUS: Readonly<Record<string, string>> = {
  h100_sxm: "H100_SXM_80G",
  a100_sxm: "A100_SXM_80G",
  h200_sxm: "H200_SXM_141G",
  b200_sxm: "B200_SXM_180G",
  l40s: "L40S_48G",
};

/** Engines in order of preference; at most two are kept per table. */
const ENGINES = ["trtllm", "vllm", "sglang"] as const;
const MAX_ENGINES = 2;

/** A version directory is taken when it covers this share of the wanted grid. */
const MIN_COVERAGE = 0.8;

// ---------------------------------------------------------------------------
// Small helpers

const num = (v: unknown): number => typeof v === "bigint" ? Number(v) : Number(v);
const str = (v: unknown): string => String(v);

/** Rounds to `d` significant digits (keeps the JSON small). */
function sig(x: number, d = 3): number {
  if (!Number.isFinite(x) || x === 0) return x;
  return Number(x.toPrecision(d));
}

/** A fraction: three decimals, two significant digits below 0.1. */
const frac = (x: number): number => x < 0.1 ? sig(x, 2) : Number(x.toFixed(3));

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

/** Natural order of version strings ("1.3.0rc20" > "1.3.0rc5" > "1.2.0"). */
function compareVersions(a: string, b: string): number {
  const pa = a.match(/\d+|[a-z]+/gi) ?? [];
  const pb = b.match(/\d+|[a-z]+/gi) ?? [];
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i], y = pb[i];
    if (x === undefined) return /^\d/.test(y!) ? -1 : 1; // "1.0" < "1.0.1"; "1.0" > "1.0rc1"
    if (y === undefined) return /^\d/.test(x) ? 1 : -1;
    const nx = Number(x), ny = Number(y);
    if (!Number.isNaN(nx) && !Number.isNaN(ny)) {
      if (nx !== ny) return nx - ny;
    } else if (x !== y) {
      if (!Number.isNaN(nx)) return 1; // release number beats a pre-release tag
      if (!Number.isNaN(ny)) return -1;
      return x < y ? -1 : 1;
    }
  }
  return 0;
}

/** Weighted least squares of t ≈ a + c·x, minimising relative error. */
function fitAffine(xs: number[], ts: number[]): { a: number; c: number } {
  let s00 = 0, s01 = 0, s11 = 0, r0 = 0, r1 = 0;
  for (let i = 0; i < xs.length; i++) {
    const w = 1 / (ts[i] * ts[i]);
    s00 += w;
    s01 += w * xs[i];
    s11 += w * xs[i] * xs[i];
    r0 += w * ts[i];
    r1 += w * xs[i] * ts[i];
  }
  const det = s00 * s11 - s01 * s01;
  let a = (r0 * s11 - r1 * s01) / det;
  let c = (s00 * r1 - s01 * r0) / det;
  if (a < 0) { // no negative fixed cost: refit the slope alone
    a = 0;
    c = r1 / s11;
  }
  return { a, c };
}

/** Bracketing grid points of `x` in a sorted grid, with the log-space weight of the upper one. */
function bracket(grid: number[], x: number): [number, number, number] {
  if (x <= grid[0]) return [grid[0], grid[0], 0];
  const last = grid[grid.length - 1];
  if (x >= last) return [last, last, 0];
  let i = 0;
  while (grid[i + 1] < x) i++;
  const lo = grid[i], hi = grid[i + 1];
  if (lo === x) return [lo, lo, 0];
  if (hi === x) return [hi, hi, 0];
  return [lo, hi, Math.log(x / lo) / Math.log(hi / lo)];
}

// ---------------------------------------------------------------------------
// Reading the tables

const cache = new Map<string, Row[]>();

async function readTable(path: string): Promise<Row[]> {
  let rows = cache.get(path);
  if (!rows) {
    const file = await asyncBufferFromFile(path);
    rows = await parquetReadObjects({ file, compressors }) as Row[];
    cache.set(path, rows);
  }
  return rows;
}

function exists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** Version directories of one GPU/op/engine holding `table`, newest first. */
function versionsWith(dataDir: string, gpu: string, op: string, engine: string, table: string): string[] {
  const dir = `${dataDir}/${gpu}/${op}/${engine}`;
  let names: string[];
  try {
    names = [...Deno.readDirSync(dir)].filter((e) => e.isDirectory).map((e) => e.name);
  } catch {
    return [];
  }
  return names.filter((v) => exists(`${dir}/${v}/${table}`)).sort(compareVersions).reverse();
}

/** Repository-relative path of a table, for the attribution header. */
const repoPath = (gpu: string, op: string, engine: string, version: string, table: string) =>
  `${DATA_PREFIX}/${gpu}/${op}/${engine}/${version}/${table}`;

/** The kernel source with the most rows among `rows` (ties: alphabetical). */
function mainKernel(rows: Row[]): string {
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(str(r.kernel_source), (counts.get(str(r.kernel_source)) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0][0];
}

/** Median latency (ms) per key, over rows passing `keep`. */
function latencyBy(rows: Row[], key: (r: Row) => string): Map<string, number> {
  const groups = new Map<string, number[]>();
  for (const r of rows) {
    const k = key(r);
    const g = groups.get(k);
    if (g) g.push(num(r.latency));
    else groups.set(k, [num(r.latency)]);
  }
  return new Map([...groups].map(([k, v]) => [k, median(v)]));
}

// ---------------------------------------------------------------------------
// What is fitted

/** Per-GPU GEMM shapes (N = output features, K = input features) of Llama-3.1 layers. */
const GEMM_SHAPES: ReadonlyArray<{ name: string; n: number; k: number }> = [
  // Llama-3.1-8B, TP1: hidden 4096, 32 query / 8 KV heads of 128, intermediate 14336.
  { name: "llama3.1-8b/tp1/qkv", n: 6144, k: 4096 },
  { name: "llama3.1-8b/tp1/o", n: 4096, k: 4096 },
  { name: "llama3.1-8b/tp1/gate_up", n: 28672, k: 4096 },
  { name: "llama3.1-8b/tp1/down", n: 4096, k: 14336 },
  // Llama-3.1-70B, TP1: hidden 8192, 64 query / 8 KV heads, intermediate 28672.
  { name: "llama3.1-70b/tp1/qkv", n: 10240, k: 8192 },
  { name: "llama3.1-70b/tp1/o", n: 8192, k: 8192 },
  { name: "llama3.1-70b/tp1/gate_up", n: 57344, k: 8192 },
  { name: "llama3.1-70b/tp1/down", n: 8192, k: 28672 },
  // Llama-3.1-70B, TP8 (one GPU's share).
  { name: "llama3.1-70b/tp8/qkv", n: 1280, k: 8192 },
  { name: "llama3.1-70b/tp8/o", n: 8192, k: 1024 },
  { name: "llama3.1-70b/tp8/gate_up", n: 7168, k: 8192 },
  { name: "llama3.1-70b/tp8/down", n: 8192, k: 3584 },
];
const GEMM_M = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];
/** The HBM fraction is written for the memory-bound head of the M axis only. */
const GEMM_MEMORY_MAX_M = 128;
const GEMM_DTYPES: ReadonlyArray<{ data: string; name: "bf16" | "fp8"; bytes: number }> = [
  { data: "bfloat16", name: "bf16", bytes: 2 },
  { data: "fp8", name: "fp8", bytes: 1 },
];

/**
 * Attention head layouts (per GPU): Llama-3.1-8B at TP1 (70B at TP2 has the
 * same per-GPU heads) and Llama-3.1-70B at TP8. 70B at TP1 (64q/8kv) was
 * checked and differs from 32q/8kv by under 0.02 in decode, so it is left out.
 */
const ATTN_SHAPES: ReadonlyArray<{ name: string; q: number; kv: number; d: number }> = [
  { name: "gqa-32q-8kv", q: 32, kv: 8, d: 128 },
  { name: "gqa-8q-1kv", q: 8, kv: 1, d: 128 },
];
const DECODE_BATCH = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];
const DECODE_CONTEXT = [512, 1024, 2048, 4096, 8192, 16384, 32768];
/**
 * The collector sweeps batch × context only up to a total number of cached
 * tokens (batch 512 stops at context 512 for 8 KV heads): coverage is judged
 * on the cells with batch × context ≤ 256k tokens.
 */
const DECODE_TOKEN_BUDGET = 262144;
const KV_DTYPES: ReadonlyArray<{ data: string; name: "bf16" | "fp8"; bytes: number }> = [
  { data: "bfloat16", name: "bf16", bytes: 2 },
  { data: "fp8", name: "fp8", bytes: 1 },
];
const PREFILL_SEQ = [128, 256, 512, 1024, 2048, 4096, 8192, 16384];
const PREFILL_BATCH = [1, 4, 16];

const COMM_GPUS = [2, 4, 8];
/** Message sizes of the all-reduce tables, bytes: 1 KiB … 256 MiB by ×4. */
const COMM_BYTES = Array.from({ length: 10 }, (_, i) => 1024 * 4 ** i);

// ---------------------------------------------------------------------------
// Fitters

interface Source {
  engine: string;
  version: string;
  kernel: string;
  table: string;
}

async function fitGemm(dataDir: string, gpu: string, dev: DeviceSpec, inputs: Set<string>) {
  const out: unknown[] = [];
  const summaries: string[] = [];
  for (const dt of GEMM_DTYPES) {
    const peak = dev.peaks[dt.name];
    if (!peak) continue;
    let kept = 0;
    for (const engine of ENGINES) {
      if (kept >= MAX_ENGINES) break;
      for (const version of versionsWith(dataDir, gpu, "gemm", engine, "gemm_perf.parquet")) {
        const all = await readTable(`${dataDir}/${gpu}/gemm/${engine}/${version}/gemm_perf.parquet`);
        const rows = all.filter((r) => r.gemm_dtype === dt.data);
        if (!rows.length) continue;
        const kernel = mainKernel(rows);
        const lat = latencyBy(rows.filter((r) => r.kernel_source === kernel), (r) => `${r.m}|${r.n}|${r.k}`);
        const ns = [...new Set(rows.map((r) => num(r.n)))].sort((a, b) => a - b);
        const ks = [...new Set(rows.map((r) => num(r.k)))].sort((a, b) => a - b);
        let wanted = 0, found = 0;
        const shapes = GEMM_SHAPES.map((s) => {
          const [n0, n1, wn] = bracket(ns, s.n);
          const [k0, k1, wk] = bracket(ks, s.k);
          const compute: (number | null)[] = [], memory: (number | null)[] = [];
          for (const m of GEMM_M) {
            wanted++;
            // Efficiency at each measured corner, then bilinear in log N, log K.
            const eff = (n: number, k: number) => {
              const t = lat.get(`${m}|${n}|${k}`);
              return t === undefined ? undefined : (2 * m * n * k) / (t * 1e-3) / peak;
            };
            const c = [eff(n0, k0), eff(n1, k0), eff(n0, k1), eff(n1, k1)];
            if (c.some((x) => x === undefined)) {
              compute.push(null);
              if (m <= GEMM_MEMORY_MAX_M) memory.push(null);
              continue;
            }
            found++;
            const [e00, e10, e01, e11] = c as number[];
            const e = (1 - wk) * ((1 - wn) * e00 + wn * e10) + wk * ((1 - wn) * e01 + wn * e11);
            const seconds = (2 * m * s.n * s.k) / (e * peak);
            const bytes = dt.bytes * (s.n * s.k + m * s.k) + 2 * m * s.n; // weights + input + BF16 output
            compute.push(frac(e));
            if (m <= GEMM_MEMORY_MAX_M) memory.push(frac(bytes / seconds / dev.hbmBandwidth));
          }
          return { name: s.name, measured: [n0, n1, k0, k1], compute, memory };
        });
        if (found / wanted < MIN_COVERAGE) continue;
        inputs.add(repoPath(gpu, "gemm", engine, version, "gemm_perf.parquet"));
        out.push({
          engine,
          version,
          kernel,
          dtype: dt.name,
          m: GEMM_M,
          memoryM: GEMM_M.filter((m) => m <= GEMM_MEMORY_MAX_M),
          // Rows follow `gemmShapes`; `measured` = [N below, N above, K below, K above] of the measured grid.
          measured: shapes.map((s) => s.measured),
          compute: shapes.map((s) => s.compute),
          memory: shapes.map((s) => s.memory),
        });
        const at = (name: string, m: number) => shapes.find((s) => s.name === name)!.compute[GEMM_M.indexOf(m)] ?? NaN;
        const atMem = (name: string, m: number) =>
          shapes.find((s) => s.name === name)!.memory[GEMM_M.indexOf(m)] ?? NaN;
        summaries.push(
          `GEMM ${dt.name} ${engine} ${version}: Llama-3.1-8B gate_up reaches ${at("llama3.1-8b/tp1/gate_up", 8192)} ` +
            `of peak at M=8192, ${at("llama3.1-8b/tp1/gate_up", 256)} at M=256; at M=1 it streams weights at ` +
            `${atMem("llama3.1-8b/tp1/gate_up", 1)} of HBM bandwidth (70B TP8 qkv: ${
              atMem("llama3.1-70b/tp8/qkv", 1)
            }); 70B TP1 o at M=4096: ${at("llama3.1-70b/tp1/o", 4096)} of peak`,
        );
        kept++;
        break;
      }
    }
  }
  return { tables: out, summaries };
}

async function fitDecode(dataDir: string, gpu: string, dev: DeviceSpec, inputs: Set<string>) {
  const out: unknown[] = [];
  const summaries: string[] = [];
  const table = "generation_attention_perf.parquet";
  for (const kvt of KV_DTYPES) {
    let kept = 0;
    for (const engine of ENGINES) {
      if (kept >= MAX_ENGINES) break;
      for (const version of versionsWith(dataDir, gpu, "attention", engine, table)) {
        const all = await readTable(`${dataDir}/${gpu}/attention/${engine}/${version}/${table}`);
        const rows = all.filter((r) =>
          r.kv_cache_dtype === kvt.data && num(r.window_size ?? 0) === 0 && num(r.head_dim) === 128 &&
          num(r.beam_width ?? 1) === 1
        );
        if (!rows.length) continue;
        const shapesOut: unknown[] = [];
        let wanted = 0, found = 0;
        const kernels = new Set<string>();
        const fits: Record<
          string,
          { overheadUs: number; hbmFraction: number; above: number; frac: (b: number, c: number) => number }
        > = {};
        for (const s of ATTN_SHAPES) {
          const mine = rows.filter((r) => num(r.num_heads) === s.q && num(r.num_key_value_heads) === s.kv);
          if (!mine.length) {
            wanted += DECODE_BATCH.flatMap((b) => DECODE_CONTEXT.filter((c) => b * c <= DECODE_TOKEN_BUDGET)).length;
            continue;
          }
          const kernel = mainKernel(mine);
          kernels.add(kernel);
          // KV length = cached tokens (`step`) + the new one (`isl` = 1).
          const lat = latencyBy(
            mine.filter((r) => r.kernel_source === kernel),
            (r) => `${r.batch_size}|${num(r.isl) + num(r.step)}`,
          );
          const kvBytes = (b: number, c: number) => b * c * 2 * s.kv * s.d * kvt.bytes;
          const grid: (number | null)[][] = [];
          const xs: number[] = [], ts: number[] = [];
          let above = 0;
          for (const c of DECODE_CONTEXT) {
            const row: (number | null)[] = [];
            for (const b of DECODE_BATCH) {
              if (b * c <= DECODE_TOKEN_BUDGET) wanted++;
              const t = lat.get(`${b}|${c}`);
              if (t === undefined) {
                row.push(null);
                continue;
              }
              if (b * c <= DECODE_TOKEN_BUDGET) found++;
              const f = kvBytes(b, c) / (t * 1e-3) / dev.hbmBandwidth;
              row.push(frac(f));
              if (f > 1) { // faster than HBM: cache-resident or reused KV in the benchmark; kept out of the fit
                above++;
                continue;
              }
              xs.push(kvBytes(b, c));
              ts.push(t * 1e-3);
            }
            grid.push(row);
          }
          if (xs.length < 4) continue;
          const { a, c: slope } = fitAffine(xs, ts);
          const fit = { overheadUs: sig(a * 1e6), hbmFraction: frac(1 / slope / dev.hbmBandwidth) };
          fits[s.name] = {
            ...fit,
            above,
            frac: (b, c) => grid[DECODE_CONTEXT.indexOf(c)][DECODE_BATCH.indexOf(b)] ?? NaN,
          };
          shapesOut.push({
            name: s.name,
            qHeads: s.q,
            kvHeads: s.kv,
            headDim: s.d,
            kernel,
            fit,
            ...(above ? { cellsAboveHbm: above } : {}),
            hbmFraction: grid,
          });
        }
        if (!wanted || found / wanted < MIN_COVERAGE) continue;
        inputs.add(repoPath(gpu, "attention", engine, version, table));
        out.push({
          engine,
          version,
          kvDtype: kvt.name,
          batch: DECODE_BATCH,
          context: DECODE_CONTEXT,
          shapes: shapesOut,
        });
        const f = fits["gqa-32q-8kv"] ?? Object.values(fits)[0];
        if (f) {
          const r = (b: number, c: number) => f.frac(b, c);
          summaries.push(
            `decode attention ${kvt.name} KV ${engine} ${version} (32q/8kv/128): ${
              r(1, 4096)
            } of HBM bandwidth at batch 1, ` +
              `context 4k; ${r(8, 4096)} at batch 8; ${r(64, 4096)} at batch 64; ${r(1, 32768)} at batch 1, 32k; ` +
              `${r(8, 32768)} at batch 8, 32k; ${r(512, 512)} at batch 512, 512; ` +
              `fit t = ${f.overheadUs} µs + KV bytes / (${f.hbmFraction} × HBM)` +
              (f.above ? ` [SUSPECT: ${f.above} cells exceed HBM bandwidth, left out of the fit]` : ""),
          );
        }
        kept++;
        break;
      }
    }
  }
  return { tables: out, summaries };
}

async function fitPrefill(dataDir: string, gpu: string, dev: DeviceSpec, inputs: Set<string>) {
  const out: unknown[] = [];
  const summaries: string[] = [];
  const table = "context_attention_perf.parquet";
  const peak = dev.peaks.bf16;
  let kept = 0;
  for (const engine of ENGINES) {
    if (kept >= MAX_ENGINES) break;
    for (const version of versionsWith(dataDir, gpu, "attention", engine, table)) {
      const all = await readTable(`${dataDir}/${gpu}/attention/${engine}/${version}/${table}`);
      const rows = all.filter((r) =>
        r.kv_cache_dtype === "bfloat16" && (r.attn_dtype ?? "bfloat16") === "bfloat16" &&
        num(r.window_size ?? 0) === 0 && num(r.head_dim) === 128 && num(r.step ?? 0) === 0
      );
      if (!rows.length) continue;
      let wanted = 0, found = 0;
      const shapesOut: unknown[] = [];
      const grids: Record<string, (number | null)[][]> = {};
      for (const s of ATTN_SHAPES) {
        const mine = rows.filter((r) => num(r.num_heads) === s.q && num(r.num_key_value_heads) === s.kv);
        wanted += PREFILL_SEQ.length * PREFILL_BATCH.length;
        if (!mine.length) continue;
        const kernel = mainKernel(mine);
        const lat = latencyBy(mine.filter((r) => r.kernel_source === kernel), (r) => `${r.batch_size}|${r.isl}`);
        // Causal attention: QKᵀ and PV, 2 FLOPs per MAC, half the score matrix.
        const flops = (b: number, n: number) => 2 * b * s.q * s.d * n * n;
        const grid = PREFILL_SEQ.map((n) =>
          PREFILL_BATCH.map((b) => {
            const t = lat.get(`${b}|${n}`);
            if (t === undefined) return null;
            found++;
            return frac(flops(b, n) / (t * 1e-3) / peak);
          })
        );
        grids[s.name] = grid;
        shapesOut.push({ name: s.name, qHeads: s.q, kvHeads: s.kv, headDim: s.d, kernel, computeFraction: grid });
      }
      // Long sequences at larger batches are often not measured: accept half the grid.
      if (!wanted || found / wanted < 0.5) continue;
      inputs.add(repoPath(gpu, "attention", engine, version, table));
      out.push({ engine, version, dtype: "bf16", seqLen: PREFILL_SEQ, batch: PREFILL_BATCH, shapes: shapesOut });
      const g = grids["gqa-32q-8kv"];
      if (g) {
        const at = (n: number) => g[PREFILL_SEQ.indexOf(n)][0] ?? NaN;
        summaries.push(
          `prefill attention bf16 ${engine} ${version} (32q/8kv/128, batch 1, causal): ${at(512)} of BF16 peak at ` +
            `512 tokens, ${at(2048)} at 2k, ${at(8192)} at 8k, ${at(16384)} at 16k`,
        );
      }
      kept++;
      break;
    }
  }
  return { tables: out, summaries };
}

/** All-reduce tables: NCCL (nccl-tests) and each engine's custom all-reduce. */
async function fitAllReduce(dataDir: string, gpu: string, inputs: Set<string>) {
  const out: unknown[] = [];
  const summaries: string[] = [];
  let customKept = 0;
  const sources: { impl: string; op: string; engine: string; table: string; dtype: string; bytes: number }[] = [
    { impl: "nccl", op: "comm", engine: "nccl", table: "nccl_perf.parquet", dtype: "half", bytes: 2 },
    ...ENGINES.map((e) => ({
      impl: `${e}-custom`,
      op: "comm",
      engine: e,
      table: "custom_allreduce_perf.parquet",
      dtype: "bfloat16",
      bytes: 2,
    })),
  ];
  for (const src of sources) {
    if (src.engine !== "nccl" && customKept >= MAX_ENGINES) break;
    const version = versionsWith(dataDir, gpu, src.op, src.engine, src.table)[0];
    if (!version) continue;
    const all = await readTable(`${dataDir}/${gpu}/${src.op}/${src.engine}/${version}/${src.table}`);
    const rows = all.filter((r) => r.op_name === "all_reduce" && (r.nccl_dtype ?? r.allreduce_dtype) === src.dtype);
    if (!rows.length) continue;
    // Custom all-reduce tables may hold several backends (e.g. CUDA-graph and eager): take the fastest per point.
    const byKey = new Map<string, { t: number; kernel: string }>();
    const med = latencyBy(rows, (r) => `${r.num_gpus}|${num(r.message_size) * src.bytes}|${r.kernel_source}`);
    for (const [k, t] of med) {
      const [g, b, kernel] = k.split("|");
      const key = `${g}|${b}`;
      const prev = byKey.get(key);
      if (!prev || t < prev.t) byKey.set(key, { t, kernel });
    }
    const dataVersions = [...new Set(rows.map((r) => str(r.version)))];
    const perGpus: unknown[] = [];
    const parts: string[] = [];
    for (const n of COMM_GPUS) {
      const pts = [...byKey].filter(([k]) => k.startsWith(`${n}|`)).map(([k, v]) => ({
        bytes: Number(k.split("|")[1]),
        t: v.t * 1e-3,
        kernel: v.kernel,
      })).sort((a, b) => a.bytes - b.bytes);
      if (pts.length < 4) continue;
      const { a, c } = fitAffine(pts.map((p) => p.bytes), pts.map((p) => p.t));
      const busFactor = (2 * (n - 1)) / n;
      const lookup = (b: number) => pts.find((p) => p.bytes === b)?.t;
      const latencyUs = COMM_BYTES.map((b) => {
        const t = lookup(b);
        return t === undefined ? null : sig(t * 1e6);
      });
      const kernels = [...new Set(pts.map((p) => p.kernel))].sort();
      const fit = {
        latencyUs: sig(a * 1e6),
        algBandwidthGBs: sig(1 / c / 1e9),
        busBandwidthGBs: sig(busFactor / c / 1e9),
      };
      perGpus.push({ gpus: n, kernels, fit, latencyUs, maxMeasuredBytes: pts[pts.length - 1].bytes });
      const small = lookup(8192);
      const bigBytes = lookup(64 * 2 ** 20) ? 64 * 2 ** 20 : pts[pts.length - 1].bytes;
      const big = lookup(bigBytes)!;
      parts.push(
        `${n} GPUs ${small === undefined ? "n/a" : sig(small * 1e6)} µs at 8 KiB, bus ${
          sig((busFactor * bigBytes) / big / 1e9)
        } GB/s at ${bigBytes / 2 ** 20} MiB, fit ${fit.latencyUs} µs + bytes / ${fit.algBandwidthGBs} GB/s`,
      );
    }
    if (!perGpus.length) continue;
    summaries.push(`all-reduce ${src.impl} ${version}: ${parts.join("; ")}`);
    if (src.engine !== "nccl") customKept++;
    inputs.add(repoPath(gpu, src.op, src.engine, version, src.table));
    out.push({ impl: src.impl, version, dataVersions, bytes: COMM_BYTES, tables: perGpus });
  }
  return { tables: out, summaries };
}

/**
 * MoE expert shapes (full model: hidden, per-expert intermediate, experts,
 * top-k): DeepSeek-V3/R1, Qwen3-235B-A22B and Mixtral-8x7B. Runtime lookups
 * take the nearest (log hidden, intermediate, experts, top-k).
 */
const MOE_SHAPES: ReadonlyArray<{ name: string; h: number; i: number; e: number; k: number; dtypes: string[] }> = [
  { name: "deepseek-v3", h: 7168, i: 2048, e: 256, k: 8, dtypes: ["fp8"] }, // not measured in BF16
  { name: "qwen3-235b", h: 4096, i: 1536, e: 128, k: 8, dtypes: ["bf16"] },
  { name: "mixtral-8x7b", h: 4096, i: 14336, e: 8, k: 2, dtypes: ["fp8", "bf16"] },
];
/** Tokens entering the MoE group (before routing), 1 … 16k. */
const MOE_TOKENS = [1, 2, 4, 8, 16, 32, 64, 256, 1024, 4096, 16384];
/** (moe_tp, moe_ep) splits kept: pure expert parallel up to 64, pure TP up to 8, and TP2 × EP4. */
const MOE_SPLITS: ReadonlyArray<readonly [number, number]> = [
  [1, 1],
  [1, 2],
  [1, 4],
  [1, 8],
  [1, 16],
  [1, 32],
  [1, 64],
  [2, 1],
  [4, 1],
  [8, 1],
  [2, 4],
];
/** GPUs the MoE and MLA tables are fitted for (L40S: its 96 MB L2 holds small expert sets; not fitted). */
const MOE_MLA_GPUS = new Set(["h100_sxm", "h200_sxm", "b200_sxm", "a100_sxm"]);
const MOE_DTYPES: ReadonlyArray<{ data: string; name: "bf16" | "fp8"; bytes: number }> = [
  { data: "fp8_block", name: "fp8", bytes: 1 },
  { data: "bfloat16", name: "bf16", bytes: 2 },
];

/**
 * The roofline of one rank's MoE expert computation (gate+up and down GEMMs
 * of the experts it holds) under the benchmark's balanced routing: the
 * T·k token-expert pairs are spread evenly over the experts, so a rank
 * holds T·k/ep pairs on min(E/ep, T·k/ep) distinct experts (at least one).
 * Seconds: max(weight bytes of those experts / HBM, FLOPs / peak).
 */
function moeRoofline(
  s: { h: number; i: number; e: number; k: number },
  tokens: number,
  tp: number,
  ep: number,
  wb: number,
  dev: DeviceSpec,
  peak: number,
) {
  const inter = s.i / tp;
  const pairs = (tokens * s.k) / ep;
  const touched = Math.min(s.e / ep, Math.max(1, pairs));
  const mem = (touched * 3 * s.h * inter * wb) / dev.hbmBandwidth;
  const comp = (2 * pairs * 3 * s.h * inter) / peak;
  return { mem, comp, roof: Math.max(mem, comp) };
}

async function fitMoe(dataDir: string, gpu: string, dev: DeviceSpec, inputs: Set<string>) {
  const out: unknown[] = [];
  const summaries: string[] = [];
  const table = "moe_perf.parquet";
  for (const dt of MOE_DTYPES) {
    const peak = dev.peaks[dt.name];
    if (!peak) continue;
    let kept = 0;
    for (const engine of ENGINES) {
      if (kept >= MAX_ENGINES) break;
      for (const version of versionsWith(dataDir, gpu, "moe", engine, table)) {
        const all = await readTable(`${dataDir}/${gpu}/moe/${engine}/${version}/${table}`);
        const typed = all.filter((r) => r.moe_dtype === dt.data);
        if (!typed.length) continue;
        // Balanced routing where measured (the roofline assumes it); else the mildest power law.
        const distribution = typed.some((r) => r.distribution === "balanced") ? "balanced" : "power_law_1.01";
        const rows = typed.filter((r) => r.distribution === distribution);
        const kernels = new Set<string>();
        const shapesOut: unknown[] = [];
        let splitsFound = 0, wanted = 0, found = 0;
        let splitsUsed: (readonly [number, number])[] = [];
        const grids: Record<string, (number | null)[][]> = {};
        for (const s of MOE_SHAPES) {
          if (!s.dtypes.includes(dt.name)) continue;
          const mine = rows.filter((r) =>
            num(r.hidden_size) === s.h && num(r.inter_size) === s.i && num(r.num_experts) === s.e &&
            num(r.topk) === s.k
          );
          if (!mine.length) continue;
          // The splits are those measured for the first shape present (the DeepSeek one where it is).
          if (!splitsUsed.length) {
            splitsUsed = MOE_SPLITS.filter(([tp, ep]) =>
              mine.some((r) => num(r.moe_tp_size) === tp && num(r.moe_ep_size) === ep)
            );
            splitsFound = splitsUsed.length;
          }
          const grid = splitsUsed.map(([tp, ep]) => {
            const split = mine.filter((r) => num(r.moe_tp_size) === tp && num(r.moe_ep_size) === ep);
            if (!split.length) return MOE_TOKENS.map(() => null);
            const kernel = mainKernel(split);
            kernels.add(kernel);
            const lat = latencyBy(split.filter((r) => r.kernel_source === kernel), (r) => String(num(r.num_tokens)));
            return MOE_TOKENS.map((t) => {
              wanted++;
              const ms = lat.get(String(t));
              if (ms === undefined) return null;
              found++;
              return frac(moeRoofline(s, t, tp, ep, dt.bytes, dev, peak).roof / (ms * 1e-3));
            });
          });
          grids[s.name] = grid;
          shapesOut.push({ name: s.name, hidden: s.h, inter: s.i, experts: s.e, topK: s.k, fraction: grid });
        }
        if (splitsFound < 2 || !wanted || found / wanted < MIN_COVERAGE) continue;
        // Above 1.0: faster than streaming the experts the balanced routing touches (e.g. a module that
        // applies DeepSeek's group-limited routing, touching fewer experts); counted, kept in the grid.
        const above = Object.values(grids).flat(2).filter((x) => x !== null && x > 1).length;
        inputs.add(repoPath(gpu, "moe", engine, version, table));
        out.push({
          engine,
          version,
          dtype: dt.name,
          source: dt.data,
          distribution,
          ...(above ? { cellsAboveRoofline: above } : {}),
          kernels: [...kernels].sort(),
          tokens: MOE_TOKENS,
          splits: splitsUsed.map(([tp, ep]) => `tp${tp}ep${ep}`),
          shapes: shapesOut,
        });
        const name = Object.keys(grids)[0];
        const g = grids[name];
        const s = MOE_SHAPES.find((x) => x.name === name)!;
        const at = (tp: number, ep: number, t: number) => {
          const i = splitsUsed.findIndex(([a, b]) => a === tp && b === ep);
          return i < 0 ? NaN : g[i][MOE_TOKENS.indexOf(t)] ?? NaN;
        };
        const pick = ([[1, 8], [2, 4], [8, 1], [1, 1]] as const).filter(([tp, ep]) =>
          splitsUsed.some(([a, b]) => a === tp && b === ep)
        );
        summaries.push(
          `MoE ${dt.name} (${dt.data}) ${engine} ${version} ${name} (${s.h}/${s.i}, ${s.e} experts, top-${s.k}; ` +
            `fraction of max(touched-expert weights / HBM, FLOPs / peak)): ` +
            pick.map(([tp, ep]) =>
              `TP${tp}×EP${ep} ${at(tp, ep, 1)} at 1 token, ${at(tp, ep, 4)} at 4, ${at(tp, ep, 64)} at 64, ` +
              `${at(tp, ep, 1024)} at 1k, ${at(tp, ep, 16384)} at 16k`
            ).join("; ") + (distribution === "balanced" ? "" : ` [${distribution} routing: balanced not measured]`) +
            (above ? ` [${above} cells above 1.0]` : ""),
        );
        kept++;
        break;
      }
    }
  }
  return { tables: out, summaries };
}

/** MLA query heads per GPU: DeepSeek-V3's 128 at TP1 (or attention DP) and 16 at TP8 (others: log-interpolated). */
const MLA_HEADS = [128, 16];
/** The latent cache per token and layer: kv_lora_rank 512 + rope 64. */
const MLA_LATENT = 576;

/** Kernel with most rows; on a tie, the faster one (lower summed latency over the rows). */
function mainKernelFastest(rows: Row[]): string {
  const counts = new Map<string, { n: number; t: number }>();
  for (const r of rows) {
    const c = counts.get(str(r.kernel_source)) ?? { n: 0, t: 0 };
    c.n++;
    c.t += num(r.latency);
    counts.set(str(r.kernel_source), c);
  }
  return [...counts].sort((a, b) => b[1].n - a[1].n || a[1].t - b[1].t)[0][0];
}

async function fitMlaDecode(dataDir: string, gpu: string, dev: DeviceSpec, inputs: Set<string>) {
  const out: unknown[] = [];
  const summaries: string[] = [];
  const table = "generation_mla_perf.parquet";
  for (const kvt of KV_DTYPES) {
    let kept = 0;
    for (const engine of ENGINES) {
      if (kept >= MAX_ENGINES) break;
      for (const version of versionsWith(dataDir, gpu, "mla", engine, table)) {
        const all = await readTable(`${dataDir}/${gpu}/mla/${engine}/${version}/${table}`);
        const rows = all.filter((r) => r.kv_cache_dtype === kvt.data && num(r.isl ?? 1) === 1);
        if (!rows.length) continue;
        let wanted = 0, found = 0;
        const kernels: string[] = [], fits: unknown[] = [], grids: (number | null)[][][] = [];
        for (const heads of MLA_HEADS) {
          wanted += DECODE_BATCH.flatMap((b) => DECODE_CONTEXT.filter((c) => b * c <= DECODE_TOKEN_BUDGET)).length;
          const mine = rows.filter((r) => num(r.num_heads) === heads);
          if (!mine.length) {
            kernels.push("");
            fits.push(null);
            grids.push(DECODE_CONTEXT.map(() => DECODE_BATCH.map(() => null)));
            continue;
          }
          const kernel = mainKernelFastest(mine);
          kernels.push(kernel);
          // KV length = cached tokens (`step`) + the new one (`isl` = 1).
          const lat = latencyBy(
            mine.filter((r) => r.kernel_source === kernel),
            (r) => `${r.batch_size}|${num(r.isl) + num(r.step)}`,
          );
          const bytes = (b: number, c: number) => b * c * MLA_LATENT * kvt.bytes;
          const xs: number[] = [], ts: number[] = [];
          grids.push(DECODE_CONTEXT.map((c) =>
            DECODE_BATCH.map((b) => {
              const t = lat.get(`${b}|${c}`);
              if (t === undefined) return null;
              if (b * c <= DECODE_TOKEN_BUDGET) found++;
              const f = bytes(b, c) / (t * 1e-3) / dev.hbmBandwidth;
              if (f <= 1) {
                xs.push(bytes(b, c));
                ts.push(t * 1e-3);
              }
              return frac(f);
            })
          ));
          const { a, c: slope } = fitAffine(xs, ts);
          fits.push({ overheadUs: sig(a * 1e6), hbmFraction: frac(1 / slope / dev.hbmBandwidth) });
        }
        if (!wanted || found / wanted < MIN_COVERAGE) continue;
        inputs.add(repoPath(gpu, "mla", engine, version, table));
        out.push({
          engine,
          version,
          kvDtype: kvt.name,
          latent: MLA_LATENT,
          heads: MLA_HEADS,
          kernels,
          batch: DECODE_BATCH,
          context: DECODE_CONTEXT,
          fit: fits,
          hbmFraction: grids,
        });
        const r = (h: number, b: number, c: number) =>
          grids[MLA_HEADS.indexOf(h)][DECODE_CONTEXT.indexOf(c)][DECODE_BATCH.indexOf(b)] ?? NaN;
        const f16 = fits[MLA_HEADS.indexOf(16)] as { overheadUs: number; hbmFraction: number } | null;
        summaries.push(
          `decode MLA ${kvt.name} latent cache ${engine} ${version} (${kernels.filter((k) => k).join("/")}): ` +
            `16 heads/GPU (TP8) ${r(16, 1, 4096)} of HBM bandwidth at batch 1, context 4k; ${r(16, 8, 4096)} at ` +
            `batch 8; ${r(16, 64, 4096)} at batch 64; 128 heads/GPU ${r(128, 1, 4096)}, ${r(128, 8, 4096)}, ` +
            `${r(128, 64, 4096)}` +
            (f16 ? `; fit (16 heads) t = ${f16.overheadUs} µs + bytes / (${f16.hbmFraction} × HBM)` : ""),
        );
        kept++;
        break;
      }
    }
  }
  return { tables: out, summaries };
}

async function fitMlaPrefill(dataDir: string, gpu: string, dev: DeviceSpec, inputs: Set<string>) {
  const out: unknown[] = [];
  const summaries: string[] = [];
  const table = "context_mla_perf.parquet";
  const peak = dev.peaks.bf16;
  let kept = 0;
  for (const engine of ENGINES) {
    if (kept >= MAX_ENGINES) break;
    for (const version of versionsWith(dataDir, gpu, "mla", engine, table)) {
      const all = await readTable(`${dataDir}/${gpu}/mla/${engine}/${version}/${table}`);
      const rows = all.filter((r) =>
        r.kv_cache_dtype === "bfloat16" && num(r.step ?? 0) === 0 && num(r.batch_size) === 1
      );
      if (!rows.length) continue;
      let wanted = 0, found = 0;
      const kernels: string[] = [];
      const grid = MLA_HEADS.map((heads) => {
        wanted += PREFILL_SEQ.length;
        const mine = rows.filter((r) => num(r.num_heads) === heads);
        if (!mine.length) {
          kernels.push("");
          return PREFILL_SEQ.map(() => null);
        }
        const kernel = mainKernelFastest(mine);
        kernels.push(kernel);
        const lat = latencyBy(mine.filter((r) => r.kernel_source === kernel), (r) => String(num(r.isl)));
        // Causal MLA prefill as ServingCast counts it: 2 FLOPs per MAC, QKᵀ at 192 dims and PV at 128, n²/2 pairs.
        return PREFILL_SEQ.map((n) => {
          const t = lat.get(String(n));
          if (t === undefined) return null;
          found++;
          return frac((2 * heads * (192 + 128) * n * n / 2) / (t * 1e-3) / peak);
        });
      });
      if (!wanted || found / wanted < MIN_COVERAGE) continue;
      inputs.add(repoPath(gpu, "mla", engine, version, table));
      out.push({
        engine,
        version,
        dtype: "bf16",
        heads: MLA_HEADS,
        kernels,
        seqLen: PREFILL_SEQ,
        computeFraction: grid,
      });
      const at = (h: number, n: number) => grid[MLA_HEADS.indexOf(h)][PREFILL_SEQ.indexOf(n)] ?? NaN;
      summaries.push(
        `prefill MLA bf16 ${engine} ${version} (batch 1, causal): 16 heads/GPU ${at(16, 512)} of BF16 peak at 512 ` +
          `tokens, ${at(16, 2048)} at 2k, ${at(16, 8192)} at 8k; 128 heads/GPU ${at(128, 512)}, ${at(128, 2048)}, ` +
          `${at(128, 8192)}`,
      );
      kept++;
      break;
    }
  }
  return { tables: out, summaries };
}

// ---------------------------------------------------------------------------
// Main

function parseArgs(args: string[]): { data: string; commit: string; out: string; date: string } {
  const get = (flag: string) => {
    const i = args.indexOf(flag);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const data = get("--data");
  if (!data) {
    console.error(
      "usage: fit.ts --data <aiconfigurator>/aic-core/src/aiconfigurator_core/systems/data " +
        "[--commit <hash>] [--out core/hardware/data/aiconfigurator] [--date YYYY-MM-DD]",
    );
    Deno.exit(2);
  }
  return {
    data: data.replace(/\/$/, ""),
    commit: get("--commit") ?? "unknown",
    out: get("--out") ?? new URL("../../core/hardware/data/aiconfigurator", import.meta.url).pathname,
    date: get("--date") ?? new Date().toISOString().slice(0, 10),
  };
}

async function main() {
  const { data, commit, out, date } = parseArgs(Deno.args);
  await Deno.mkdir(out, { recursive: true });
  for (const [gpu, deviceName] of Object.entries(GPUS)) {
    const dev = DEVICE_CATALOG[deviceName];
    const inputs = new Set<string>();
    const gemm = await fitGemm(data, gpu, dev, inputs);
    const decode = await fitDecode(data, gpu, dev, inputs);
    const prefill = await fitPrefill(data, gpu, dev, inputs);
    const allReduce = await fitAllReduce(data, gpu, inputs);
    const none = { tables: [] as unknown[], summaries: [] as string[] };
    const moeMla = MOE_MLA_GPUS.has(gpu);
    const moe = moeMla ? await fitMoe(data, gpu, dev, inputs) : none;
    const mlaDecode = moeMla ? await fitMlaDecode(data, gpu, dev, inputs) : none;
    const mlaPrefill = moeMla ? await fitMlaPrefill(data, gpu, dev, inputs) : none;
    if (!inputs.size) {
      console.error(`${gpu}: no tables found, skipped`);
      continue;
    }
    cache.clear();
    const summaries = [
      ...gemm.summaries,
      ...decode.summaries,
      ...prefill.summaries,
      ...allReduce.summaries,
      ...moe.summaries,
      ...mlaDecode.summaries,
      ...mlaPrefill.summaries,
    ];
    const doc = {
      source: {
        repository: "https://github.com/ai-dynamo/aiconfigurator",
        commit,
        license: "Apache-2.0",
        copyright: "Copyright (c) NVIDIA CORPORATION & AFFILIATES (measured data); fitted by ServingCast",
        generated: date,
        generator: "tools/aiconfigurator/fit.ts",
        inputs: [...inputs].sort(),
      },
      gpu,
      device: deviceName,
      peaks: { bf16: dev.peaks.bf16, fp8: dev.peaks.fp8, hbmBandwidth: dev.hbmBandwidth },
      summaries,
      gemmShapes: GEMM_SHAPES.map((s) => `${s.name} ${s.n}x${s.k}`),
      gemm: gemm.tables,
      decodeAttention: decode.tables,
      prefillAttention: prefill.tables,
      allReduce: allReduce.tables,
      ...(moeMla ? { moe: moe.tables, mlaDecode: mlaDecode.tables, mlaPrefill: mlaPrefill.tables } : {}),
    };
    const file = `${gpu}.json`;
    await Deno.writeTextFile(`${out}/${file}`, stringify(doc) + "\n");
    console.log(`== ${gpu} (${deviceName}) → ${file}`);
    for (const s of summaries) console.log("  " + s);
  }
}

/**
 * JSON laid out as `deno fmt` lays it out (2-space indent, arrays of
 * scalars on one line when they fit in 120 columns), so the committed
 * files pass `deno fmt --check` as written and stay small.
 */
function stringify(value: unknown, indent = "", lead = 0): string {
  const inner = indent + "  ";
  if (Array.isArray(value)) {
    if (!value.length) return "[]";
    if (value.every((v) => v === null || typeof v !== "object")) {
      const flat = `[${value.map((v) => JSON.stringify(v)).join(", ")}]`;
      if (lead + flat.length + 1 <= 120) return flat;
    }
    return `[\n${value.map((v) => inner + stringify(v, inner, inner.length)).join(",\n")}\n${indent}]`;
  }
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>);
    if (!entries.length) return "{}";
    if (entries.every(([, v]) => v === null || typeof v !== "object")) {
      const flat = `{ ${entries.map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(", ")} }`;
      if (lead + flat.length + 1 <= 120) return flat;
    }
    return `{\n${
      entries.map(([k, v]) => {
        const key = `${inner}${JSON.stringify(k)}: `;
        return key + stringify(v, inner, key.length);
      }).join(",\n")
    }\n${indent}}`;
  }
  return JSON.stringify(value);
}

if (import.meta.main) await main();
