/**
 * Finds the scenario files: `scenarios/*.yaml` and `scenarios/validation/*.yaml`.
 *
 * @module
 */

const root = new URL(".", import.meta.url).pathname;

function yamlIn(dir: string): string[] {
  return [...Deno.readDirSync(dir)].filter((e) => e.isFile && /\.ya?ml$/.test(e.name)).map((e) => dir + e.name).sort();
}

/** Every scenario file, the top level first. */
export function scenarioFiles(): string[] {
  return [...yamlIn(root), ...validationFiles()];
}

/** The validation scenarios (calibration cases). */
export function validationFiles(): string[] {
  return yamlIn(`${root}validation/`);
}

/** A path relative to scenarios/. */
export function relative(file: string): string {
  return file.startsWith(root) ? file.slice(root.length) : file;
}
