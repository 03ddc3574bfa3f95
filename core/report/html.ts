/**
 * Self-contained HTML pages: tables of the numbers and charts rendered to
 * inline SVG at build time (Vega-Lite through {@link renderSvg}), with the
 * style inlined, so a page works offline, needs no JavaScript and can be
 * attached to a review as one file.
 *
 * Page contract (checked by tests/report_browser_test.ts in headless
 * Chromium): every chart is `<figure class="chart" data-chart="ID">`
 * holding one `<svg>`; every number taken from a run's JSON document is an
 * element with `data-json` (the key path of the value in the document, as
 * a JSON array: keys such as `P99.9` hold dots),
 * `data-value` (the value, as JSON has it) and, on a comparison page,
 * `data-side` (`a` or `b`).
 *
 * @module
 */
import { renderSvg } from "./svg.ts";
import type { VegaLiteSpec } from "./svg.ts";
import { formatFixed } from "./number_format.ts";

/** Escapes text for HTML. */
export const escapeHtml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** The value at a key path of a JSON document (undefined when absent; own properties only). */
export function valueAt(doc: unknown, path: readonly (string | number)[]): unknown {
  let v = doc;
  for (const k of path) {
    if (v === null || typeof v !== "object" || !Object.hasOwn(v, k)) return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

/** A number as a report shows it: whole numbers with separators, others to 3 decimals (3 significant digits below 0.01); `-` when undefined. */
export function showNumber(v: unknown): string {
  if (typeof v !== "number" || !Number.isFinite(v)) return "-";
  if (Number.isInteger(v)) return v.toLocaleString("en-US");
  const a = Math.abs(v);
  // Three significant digits below 0.01 (a 20 µs change would otherwise show as 0.000).
  return formatFixed(v, a >= 1000 ? 1 : a >= 0.01 ? 3 : Math.min(12, 2 - Math.floor(Math.log10(a))));
}

/**
 * A table cell holding the number at `path` of `doc`, marked with its path
 * as a JSON array (the page contract); a missing or null value shows as `-`
 * without marks.
 */
export function numberCell(doc: unknown, path: readonly (string | number)[], side?: "a" | "b"): string {
  const v = valueAt(doc, path);
  if (typeof v !== "number") return `<td class="num">-</td>`;
  return `<td class="num" data-json="${escapeHtml(JSON.stringify(path))}" data-value="${JSON.stringify(v)}"${
    side ? ` data-side="${side}"` : ""
  }>${showNumber(v)}</td>`;
}

/** A table: a header row and body rows of ready-made cells (`<td>`…). */
export function table(caption: string, header: readonly string[], rows: readonly string[][]): string {
  return `<table><caption>${escapeHtml(caption)}</caption><thead><tr>${
    header.map((h) => `<th>${escapeHtml(h)}</th>`).join("")
  }</tr></thead><tbody>${rows.map((r) => `<tr>${r.join("")}</tr>`).join("")}</tbody></table>`;
}

/** A text cell. */
export const textCell = (s: string): string => `<td>${escapeHtml(s)}</td>`;

/** One chart: a Vega-Lite spec rendered to inline SVG in a figure (the page contract). */
export async function chart(id: string, title: string, spec: VegaLiteSpec): Promise<string> {
  const svg = await renderSvg({
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    // Two charts side by side on a 1280-pixel page (legends included).
    width: 420,
    height: 190,
    config: { font: "system-ui, sans-serif", axis: { labelFontSize: 11, titleFontSize: 12 } },
    ...spec,
  });
  // The XML prolog and namespace-less ids are fine inline; only the <svg> element is kept.
  return `<figure class="chart" data-chart="${escapeHtml(id)}"><figcaption>${escapeHtml(title)}</figcaption>${
    svg.slice(svg.indexOf("<svg"))
  }</figure>`;
}

/** A 0-1 axis for a field that never varies (no preemptions, no client wait) rather than a zero-width domain. */
function flatScale(rows: readonly Record<string, unknown>[], field: string): Record<string, unknown> {
  const vs = rows.map((r) => r[field]).filter((v): v is number => typeof v === "number");
  if (vs.length === 0 || vs.some((v) => v !== vs[0])) return {};
  return { scale: { domain: [Math.min(0, vs[0]), Math.max(1, vs[0])] } };
}

/**
 * Whether values span more than two decades (positive ones only): a latency that runs from 30 ms below saturation
 * to a minute above it, which a linear axis flattens to a line at the bottom.
 */
export function spansDecades(values: readonly number[]): boolean {
  const pos = values.filter((v) => v > 0 && Number.isFinite(v));
  return pos.length > 1 && Math.max(...pos) / Math.min(...pos) > 100;
}

/** What a line chart draws besides its lines. */
export interface LineExtras {
  /** Dashed rules at a y (or x) value, e.g. an SLO's bound. */
  readonly rules?: readonly { y?: number; x?: number; label: string }[];
  /** Points to mark (e.g. a capacity answer). */
  readonly points?: readonly Record<string, unknown>[];
  /** A log y axis (for values spanning more than two decades: {@link spansDecades}). */
  readonly logY?: boolean;
  /** A log x axis (likewise: a latency CDF from 30 ms to a minute). */
  readonly logX?: boolean;
  /** A y range to shade, e.g. where an SLO holds. */
  readonly band?: { readonly from: number; readonly to: number };
}

/** A line chart of `rows` (x, y, series), one line per series. */
export function lineSpec(
  rows: readonly Record<string, unknown>[],
  x: { field: string; title: string },
  y: { field: string; title: string },
  series?: { field: string; title: string },
  extra: LineExtras = {},
): VegaLiteSpec {
  const yScale = extra.logY ? { scale: { type: "log" } } : flatScale(rows, y.field);
  const line = {
    mark: { type: "line", interpolate: "linear", point: rows.length <= 40 },
    encoding: {
      x: {
        field: x.field,
        type: "quantitative",
        title: x.title,
        ...(extra.logX ? { scale: { type: "log" } } : flatScale(rows, x.field)),
      },
      y: { field: y.field, type: "quantitative", title: y.title, ...yScale },
      // The legend below the plot, its labels whole: a long series name wraps the legend, never cuts.
      ...(series
        ? {
          color: {
            field: series.field,
            type: "nominal",
            title: series.title,
            legend: { orient: "bottom", direction: "vertical", labelLimit: 0 },
          },
        }
        : {}),
    },
  };
  const layers: Record<string, unknown>[] = [];
  if (extra.band) {
    // Behind the lines: the region where the bound holds, lightly shaded.
    layers.push({
      data: { values: [extra.band] },
      mark: { type: "rect", color: "#2e7d32", opacity: 0.08 },
      encoding: {
        y: { field: "from", type: "quantitative", ...yScale },
        y2: { field: "to" },
      },
    });
  }
  layers.push({ data: { values: rows }, ...line });
  for (const r of extra.rules ?? []) {
    layers.push({
      data: { values: [r] },
      mark: { type: "rule", strokeDash: [4, 3], color: "#c0392b" },
      encoding: r.y !== undefined
        ? { y: { datum: r.y, type: "quantitative" } }
        : { x: { datum: r.x, type: "quantitative" } },
    });
  }
  if (extra.points?.length) {
    layers.push({
      data: { values: extra.points },
      mark: { type: "point", filled: true, size: 90, color: "#c0392b", shape: "diamond" },
      encoding: {
        x: { field: x.field, type: "quantitative" },
        y: { field: y.field, type: "quantitative" },
      },
    });
  }
  return layers.length === 1 ? { data: { values: rows }, ...line } : { layer: layers };
}

/** A horizontal stacked bar chart: one bar per `bar`, segments by `part`. */
export function stackedBarSpec(
  rows: readonly { bar: string; part: string; value: number; order: number }[],
  valueTitle: string,
  barTitle: string,
): VegaLiteSpec {
  const bars = new Set(rows.map((r) => r.bar)).size;
  return {
    data: { values: rows },
    height: Math.max(40, 28 * bars),
    mark: "bar",
    encoding: {
      // Labels and legend entries whole (no "…"): the chart grows to hold them.
      y: { field: "bar", type: "nominal", title: barTitle, sort: null, axis: { labelLimit: 0 } },
      x: { field: "value", type: "quantitative", title: valueTitle, stack: "zero" },
      color: { field: "part", type: "nominal", title: null, sort: null, legend: { labelLimit: 0 } },
      order: { field: "order", type: "quantitative" },
    },
  };
}

const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1180px; color: #1d1d1f; padding: 0 16px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 32px; border-bottom: 1px solid #ddd; }
p.lead { color: #444; margin-top: 0; }
table { border-collapse: collapse; margin: 8px 24px 16px 0; display: inline-block; vertical-align: top; max-width: 100%; overflow-x: auto; }
caption { text-align: left; font-weight: 600; padding-bottom: 4px; }
th, td { padding: 2px 10px; border-bottom: 1px solid #eee; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.pass { color: #1e7d32; font-weight: 600; } td.fail { color: #b71c1c; font-weight: 600; }
td.worse { color: #b71c1c; } td.better { color: #1e7d32; }
figure.chart { display: inline-block; margin: 8px 16px 16px 0; vertical-align: top; }
figcaption { font-weight: 600; margin-bottom: 4px; }
.note { color: #666; font-size: 12px; }
`;

/** A whole page: title, lead line and sections (HTML). */
export function page(title: string, lead: string, sections: readonly string[]): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><h1>${escapeHtml(title)}</h1><p class="lead">${escapeHtml(lead)}</p>
${sections.join("\n")}
<p class="note">Generated by ServingCast. Charts rendered with Vega-Lite to inline SVG; the page needs no network and no JavaScript.</p>
</body></html>
`;
}

/** A section: heading and body. */
export const section = (title: string, body: string): string =>
  `<section><h2>${escapeHtml(title)}</h2>${body}</section>`;
