/**
 * A progress bar on stderr for the command-line tasks (`sim`, `plan`):
 * shown only on a terminal, and only once the work has taken `delayMs`, so
 * that quick runs and redirected output stay clean. npm:cli-progress draws
 * it; it is loaded only when a bar is shown.
 *
 * @module
 */

/** A running bar: report progress, then stop (clears the bar). */
export interface Progress {
  /** `done` of `total` items; undefined when no bar is shown (not a terminal). */
  readonly onProgress?: (done: number, total: number) => void;
  /** Clears the bar (a later report draws it again). */
  stop(): void;
}

/** How a bar reads and when it appears. */
export interface ProgressOptions {
  /** Whether stderr is a terminal (no bar otherwise). */
  readonly terminal: boolean;
  /** What is being done, e.g. "simulating". */
  readonly label: string;
  /** What is counted, e.g. "requests". */
  readonly unit: string;
  /** Show the bar only after this long (default 1 s). */
  readonly delayMs?: number;
  /** Redraw at most every this many calls (default 1). */
  readonly every?: number;
}

/** A progress bar (see the module doc). */
export async function progressBar(o: ProgressOptions): Promise<Progress> {
  if (!o.terminal) return { stop: () => {} };
  const { default: cliProgress } = await import("cli-progress");
  const start = performance.now();
  const every = o.every ?? 1;
  let bar: InstanceType<typeof cliProgress.SingleBar> | undefined;
  let calls = 0;
  return {
    onProgress: (done, total) => {
      if (++calls % every !== 0 && done !== total) return;
      if (!bar) {
        if (performance.now() - start < (o.delayMs ?? 1000)) return;
        bar = new cliProgress.SingleBar(
          { stream: process.stderr, format: `${o.label} [{bar}] {value}/{total} ${o.unit}`, clearOnComplete: true },
          cliProgress.Presets.shades_classic,
        );
        bar.start(total, done);
      }
      bar.update(done);
    },
    // Stopping clears the bar; a later report draws it again (a task prints a line between two reports).
    stop: () => {
      bar?.stop();
      bar = undefined;
    },
  };
}
