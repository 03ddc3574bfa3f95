/**
 * Reports: pure functions from results to text (console table, JSON,
 * Chrome trace, CSV).
 *
 * @module
 */
export { formatColumn, formatFrame, formatKeyValue, formatSummaryTable } from "./table.ts";
export { formatExtSection } from "./ext_table.ts";
export { formatSummaryJson, summaryExtSections } from "./json.ts";
export type { JsonExtras } from "./json.ts";
export { formatChromeTrace, formatRequestCsv } from "./profiling.ts";
export { formatFixed, roundHalfEven } from "./number_format.ts";
export { formatGroupTable } from "./groups.ts";
export { renderSvg } from "./svg.ts";
export type { VegaLiteSpec } from "./svg.ts";
