/**
 * The HTML report checker of the browser test: opens a page (file:// URL) in headless Chromium and lists everything
 * wrong with it against the page contract below. A page passes when the list is empty.
 *
 * The page contract (what `--report` and `deno task compare --report` pages promise):
 *
 * 1. Self-contained and clean: loading it logs no console error and throws no uncaught error (`pageerror`), and it
 *    requests nothing but file: and data: URLs (any other request is aborted and reported; about:blank is allowed).
 * 2. Charts: at least one `<figure class="chart" data-chart="ID">` (IDs non-empty and unique), each holding an inline
 *    `<svg>` as rendered by Vega's SVG renderer, with at least one mark: an element child of a `g.role-mark` group
 *    (`<g class="mark-line role-mark …"><path d="…"/></g>`; a `<path>` with an empty `d` does not count).
 * 3. Numbers: each summary number is an element with `data-json` (the value's key path in the JSON document: a
 *    JSON array of keys, `["per_metric_summary","TTFT(s)","P99.9"]`, or the keys joined by ".",
 *    `per_metric_summary.TTFT(s).P99.9`, a key with a "." resolved when unambiguous) and `data-value="RAW"` (the JSON
 *    number as `JSON.stringify` writes it), plus `data-side="a"` or `"b"` on a comparison page (the path is then into a.json or
 *    b.json). `Number(data-value)` must equal the JSON value exactly, and the element's text, read as a number (the
 *    first number in it, thousands separators `,` `'` `_` and thin/no-break spaces ignored, `−` read as `-`, an
 *    exponent allowed), must be within half a unit of its last shown decimal of the value: "15.20" for 15.19643997,
 *    "1,024,000" for 1024000. Units around the number are fine; scaling (ms for s, % for a fraction, k for 1000) is
 *    not.
 *
 * @module
 */
import type { Browser, Page } from "puppeteer-core";
import { fileUrl } from "../tools/screenshot.ts";

/** Where a page's `data-json` paths point: side name (`run` when `data-side` is absent, or `a`, `b`) to JSON. */
export type JsonSources = Readonly<Record<string, unknown>>;

/** What the page must have beyond the contract's minimums. */
export interface CheckOptions {
  /** The fewest `data-json` numbers the page must show (default 0). */
  readonly minNumbers?: number;
  /** How long to wait for every chart to have a mark, for pages that draw after `load` (default 2000 ms). */
  readonly settleMs?: number;
  /**
   * Whether `data-json` numbers are checked against `sources` (default true; false for a page whose run's JSON is
   * not written beside it, such as the plan's embedded winner).
   */
  readonly numbers?: boolean;
}

/** The outcome of checking one page. */
export interface PageCheck {
  /** Every violation of the contract, one line each; empty when the page passes. */
  readonly problems: string[];
  /** The chart IDs found, with their mark counts. */
  readonly charts: Readonly<Record<string, number>>;
  /** How many `data-json` numbers were checked. */
  readonly numbers: number;
  /** How many of them per side (`run`, `a`, `b`). */
  readonly sides: Readonly<Record<string, number>>;
}

/** One `data-json` element as read from the page. */
export interface NumberElement {
  /** `data-json`: the dot path. */
  readonly path: string;
  /** `data-side`, or null when absent. */
  readonly side: string | null;
  /** `data-value`, or null when absent. */
  readonly value: string | null;
  /** The element's text. */
  readonly text: string;
}

/** What the page script reports of the charts. */
interface ChartInfo {
  id: string | null;
  svgs: number;
  marks: number;
}

/**
 * Resolves a `data-json` path into `json`: a JSON array of keys (`["per_metric_summary","TTFT(s)","P99.9"]`; a number
 * indexes an array), or keys joined by "." (`per_metric_summary.TTFT(s).P99.9`). A key may contain "." itself, so in
 * the dotted form every way of grouping the segments into keys is tried. The result is the one value reached, or
 * `{ error }` when none or several are.
 *
 * @param json the document
 * @param path the `data-json` attribute
 */
