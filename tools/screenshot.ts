/**
 * `deno task screenshot PAGE.html OUT.png`: renders an HTML file (a `--report` page, say) to a full-page PNG, 1280
 * pixels wide, in headless Chromium. Also the browser launcher of the browser test (tests/report_browser_test.ts).
 *
 * The browser is Debian's `chromium` package (`/usr/bin/chromium`, or `chromium` on the PATH; `.ci/run` installs it),
 * driven over the DevTools protocol by `puppeteer-core` from npm (no browser download of its own).
 *
 * Why puppeteer-core and not playwright-core: both drive Debian's Chromium under Deno 2.9.6 (measured: launch ≈0.4 s,
 * a page ≈0.1-0.3 s), but playwright-core 1.65.1 cannot even be imported under a Deno permission set short of `-A`: its
 * bundled `is-wsl` calls `fs.existsSync("/proc/sys/fs/binfmt_misc/WSLInterop")` at import, and Deno asks for
 * `--allow-all` for any path under /proc/sys (denoland/deno#27564); its bundled `debug` also enumerates the whole
 * environment. puppeteer-core runs with read, write, `run` of the browser and four environment variables
 * ({@link DRIVER_ENV}), talking to the browser over a pipe (no network permission).
 *
 * Exit codes: 0 written; 1 the browser is missing or failed; 2 bad arguments (one line).
 *
 * @module
 */
import puppeteer from "puppeteer-core";
import type { Browser } from "puppeteer-core";
import { CONSOLE_OUTPUT, readTaskArgs, usageLine } from "../scenarios/_args.ts";
import type { TaskOutput } from "../scenarios/_args.ts";
import { outputFileProblem } from "../cli_output.ts";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { taskMain } from "../scenarios/_args.ts";

const USAGE = `Usage: deno task screenshot PAGE.html OUT.png [--width 1280] [--max_height PX]

Renders PAGE.html (opened as a file:// URL) in headless Chromium in a window
WIDTH pixels wide (default 1280) and writes the whole page height, not just the
first screen, as a PNG WIDTH pixels wide (content wider than that is cut, with a note);
with --max_height, only the page's top PX pixels (a README's picture of a long page).
Needs Debian's chromium package (/usr/bin/chromium or chromium on the PATH;
SERVINGCAST_CHROMIUM names another binary).`;

/** The environment variables puppeteer-core reads under Deno (its `ws` and launcher); none is required. */
export const DRIVER_ENV = [
  "WS_NO_BUFFER_UTIL",
  "PUPPETEER_TEST_EXPERIMENTAL_CHROME_FEATURES",
  "PUPPETEER_DANGEROUS_NO_SANDBOX",
  "NODE_V8_COVERAGE",
] as const;

/**
 * The switches Chromium starts with (besides puppeteer's own and `--headless`): no sandbox (root in CI), no GPU, and
 * none of its background connections, which a closed network refuses (and which an offline report must not need).
 */
export const CHROMIUM_ARGS: readonly string[] = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

function isExecutableFile(path: string): boolean {
  try {
    const s = Deno.statSync(path);
    return s.isFile && ((s.mode ?? 0o111) & 0o111) !== 0;
  } catch {
    return false;
  }
}

function envGet(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined; // no permission to read it: as if unset
  }
}

/**
 * The Chromium binary to drive: `SERVINGCAST_CHROMIUM` when set (undefined if that is not an executable file), else
 * `/usr/bin/chromium`, else `chromium` or `chromium-browser` on the PATH; undefined when there is none.
 */
export function findChromium(): string | undefined {
  const override = envGet("SERVINGCAST_CHROMIUM");
  if (override !== undefined && override !== "") return isExecutableFile(override) ? override : undefined;
  if (isExecutableFile("/usr/bin/chromium")) return "/usr/bin/chromium";
  for (const dir of (envGet("PATH") ?? "").split(":")) {
    if (dir === "") continue;
    for (const name of ["chromium", "chromium-browser"]) {
      if (isExecutableFile(`${dir}/${name}`)) return `${dir}/${name}`;
    }
  }
  return undefined;
}

/** A running headless Chromium and its throwaway profile folder; `close()` ends it and removes the folder. */
export interface Chromium {
  /** The puppeteer browser. */
  readonly browser: Browser;
  /** Ends the browser and removes its profile folder. */
  close(): Promise<void>;
}

/**
 * Starts headless Chromium (`executablePath`) with a fresh profile in a new temporary folder, over a pipe.
 *
 * @param executablePath the binary, as {@link findChromium} finds it
 */
export async function launchChromium(executablePath: string): Promise<Chromium> {
  const profile = await Deno.makeTempDir({ prefix: "servingcast-chromium-" });
  let browser: Browser;
  try {
    browser = await puppeteer.launch({
      executablePath,
      headless: true,
      pipe: true,
      userDataDir: profile,
      args: [...CHROMIUM_ARGS],
      // Debian's /usr/bin/chromium is a shell script: it needs a PATH, and nothing else of ours.
      env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      timeout: 30_000,
      protocolTimeout: 30_000,
    });
  } catch (e) {
    await Deno.remove(profile, { recursive: true }).catch(() => {});
    throw e;
  }
  return {
    browser,
    async close() {
      try {
        await browser.close();
      } finally {
        await Deno.remove(profile, { recursive: true }).catch(() => {});
      }
    },
  };
}

