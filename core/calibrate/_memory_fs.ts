/**
 * A file system of files in memory, for tests: core's own (which do not import from tests/) and, through
 * tests/_helpers.ts, the top-level ones.
 *
 * @module
 */
import type { FileSystem } from "../config/load.ts";

/** Reads `files[path]`; any other path is not found. */
export function memoryFs(files: Record<string, string>): FileSystem {
  return {
    readText: (p) => {
      if (!Object.hasOwn(files, p)) throw new Deno.errors.NotFound(p);
      return files[p];
    },
    isDirectory: () => false,
  };
}
