/**
 * The command line's output paths: checked before the run (so that a typo
 * costs no simulation), and written with errors a user can act on.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import { clip } from "./core/config/errors.ts";

/** A file the command line cannot write: exit 2 with its message. */
export class OutputError extends Error {
  /**
   * @param message one line naming the flag and the path
   */
  constructor(message: string) {
    super(message);
    this.name = "OutputError";
  }
}

/** The file's status; undefined when it does not exist, null when it cannot be known (then the write is tried). */
function statOf(path: string): Deno.FileInfo | undefined | null {
  try {
    return Deno.statSync(path);
  } catch (e) {
    return e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory ? undefined : null;
  }
}

/** Why an error of the file system happened, in a few words. */
export function reason(e: unknown): string {
  if (e instanceof Deno.errors.NotFound) return "no such file or directory";
  if (e instanceof Deno.errors.PermissionDenied) return "permission denied";
  if (e instanceof Deno.errors.IsADirectory) return "is a directory";
  const m = e instanceof Error ? e.message.split("\n")[0] : String(e);
  // Deno's messages end with the call: "No space left on device (os error 28): write '…'".
  return m.replace(/ \(os error \d+\).*$/, "").replace(/^./, (c) => c.toLowerCase());
}

/**
 * Why `path` cannot be written as a file by `flag`, or undefined when it can
 * be tried: its folder must exist and be a folder; it must not be a folder
 * or name one (`out/`, `.`), nor be one of `inputs` (the run's input files:
 * an output never overwrites one); its name must fit in 255 bytes. A file
 * the user named may be a link or a device (`/dev/stdout`); a file a task
 * names itself inside a folder the user named (`inFolder`) must be a
 * regular file or new, never a symbolic link: outputs never leave the
 * named folder through one.
 */
export function outputFileProblem(
  flag: string,
  path: string,
  inputs: readonly string[] = [],
  inFolder = false,
): string | undefined {
  if (path === "") return `${flag}: expected a file path, got ''`;
  const shown = clip(path);
  if (path.includes("\0")) return `${flag}: ${shown} holds a NUL character; no file can be named so`;
  const target = statOf(path);
  if (target?.isDirectory) return `${flag}: ${shown} is a directory; expected a file path`;
  if (/[\\/]$/.test(path) || /(^|[\\/])\.\.?$/.test(path)) {
    return `${flag}: ${shown} names a folder; expected a file path`;
  }
  if (new TextEncoder().encode(basename(path)).length > NAME_MAX) {
    return `${flag}: cannot write ${shown}: its file name is longer than ${NAME_MAX} bytes`;
  }
  if (inFolder && lstatOf(path)?.isSymlink) {
    return `${flag}: ${shown} is a symbolic link; outputs are never written through one (remove it)`;
  }
  if (inFolder && target && !target.isFile) return `${flag}: ${shown} is not a regular file (a FIFO, device or socket)`;
  if (target) {
    const input = inputs.find((i) => sameFile(statOf(i), target));
    if (input !== undefined) {
      return `${flag}: ${shown} is an input of this run${
        input === path ? "" : ` (${clip(input)})`
      }; refusing to overwrite it`;
    }
  }
  const parent = dirname(path);
  const dir = statOf(parent);
  if (dir === null) return undefined;
  if (!dir) return `${flag}: cannot write ${shown}: folder ${clip(parent)} does not exist`;
  if (!dir.isDirectory) return `${flag}: cannot write ${shown}: ${clip(parent)} is not a folder`;
  return undefined;
}

/**
 * Why `path` cannot hold output folders for `flag`, or undefined: it must be
 * a folder, or not exist yet below a folder that does (it is created).
 */
export function outputDirProblem(flag: string, path: string): string | undefined {
  if (path.includes("\0")) return `${flag}: ${clip(path)} holds a NUL character; no folder can be named so`;
  const target = statOf(path);
  if (target !== undefined) return target?.isDirectory === false ? `${flag}: ${path} is not a folder` : undefined;
  // Created with its parents at the end of the run: the nearest existing ancestor must be a folder.
  let up = dirname(path);
  let s = statOf(up);
  while (s === undefined) {
    const next = dirname(up);
    if (next === up) return undefined;
    up = next;
    s = statOf(up);
  }
  return s?.isDirectory === false ? `${flag}: cannot create ${path}: ${up} is not a folder` : undefined;
}

/** The longest file name most file systems take (ext4, XFS, APFS, NTFS: 255). */
const NAME_MAX = 255;

/** The link's own status (not its target's); undefined when nothing is there. */
function lstatOf(path: string): Deno.FileInfo | undefined {
  try {
    return Deno.lstatSync(path);
  } catch {
    return undefined;
  }
}

/** Whether two statuses are of one file (device and inode; paths compared otherwise). */
function sameFile(a: Deno.FileInfo | undefined | null, b: Deno.FileInfo): boolean {
  if (!a) return false;
  return a.dev === b.dev && a.ino !== null && a.ino === b.ino;
}

/**
 * Writes `text` to `path` for `flag`, after {@link outputFileProblem}: never
 * over an input, and for a file the task names inside the user's folder
 * (`inFolder`) never through a symbolic link or into a FIFO. The one way a
 * task writes a file.
 */
export function writeOutput(
  flag: string,
  path: string,
  text: string,
  inputs: readonly string[] = [],
  inFolder = false,
): void {
  const problem = outputFileProblem(flag, path, inputs, inFolder);
  if (problem) throw new OutputError(problem);
  writeFor(flag, path, () => Deno.writeTextFileSync(path, text));
}

/**
 * Creates the output folder `dir` (with its parents) for `flag`, after
 * {@link outputDirProblem}; a folder below it the task names itself
 * (`sub`, e.g. `__baselines__`) must not be a symbolic link: outputs never
 * leave the folder the user named through one.
 *
 * @returns the folder written into (`dir`, or `dir/sub`)
 */
export function makeOutputDir(flag: string, dir: string, sub?: string): string {
  const problem = outputDirProblem(flag, dir);
  if (problem) throw new OutputError(problem);
  const target = sub === undefined ? dir : join(dir, sub);
  if (sub !== undefined && lstatOf(target)?.isSymlink) {
    throw new OutputError(
      `${flag}: ${clip(target)} is a symbolic link; outputs are never written through one (remove it)`,
    );
  }
  writeFor(flag, target, () => Deno.mkdirSync(target, { recursive: true }));
  return target;
}

/**
 * Runs a write for `flag`; a file-system error becomes an {@link OutputError}
 * naming the flag and the path.
 */
export function writeFor<T>(flag: string, path: string, write: () => T): T {
  try {
    return write();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.PermissionDenied || isIoError(e)) {
      throw new OutputError(`${flag}: cannot write ${path}: ${reason(e)}`);
    }
    throw e;
  }
}

function isIoError(e: unknown): boolean {
  return e instanceof Error && (e.name in Deno.errors || /\(os error \d+\)/.test(e.message));
}