export function resolveJsonPath(json: unknown, path: string): { value: unknown } | { error: string } {
  const has = (node: unknown, key: string | number): node is Record<string | number, unknown> =>
    node !== null && typeof node === "object" && Object.hasOwn(node, key);
  if (path.trimStart().startsWith("[")) {
    let keys: unknown;
    try {
      keys = JSON.parse(path);
    } catch {
      keys = undefined;
    }
    if (!Array.isArray(keys) || !keys.every((k) => typeof k === "string" || typeof k === "number")) {
      return { error: "not a JSON array of keys" };
    }
    let node = json;
    for (const k of keys as (string | number)[]) {
      if (!has(node, k)) return { error: "no such path" };
      node = node[k];
    }
    return { value: node };
  }
  const found: unknown[] = [];
  const walk = (node: unknown, segs: readonly string[]): void => {
    if (segs.length === 0) {
      found.push(node);
      return;
    }
    for (let k = 1; k <= segs.length; k++) {
      const key = segs.slice(0, k).join(".");
      if (has(node, key)) walk(node[key], segs.slice(k));
    }
  };
  if (path !== "") walk(json, path.split("."));
  if (found.length === 1) return { value: found[0] };
  return { error: found.length === 0 ? "no such path" : `ambiguous path (${found.length} matches)` };
}

/**
 * The number a visible text shows and the rounding it implies: `{ shown, halfUnit }` (half a unit of the last shown
 * digit), or undefined when the text holds no number.
 *
 * @param text the element's text, e.g. "1,024,000", "15.20 req/s", "−0.5", "1.2e-5"
 */
