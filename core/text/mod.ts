/**
 * Plain-text layout shared by every layer that prints: columns aligned to
 * their widest cell.
 *
 * @module
 */
export { alignColumns, columnWidths } from "./columns.ts";
export type { Align, ColumnLayout } from "./columns.ts";
