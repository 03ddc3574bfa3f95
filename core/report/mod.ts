/**
 * Reports: pure functions from results to text (console table, JSON,
 * Chrome trace, CSV).
 *
 * @module
 */
export { formatColumn, formatSummaryTable } from "./table.ts";
export { formatSummaryJson } from "./json.ts";
export type { JsonExtras } from "./json.ts";
export { formatChromeTrace, formatRequestCsv } from "./profile.ts";
export { formatFixed, roundHalfEven } from "./number_format.ts";
export { formatGroupTable } from "./groups.ts";
