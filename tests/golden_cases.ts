/**
 * The CLI runs whose stdout is pinned in tests/testdata/.
 *
 * @module
 */

/** A pinned run. */
export interface GoldenCase {
  /** File under tests/testdata/. */
  file: string;
  /** CLI arguments. */
  args: string[];
}

/** Every pinned run. */
export const GOLDEN: GoldenCase[] = [
  { file: "example.golden.txt", args: [] },
  { file: "example.golden.json", args: ["--format", "json"] },
];
