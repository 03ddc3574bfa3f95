/**
 * The built-in model and device catalogs as tables: `deno task sim
 * --list-models` / `--list-devices` print them, and `deno task docs:catalog`
 * writes them into the README, so both always show the catalogs' own figures.
 *
 * @module
 */
import { MODEL_ALIASES, MODEL_CATALOG } from "../model/catalog.ts";
import { alignColumns, columnWidths } from "../text/columns.ts";
import { kvBytesPerToken, modelSpecFromHf, paramCounts } from "../model/model_spec.ts";
import { DEVICE_CATALOG } from "../hardware/devices.ts";

/** A table: column names, rows of cells, and where its figures come from. */
export interface CatalogTable {
  /** Column names. */
  readonly header: readonly string[];
  /** One row per catalog entry, in catalog order. */
  readonly rows: readonly (readonly string[])[];
  /** Lines saying where the figures come from. */
  readonly notes: readonly string[];
}

const GiB = 2 ** 30;
const billions = (n: number) => `${(n / 1e9).toFixed(1)}B`;
const grouped = (n: number) => String(n).replace(/\B(?=(\d{3})+$)/g, ",");
/** Up to `digits` decimals, trailing zeros dropped; 0 (unsupported) as a dash. */
const amount = (x: number, digits: number) => (x > 0 ? String(Number(x.toFixed(digits))) : "–");

/** Every catalog model: parameters, BF16 weights, KV bytes per token, context. */
export function modelTable(): CatalogTable {
  const rows = Object.entries(MODEL_CATALOG).map(([id, cfg]) => {
    const m = modelSpecFromHf(id, cfg, (f, d) => {
      throw new Error(`catalog entry ${id}: ${f}: ${d}`);
    });
    const p = paramCounts(m);
    return [
      id,
      m.family,
      billions(p.total),
      billions(p.active),
      `${(p.total * 2 / GiB).toFixed(1)} GiB`,
      `${amount(kvBytesPerToken(m, 2) / 1024, 1)} KiB`,
      m.maxPositions ? grouped(m.maxPositions) : "–",
    ];
  });
  const aliases = Object.entries(MODEL_ALIASES).map(([a, id]) => `${a} = ${id}`);
  return {
    header: ["MODEL", "FAMILY", "PARAMS", "ACTIVE", "BF16 WEIGHTS", "KV/TOKEN (BF16)", "MAX CONTEXT"],
    rows,
    notes: [
      "source: each model's Hugging Face config.json, kept offline in core/model/catalog.ts; parameters, weights " +
      "and KV bytes are computed from the architecture. Name any other model by a path to its config.json.",
      `aliases: ${aliases.join("; ")}`,
    ],
  };
}

/** Every catalog device: memory, HBM bandwidth, dense peaks, and where its efficiencies come from. */
export function deviceTable(): CatalogTable {
  const rows = Object.values(DEVICE_CATALOG).map((d) => [
    d.name,
    `${(d.memoryBytes / GiB).toFixed(1)} GiB`,
    `${amount(d.hbmBandwidth / 1e12, 3)} TB/s`,
    amount(d.peaks.bf16 / 1e12, 1),
    amount(d.peaks.fp8 / 1e12, 1),
    amount(d.peaks.int8 / 1e12, 1),
    amount(d.peaks.fp4 / 1e12, 1),
    d.provenance,
  ]);
  return {
    header: [
      "DEVICE",
      "MEMORY",
      "HBM",
      "BF16 TFLOPS",
      "FP8 TFLOPS",
      "INT8 TOPS",
      "FP4 TFLOPS",
      "EFFICIENCIES FROM",
    ],
    rows,
    notes: [
      "source: memory, bandwidth and dense peaks are vendor specifications (core/hardware/devices.ts); " +
      "EFFICIENCIES FROM says where the achieved fractions and overheads come from. Name any other chip by a " +
      "path to a device file.",
    ],
  };
}

/** The table for a terminal: columns two spaces apart, then its notes. */
export function formatCatalogText(t: CatalogTable): string {
  return [...alignColumns([t.header, ...t.rows]), "", ...t.notes].join("\n") + "\n";
}

/** The table as Markdown (columns aligned, as `deno fmt` lays them out), then its notes. */
export function formatCatalogMarkdown(t: CatalogTable): string {
  const w = columnWidths([t.header, ...t.rows]);
  const [head, ...body] = alignColumns([t.header, ...t.rows.map((r) => r.map((c, i) => (i === 0 ? `\`${c}\`` : c)))], {
    start: "| ",
    separator: " | ",
    end: " |",
  });
  return [
    head,
    `| ${w.map((n) => "-".repeat(n)).join(" | ")} |`,
    ...body,
    "",
    ...t.notes.flatMap((
      n,
      i,
    ) => [...(i ? [""] : []), n.replace(/^(\w+): /, (_, k: string) => `${k[0].toUpperCase()}${k.slice(1)}: `)]),
  ].join("\n");
}

/** The first line of the README's generated catalog section. */
export const CATALOG_BEGIN = "<!-- catalog:begin -->";
/** The last line of the README's generated catalog section. */
export const CATALOG_END = "<!-- catalog:end -->";

/** The README's catalog section, from {@link CATALOG_BEGIN} to {@link CATALOG_END}. */
export function catalogMarkdown(): string {
  const ticked = (t: CatalogTable): CatalogTable => {
    const w0 = Math.max(...t.rows.map((r) => r[0].length + 2));
    return { ...t, header: [t.header[0].padEnd(w0), ...t.header.slice(1)] };
  };
  return [
    CATALOG_BEGIN,
    "<!-- deno-fmt-ignore-start -->",
    "",
    "Models (`deno task sim --list-models`):",
    "",
    formatCatalogMarkdown(ticked(modelTable())),
    "",
    "Devices (`deno task sim --list-devices`):",
    "",
    formatCatalogMarkdown(ticked(deviceTable())),
    "",
    "<!-- deno-fmt-ignore-end -->",
    CATALOG_END,
  ].join("\n");
}
