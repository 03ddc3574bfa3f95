/**
 * The documentation's examples run here: every `ts` block of a JSDoc comment
 * (each exported function's asserting `@example`) and of a Markdown file,
 * one test each, named as `deno test --doc` names them (`file#first-last`
 * fence lines). `deno task test` type-checks them first, with the rest of
 * the code, in one `deno check --doc .` that also names every Markdown file
 * (the task's glob): `.` alone takes the JSDoc blocks, not the README's.
 *
 * Why not `deno test --doc`: it runs each block in a runtime of its own, so
 * each of the 56 blocks loaded the library and its npm dependencies again
 * (about 0.3 s of CPU each: 16 s in all for 3 s of examples, a quarter of
 * the suite's time on two cores). Here they share this module's runtime: an
 * example's `import … from "../../mod.ts"` finds the library loaded.
 *
 * The blocks are found as Deno finds them: every `.ts` and `.md` file under
 * the repository but the folders `deno.json` excludes from tests, and fences
 * tagged `ts` (or `typescript`, `js`, `javascript`, `tsx`, `jsx`) without
 * `ignore`. Each is written to a temporary module with its relative imports
 * made absolute, and imported.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { matchFiles } from "../scenarios/testing.ts";
import { NOT_TESTED, ROOT } from "./_helpers.ts";

/** One runnable block. */
export interface DocExample {
  /** `path#first-last`, the path relative to the repository, the lines those of its fences (1-based). */
  readonly name: string;
  /** The file it is in. */
  readonly file: string;
  /** Its code. */
  readonly code: string;
}

const RUNNABLE = new Set(["ts", "typescript", "js", "javascript", "tsx", "jsx"]);

/** The runnable fenced blocks of `text` (a Markdown file, or a module whose JSDoc is read). */
export function docExamples(file: string, text: string, root = ROOT): DocExample[] {
  const markdown = file.endsWith(".md");
  const lines = text.split("\n");
  const out: DocExample[] = [];
  let inComment = markdown;
  let open: { line: number; body: string[]; run: boolean } | undefined;
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i];
    if (!markdown) {
      if (!inComment) {
        if (line.includes("/**")) inComment = true;
        else continue;
      }
      const end = line.includes("*/");
      // The text of a JSDoc line: after its leading `*` and one space.
      line = line.replace(/^\s*\/?\*\*?\s?/, "");
      if (end) {
        inComment = false;
        open = undefined;
        continue;
      }
    }
    const fence = /^\s*```(.*)$/.exec(line);
    if (open === undefined) {
      if (fence) {
        const [lang = "", ...attrs] = fence[1].trim().split(/\s+/);
        open = { line: i + 1, body: [], run: RUNNABLE.has(lang) && !attrs.includes("ignore") };
      }
    } else if (fence && fence[1].trim() === "") {
      if (open.run) {
        out.push({ name: `${relative(root, file)}#${open.line}-${i + 2}`, file, code: open.body.join("\n") });
      }
      open = undefined;
    } else open.body.push(line);
  }
  return out;
}

/** `code` with its relative module specifiers made absolute against `file`. */
export function absoluteImports(code: string, file: string): string {
  const base = pathToFileURL(file);
  return code.replace(
    /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])(\.{1,2}\/[^"']*)\2/g,
    (_, lead: string, q: string, spec: string) => `${lead}${q}${new URL(spec, base).href}${q}`,
  );
}

/** The files and folders (ending in `/`) `deno.json` keeps out of tests. */
const excluded = NOT_TESTED.map((p) => join(ROOT, p));

const examples = matchFiles(ROOT, ["**/*.ts", "**/*.md"])
  .filter((f) => !excluded.some((x) => x.endsWith("/") ? f.startsWith(x) : f === x))
  .flatMap((f) => docExamples(f, Deno.readTextFileSync(f)));
const dir = Deno.makeTempDirSync({ prefix: "servingcast-doc-" });

Deno.test("docExamples() finds what deno test --doc runs: JSDoc and Markdown ts blocks, not ignored or other languages", () => {
  const ts = [
    "/**",
    " * Text.",
    " *",
    " * @example One",
    " * ```ts",
    ' * import { a } from "./a.ts";',
    " * a();",
    " * ```",
    " * ```ts ignore",
    " * never();",
    " * ```",
    " * ```yaml",
    " * k: v",
    " * ```",
    " */",
    "const x = 1; // ```ts outside a comment",
    "/** ```js",
    " * b();",
    " * ```",
    " */",
  ].join("\n");
  assert.deepEqual(docExamples(`${ROOT}core/x.ts`, ts), [
    { name: "core/x.ts#5-9", file: `${ROOT}core/x.ts`, code: 'import { a } from "./a.ts";\na();' },
    { name: "core/x.ts#17-20", file: `${ROOT}core/x.ts`, code: "b();" },
  ]);
  const md = ["# T", "```sh", "deno task sim", "```", "```ts", "c();", "```", "```ts ignore", "d();", "```"].join("\n");
  assert.deepEqual(docExamples(`${ROOT}README.md`, md).map((e) => [e.name, e.code]), [["README.md#5-8", "c();"]]);
  assert.equal(
    absoluteImports('import { a } from "../mod.ts";\nimport "./b.ts";\nawait import("./c.ts");', `${ROOT}core/x.ts`),
    `import { a } from "file://${ROOT}mod.ts";\nimport "file://${ROOT}core/b.ts";\nawait import("file://${ROOT}core/c.ts");`,
  );
  // The repository's own: the module example of mod.ts and the README's API example among them.
  assert.ok(examples.some((e) => e.name.startsWith("mod.ts#")));
  assert.ok(examples.some((e) => e.name.startsWith("README.md#")));
});

for (const [i, ex] of examples.entries()) {
  Deno.test(ex.name, async () => {
    const module = join(dir, `example_${i}.ts`);
    Deno.writeTextFileSync(module, absoluteImports(ex.code, ex.file));
    await import(pathToFileURL(module).href);
  });
}
