/**
 * Charts as standalone SVG: a Vega-Lite specification compiled and rendered
 * headless by Vega (no browser, no JavaScript in the output). The libraries
 * are loaded on first use, so that runs without charts do not pay for them.
 *
 * @module
 */

/** A Vega-Lite specification (as JSON). */
export type VegaLiteSpec = Record<string, unknown>;

/** A chart's shape: its specification with each inline dataset replaced by a named one, and those datasets. */
interface Shape {
  /** The specification with `data: {name: "d<i>"}` for the i-th inline `data: {values}`. */
  readonly spec: VegaLiteSpec;
  /** The values of each named dataset, in order. */
  readonly values: readonly unknown[];
}

/** Splits the inline datasets (`data: {values: [...]}` and nothing else) out of a specification. */
function shapeOf(spec: VegaLiteSpec): Shape {
  const values: unknown[] = [];
  const walk = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(walk);
    if (x === null || typeof x !== "object") return x;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(x)) {
      const inline = k === "data" && v !== null && typeof v === "object" && !Array.isArray(v) &&
        Object.keys(v).length === 1 && Array.isArray((v as { values?: unknown }).values);
      if (inline) {
        out[k] = { name: `d${values.length}` };
        values.push((v as { values: unknown }).values);
      } else out[k] = walk(v);
    }
    return out;
  };
  return { spec: walk(spec) as VegaLiteSpec, values };
}

/**
 * Parsed charts by shape (the specification without its inline data): a
 * report draws the same few charts again and again with other data, and
 * compiling and parsing took half of the drawing (164 charts of the test
 * suite's reports have 21 shapes). Bounded: the oldest shape goes first.
 */
const parsedShapes = new Map<string, unknown>();
/** Shapes kept in {@link parsedShapes}. */
const PARSED_SHAPES = 64;

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
  const shape = shapeOf(spec);
  const key = JSON.stringify(shape.spec);
  let runtime = parsedShapes.get(key) as ReturnType<typeof vega.parse> | undefined;
  if (runtime === undefined) {
    runtime = vega.parse(vl.compile(shape.spec as unknown as Parameters<typeof vl.compile>[0]).spec);
    if (parsedShapes.size >= PARSED_SHAPES) parsedShapes.delete(parsedShapes.keys().next().value!);
    parsedShapes.set(key, runtime);
  }
  const view = new vega.View(runtime, { renderer: "none" });
  try {
    shape.values.forEach((v, i) => view.data(`d${i}`, v as object[]));
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
