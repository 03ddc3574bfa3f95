/**
 * The one column aligner behind every text table ServingCast prints: the
 * upstream summary, the instance-group table, sweep rows, baseline changes,
 * the fidelity table and the model and device catalogs (text and Markdown).
 *
 * @module
 */

/** How a column's cells are padded to its width. */
export type Align = "left" | "right";

/** Layout of {@link alignColumns}. */
export interface ColumnLayout {
  /** Each column's alignment (default left); a function of the column index, or a list (missing entries: left). */
  readonly align?: readonly Align[] | ((column: number) => Align);
  /** Between cells (default two spaces). */
  readonly separator?: string;
  /** Before each line (default none). */
  readonly start?: string;
  /**
   * After each line (default none). Without one, trailing spaces are trimmed,
   * so a left-aligned last column (free text) is not padded.
   */
  readonly end?: string;
}

/**
 * Lays rows of cells out in columns as wide as their widest cell.
 *
 * @param rows the rows (the header first, when there is one), each with the same number of cells
 * @param layout alignment, separator and line ends
 * @returns one line per row
 *
 * @example A left-aligned label column and a right-aligned number column
 * ```ts
 * import { alignColumns } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const lines = alignColumns([["name", "tok/s"], ["a", "12.5"], ["long name", "3.0"]], { align: ["left", "right"] });
 * assert.deepEqual(lines, ["name       tok/s", "a           12.5", "long name    3.0"]);
 * ```
 */
export function alignColumns(rows: readonly (readonly string[])[], layout: ColumnLayout = {}): string[] {
  const { align = [], separator = "  ", start = "", end = "" } = layout;
  const alignOf = typeof align === "function" ? align : (i: number) => align[i] ?? "left";
  const widths = columnWidths(rows);
  const right = widths.map((_, i) => alignOf(i) === "right");
  return rows.map((row) => {
    const line = start + row.map((c, i) => (right[i] ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join(separator) +
      end;
    return end ? line : line.trimEnd();
  });
}

/**
 * The width of each column of `rows`: its widest cell.
 *
 * @param rows the rows of cells
 * @returns one width per column
 *
 * @example
 * ```ts
 * import { columnWidths } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(columnWidths([["a", "bbb"], ["cc", ""]]), [2, 3]);
 * ```
 */
export function columnWidths(rows: readonly (readonly string[])[]): number[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return widths;
}