export function parseShownNumber(text: string): { shown: number; halfUnit: number } | undefined {
  const cleaned = text.replace(/[,'_\u00a0\u2009\u202f]/g, "").replace(/\u2212/g, "-");
  const m = /[-+]?(?:(\d+)(?:\.(\d*))?|\.(\d+))(?:[eE]([-+]?\d+))?/.exec(cleaned);
  if (!m) return undefined;
  const decimals = (m[2] ?? m[3] ?? "").length;
  const exponent = m[4] === undefined ? 0 : Number(m[4]);
  return { shown: Number(m[0]), halfUnit: 0.5 * 10 ** (exponent - decimals) };
}

/**
 * The problems of one `data-json` element against its JSON, or an empty list.
 *
 * @param el the element's attributes and text
 * @param sources the JSON documents by side
 */
export function numberProblems(el: NumberElement, sources: JsonSources): string[] {
  const side = el.side ?? "run";
  const where = `[data-json="${el.path}"${el.side === null ? "" : ` data-side="${el.side}"`}]`;
  if (!Object.hasOwn(sources, side)) {
    const known = Object.keys(sources).map((s) => (s === "run" ? "(none)" : `"${s}"`)).join(", ");
    return [`${where}: data-side must be one of ${known}`];
  }
  const r = resolveJsonPath(sources[side], el.path);
  if ("error" in r) return [`${where}: ${r.error} in the ${side === "run" ? "run's" : `${side} side's`} JSON`];
  if (typeof r.value !== "number") return [`${where}: the JSON value is ${JSON.stringify(r.value)}, not a number`];
  const problems: string[] = [];
  if (el.value === null || el.value.trim() === "" || Number(el.value) !== r.value) {
    problems.push(`${where}: data-value ${JSON.stringify(el.value)} ≠ JSON ${r.value}`);
  }
  const shown = parseShownNumber(el.text);
  if (shown === undefined) {
    problems.push(`${where}: the text ${JSON.stringify(el.text)} shows no number (JSON ${r.value})`);
  } else if (!(Math.abs(shown.shown - r.value) <= shown.halfUnit * (1 + 1e-9) + 1e-12 * Math.abs(r.value))) {
    problems.push(
      `${where}: the text ${JSON.stringify(el.text.trim())} is ${shown.shown}, not JSON ${r.value} ` +
        `rounded to ±${shown.halfUnit}`,
    );
  }
  return problems;
}

/** The window width pages are checked at, px: a laptop's, and the width `deno task screenshot` renders. */
export const VIEWPORT_WIDTH = 1280;

/**
 * An axis title's unit: in parentheses at its end (`TTFT p99 (s)`, `offered rate (req/s)`), or a count or share
 * said as such (`instances (count)`, `(share)`).
 */
const UNIT = /\([^()]+\)$/;

/** What the page script reads (charts and numbers), for the checks in Deno. */
interface PageReading {
  charts: ChartInfo[];
  numbers: NumberElement[];
  /** The page's scroll width, px, at the 1,280 px viewport. */
  width: number;
  /** Each chart's text its SVG cuts, and its labelled axes: title ("" for none), and whether its labels are numbers. */
  layout: { id: string | null; cut: string[]; axes: { title: string; numeric: boolean }[] }[];
}

/**
 * The script that reads the page: for each `figure.chart` its ID, its `<svg>` count and its marks (element children
 * of `g.role-mark` groups, not nested groups, not paths with an empty `d`), and every `[data-json]` element. A string
 * (evaluated in the page's main world): quicker than puppeteer's `$$eval`, which first injects its helpers (≈0.1 s).
 */
const READ_PAGE = `(() => {
  const charts = [...document.querySelectorAll("figure.chart")].map((f) => {
    let marks = 0;
    for (const g of f.querySelectorAll("svg g.role-mark")) {
      for (const m of g.children) {
        const tag = m.tagName.toLowerCase();
        if (tag === "g" || (tag === "path" && !(m.getAttribute("d") || "").trim())) continue;
        marks++;
      }
    }
    return { id: f.getAttribute("data-chart"), svgs: f.querySelectorAll("svg").length, marks };
  });
  // Layout: the page's width, text an SVG cuts (outside the svg's box, or shortened with an ellipsis), axis titles.
  const width = document.documentElement.scrollWidth;
  const layout = [...document.querySelectorAll("figure.chart")].map((f) => {
    const svg = f.querySelector("svg");
    if (!svg) return { id: f.getAttribute("data-chart"), cut: [], axes: [], axisTitles: [] };
    const box = svg.getBoundingClientRect();
    const cut = [];
    for (const t of svg.querySelectorAll("text")) {
      const s = (t.textContent || "").trim();
      const r = t.getBoundingClientRect();
      if (!s || r.width === 0) continue;
      const out = r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1;
      if (out || s.endsWith("…")) cut.push(s);
    }
    // The axes with labels (Vega-Lite draws an axis's grid as another, unlabelled, axis group).
    const axes = [...svg.querySelectorAll("g.role-axis")].filter((a) => a.querySelector(".role-axis-label text"))
      .map((a) => {
        const t = a.querySelector(".role-axis-title text");
        // An axis of numbers needs a unit; one of names (a bar per group) only a title.
        const labels = [...a.querySelectorAll(".role-axis-label text")].map((l) => (l.textContent || "").trim());
        const numeric = labels.every((l) => /^[-−+]?[\\d.,]+(e[-+]?\\d+)?[kMGµ%]?$/i.test(l));
        return { title: t ? (t.textContent || "").trim() : "", numeric };
      });
    return { id: f.getAttribute("data-chart"), cut, axes };
  });
  const numbers = [...document.querySelectorAll("[data-json]")].map((e) => ({
    path: e.getAttribute("data-json") || "",
    side: e.getAttribute("data-side"),
    value: e.getAttribute("data-value"),
    text: e.textContent || "",
  }));
  return { charts, numbers, width, layout };
})()`;

/** Reads the page, waiting up to `settleMs` for every chart to have a mark (for pages that draw after `load`). */
async function readPage(page: Page, settleMs: number): Promise<PageReading> {
  // Polled every 50 ms, so many times (a count, not a clock: a loaded machine only makes the wait longer).
  for (let left = Math.ceil(settleMs / 50);; left--) {
    const reading = await page.evaluate(READ_PAGE) as PageReading;
    if (reading.charts.every((c) => c.marks > 0) || left <= 0) return reading;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Checks pages against the page contract (see the module's doc) in one tab of a running Chromium, page after page:
 * a new tab per page costs ≈0.1 s more. Between pages the tab goes to about:blank, and anything the previous page
 * still logs is dropped.
 */
export class ReportChecker {
  readonly #browser: Browser;
  #page: Page | undefined;
  /** Where the current page's console errors, page errors and requests go; undefined between pages. */
  #problems: string[] | undefined;

  /** @param browser a running Chromium */
  constructor(browser: Browser) {
    this.#browser = browser;
  }

  async #tab(): Promise<Page> {
    if (this.#page) return this.#page;
    const page = await this.#browser.newPage();
    await page.setViewport({ width: VIEWPORT_WIDTH, height: 800 });
    page.on("console", (m) => {
      if (m.type() === "error") this.#problems?.push(`console error: ${m.text()}`);
    });
    page.on("pageerror", (e) => this.#problems?.push(`page error: ${e instanceof Error ? e.message : String(e)}`));
    await page.setRequestInterception(true);
    page.on("request", (req) => {
      const url = req.url();
      if (/^(file|data|about):/i.test(url)) {
        void req.continue().catch(() => {});
      } else {
        this.#problems?.push(`network request outside file: and data: (aborted): ${url}`);
        void req.abort().catch(() => {});
      }
    });
    return this.#page = page;
  }

  /**
   * Opens `htmlPath` (as a file:// URL) and lists what breaks the page contract.
   *
   * @param htmlPath the page's file
   * @param sources the JSON documents its numbers come from: `{ run }` for a run report, `{ a, b }` for a comparison
   * @param options minimums and waiting
   */
  async check(htmlPath: string, sources: JsonSources, options: CheckOptions = {}): Promise<PageCheck> {
    const page = await this.#tab();
    this.#problems = undefined;
    await page.goto("about:blank", { waitUntil: "load" });
    const problems: string[] = [];
    this.#problems = problems;
    try {
      await page.goto(fileUrl(htmlPath), { waitUntil: "load", timeout: 30_000 });
      // Pages that draw their charts after `load` get a moment; server-rendered ones pass at once.
      const { charts, numbers, width, layout } = await readPage(page, options.settleMs ?? 2000);
      // Layout: the page fits the 1,280 px window; no chart cuts its text; every axis has a title with its unit.
      if (width > VIEWPORT_WIDTH) problems.push(`the page is ${width} px wide at a ${VIEWPORT_WIDTH} px window`);
      for (const l of layout) {
        const name = `chart "${l.id}"`;
        for (const text of l.cut) problems.push(`${name}: text cut by its SVG: ${JSON.stringify(text)}`);
        for (const { title, numeric } of l.axes) {
          if (!title) problems.push(`${name}: an axis without a title`);
          else if (numeric && !UNIT.test(title)) {
            problems.push(`${name}: axis title ${JSON.stringify(title)} names no unit`);
          }
        }
      }
      const chartMarks: Record<string, number> = {};
      if (charts.length === 0) problems.push(`no <figure class="chart" data-chart="ID"> in the page`);
      charts.forEach((c, i) => {
        const name = c.id ? `chart "${c.id}"` : `chart #${i + 1}`;
        if (!c.id) problems.push(`${name}: <figure class="chart"> without a data-chart ID`);
        else if (Object.hasOwn(chartMarks, c.id)) problems.push(`${name}: data-chart ID used twice`);
        else chartMarks[c.id] = c.marks;
        if (c.svgs === 0) problems.push(`${name}: no inline <svg>`);
        else if (c.marks === 0) problems.push(`${name}: the <svg> has no mark (no child of a g.role-mark group)`);
      });
      if (options.numbers !== false) { for (const el of numbers) problems.push(...numberProblems(el, sources)); }
      const minNumbers = options.minNumbers ?? 0;
      if (numbers.length < minNumbers) {
        problems.push(`${numbers.length} [data-json] numbers in the page; expected at least ${minNumbers}`);
      }
      const sides: Record<string, number> = {};
      for (const el of numbers) sides[el.side ?? "run"] = (sides[el.side ?? "run"] ?? 0) + 1;
      return {
        problems: [...problems],
        charts: chartMarks,
        numbers: numbers.length,
        sides,
      };
    } finally {
      this.#problems = undefined;
    }
  }

  /** Closes the tab (the browser stays). */
  async close(): Promise<void> {
    await this.#page?.close();
    this.#page = undefined;
  }
}
