/**
 * Charts as standalone SVG: a Vega-Lite specification compiled and rendered
 * headless by Vega (no browser, no JavaScript in the output). The libraries
 * are loaded on first use, so that runs without charts do not pay for them.
 *
 * @module
 */

/** A Vega-Lite specification (as JSON). */
export type VegaLiteSpec = Record<string, unknown>;

/**
 * Renders a Vega-Lite specification to an SVG document.
 *
 * @param spec the chart
 * @returns the SVG text
 *
 * @example
 * ```ts
 * import { renderSvg } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const svg = await renderSvg({
 *   data: { values: [{ x: 1, y: 2 }, { x: 2, y: 3 }] },
 *   mark: "point",
 *   encoding: { x: { field: "x", type: "quantitative" }, y: { field: "y", type: "quantitative" } },
 * });
 * assert.match(svg, /^<svg /);
 * ```
 */
export async function renderSvg(spec: VegaLiteSpec): Promise<string> {
  const [vega, vl] = await Promise.all([import("vega"), import("vega-lite")]);
  const compiled = vl.compile(spec as unknown as Parameters<typeof vl.compile>[0]).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