/** The file:// URL of a path (relative to the working folder). */
export function fileUrl(path: string): string {
  return pathToFileURL(resolve(path)).href;
}

/** A rendered page: the PNG, and the page's own size (wider than the PNG when its content overflows the width). */
export interface Screenshot {
  /** The PNG file's bytes: `width` CSS pixels wide, the page's full height. */
  readonly png: Uint8Array;
  /** The page's scroll width, in CSS pixels. */
  readonly pageWidth: number;
  /** The page's scroll height, in CSS pixels. */
  readonly pageHeight: number;
}

/**
 * Renders `htmlPath` in a `width`-pixel-wide window to a PNG of the whole page height, `width` pixels wide (content
 * that overflows to the right is cut; {@link Screenshot.pageWidth} tells).
 *
 * @param browser a running browser
 * @param htmlPath the page's file
 * @param width the window width in CSS pixels
 * @param maxHeight the most of the page's height the PNG shows, from its top
 */
export async function screenshotPage(
  browser: Browser,
  htmlPath: string,
  width = 1280,
  maxHeight = Infinity,
): Promise<Screenshot> {
  const page = await browser.newPage();
  try {
    await page.setViewport({ width, height: 800 });
    await page.goto(fileUrl(htmlPath), { waitUntil: "load", timeout: 30_000 });
    const [pageWidth, pageHeight] = await page.evaluate(
      "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]",
    ) as [number, number];
    const png = await page.screenshot({
      type: "png",
      clip: { x: 0, y: 0, width, height: Math.max(1, Math.min(pageHeight, maxHeight)) },
      captureBeyondViewport: true,
    });
    return { png, pageWidth, pageHeight };
  } finally {
    await page.close();
  }
}

/** `deno task screenshot` in-process: its arguments and where its lines go, to its exit code. */
export async function runScreenshot(argv: readonly string[], io: TaskOutput = CONSOLE_OUTPUT): Promise<number> {
  const parsed = readTaskArgs(
    { task: "screenshot", usage: USAGE, options: ["--width", "--max_height"], files: true },
    argv,
    io,
  );
  if (typeof parsed === "number") return parsed;
  const bad = (message: string) => {
    io.err(usageLine("screenshot", message));
    return 2;
  };
  const { files, options } = parsed;
  if (files.length !== 2) return bad(`expected PAGE.html OUT.png, got ${files.length} file argument(s)`);
  const [html, png] = files;
  const widthText = options["--width"]?.at(-1);
  const width = widthText === undefined ? 1280 : Number(widthText);
  if (!Number.isSafeInteger(width) || width < 100 || width > 10_000) {
    return bad(`--width: expected an integer from 100 to 10000, got '${widthText}'`);
  }
  const maxText = options["--max_height"]?.at(-1);
  const maxHeight = maxText === undefined ? Infinity : Number(maxText);
  if (maxText !== undefined && (!Number.isSafeInteger(maxHeight) || maxHeight < 100)) {
    return bad(`--max_height: expected an integer of at least 100, got '${maxText}'`);
  }
  let info: Deno.FileInfo | undefined;
  try {
    info = Deno.statSync(html);
  } catch {
    info = undefined;
  }
  if (!info?.isFile) return bad(`${html}: no such file`);
  if (!/\.png$/i.test(png)) return bad(`${png}: expected a .png output path`);
  const problem = outputFileProblem("OUT.png", png);
  if (problem) return bad(problem);
  const chromium = findChromium();
  if (chromium === undefined) {
    io.err("screenshot: no Chromium found (install Debian's chromium package: apt-get install -y chromium)");
    return 1;
  }
  let browser: Chromium;
  try {
    browser = await launchChromium(chromium);
  } catch (e) {
    io.err(`screenshot: could not start ${chromium}: ${e instanceof Error ? e.message.split("\n")[0] : e}`);
    return 1;
  }
  try {
    const shot = await screenshotPage(browser.browser, html, width, maxHeight);
    await Deno.writeFile(png, shot.png);
    io.out(`wrote ${png} (${width}×${Math.min(shot.pageHeight, maxHeight)} px, ${shot.png.length} bytes)`);
    if (shot.pageWidth > width) {
      io.err(
        `screenshot: note: ${html} is ${shot.pageWidth} px wide at a ${width} px window; the PNG shows its left ${width} px`,
      );
    }
    return 0;
  } catch (e) {
    io.err(`screenshot: ${html}: ${e instanceof Error ? e.message.split("\n")[0] : e}`);
    return 1;
  } finally {
    await browser.close();
  }
}

if (import.meta.main) Deno.exitCode = await taskMain("screenshot", () => runScreenshot(Deno.args));
