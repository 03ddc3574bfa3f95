/**
 * The HTML report of a calibration (`deno task calibrate … --report FILE`),
 * in either mode: for each fitted device, the constants before and after
 * with the range the fit keeps each in (and whether it ended at an end of
 * it), and every measured point's error before (with the values the
 * deployment runs with), fitted and held out, as a table and a chart.
 *
 * @module
 */
import { atBounds, boundsOf, FIT_PARAMETERS } from "./fit.ts";
import type { CalibrationResult } from "./fit.ts";
import { chart, escapeHtml, page, section, table, textCell } from "../report/html.ts";

/** One fitted device of a report: its name and what its calibration found. */
export interface CalibratedDevice {
  /** The device (or the device group of the scenarios). */
  readonly name: string;
  /** How many runs or scenarios it was fitted on, and of what kind ("runs", "scenarios"). */
  readonly fittedOn: string;
  readonly result: CalibrationResult;
}

/** A fitted constant as a person reads it: overheads in µs, efficiencies as shares (the task's lines and the page). */
export const constantText = (p: string, v: number): string =>
  p.endsWith("_overhead") ? `${(v * 1e6).toFixed(0)} µs` : v.toFixed(3);
/** A share as a percentage to one decimal: `12.5%`. */
export const percentText = (x: number): string => `${(x * 100).toFixed(1)}%`;
/** A relative error with its sign: `+12.5%`, `-3.0%`. */
export const signedPercentText = (x: number): string => `${x >= 0 ? "+" : ""}${percentText(x)}`;

/** The page's cells: "-" where a figure is missing (no cross-validation) or not finite. */
const pct = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? "-" : percentText(x));
const signed = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? "-" : signedPercentText(x));
const num = (v: string) => `<td class="num">${escapeHtml(v)}</td>`;

/** One device's sections: its constants, its points' errors as a table and as a chart. */
async function deviceSections(d: CalibratedDevice, index: number): Promise<string[]> {
  const r = d.result;
  const bounds = new Map(atBounds(r).map((b) => [b.parameter, b.bound]));
  const constants = table(
    `Constants of ${d.name}: the catalog's, and fitted within their ranges`,
    ["constant", "before", "fitted", "range", "note"],
    FIT_PARAMETERS.map((p) => {
      const { min, max } = boundsOf(p, r.start);
      const note = !r.parameters.includes(p)
        ? r.noEffect.includes(p) ? "not fitted: it moves none of these points" : "not fitted"
        : bounds.has(p)
        ? `at the ${bounds.get(p)} of its range: the model lacks what it stands in for`
        : "";
      return [
        textCell(p),
        num(constantText(p, r.start[p])),
        num(constantText(p, r.fitted[p])),
        num(`${constantText(p, min)} – ${constantText(p, max)}`),
        textCell(note),
      ];
    }),
  );
  const cv = r.crossValidation;
  const summary = `<p>Fitted on ${escapeHtml(d.fittedOn)} (${r.points} measured figures): median |error| ${
    pct(r.errorBefore)
  } before, ${pct(r.errorAfter)} fitted${
    cv ? `, ${pct(cv.after)} held out (${cv.folds}-fold cross-validation; ${pct(cv.before)} uncalibrated)` : ""
  }; rms log error ${r.rmsBefore.toFixed(3)} before, ${r.rmsAfter.toFixed(3)} after.</p>`;
  // Points by their row number on the chart (their names are long: the table gives them).
  const points = table(
    `Every measured point of ${d.name}: simulated / measured − 1`,
    ["#", "point", "metric", "measured", "before (as run)", "fitted", "held out"],
    r.errors.map((e, i) => [
      num(String(i + 1)),
      textCell(e.source.replace(/^.*[\\/]/, "")),
      textCell(e.metric),
      num(String(Number(e.measured.toPrecision(6)))),
      num(signed(e.before)),
      num(signed(e.after)),
      num(signed(e.heldOut)),
    ]),
  );
  const rows = r.errors.flatMap((e, i) => [
    { point: `#${i + 1}`, error: e.before * 100, when: "before" },
    { point: `#${i + 1}`, error: e.after * 100, when: "fitted" },
    ...(e.heldOut !== undefined ? [{ point: `#${i + 1}`, error: e.heldOut * 100, when: "held out" }] : []),
  ]);
  const errors = await chart(`errors-${index}`, `Error of each point, before and after (${d.name})`, {
    data: { values: rows },
    width: 420,
    height: { step: 18 },
    mark: { type: "point", filled: true, size: 50 },
    encoding: {
      y: { field: "point", type: "nominal", title: "point (# of the table)", sort: null },
      x: { field: "error", type: "quantitative", title: "simulated / measured − 1 (%)" },
      color: {
        field: "when",
        type: "nominal",
        title: null,
        sort: ["before", "fitted", "held out"],
        legend: { orient: "bottom", direction: "horizontal" },
      },
    },
  });
  return [section(`Calibration of ${d.name}`, summary + constants + points + errors)];
}

/**
 * The calibration report as a page.
 *
 * @param how the command that ran it, for the lead line
 * @param devices each fitted device and its result
 */
export async function calibrationReportHtml(how: string, devices: readonly CalibratedDevice[]): Promise<string> {
  const sections: string[] = [];
  for (const [i, d] of devices.entries()) sections.push(...await deviceSections(d, i));
  return page("ServingCast calibration", how, sections);
}
