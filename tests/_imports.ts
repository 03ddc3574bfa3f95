/**
 * The imports of a TypeScript module, read from its text: `import … from "…"`, `import type … from "…"`,
 * `import "…"`, `export … from "…"` and `import("…")` with a string literal. A small tokenizer skips comments,
 * strings, template literals and regular expressions first, so an import written in a doc example, an error message
 * or generated code is not taken for one. What tests/import_graph_test.ts builds its graph from.
 *
 * @module
 */

/** How a module names another. */
export type ImportKind = "import" | "import type" | "side effect" | "export" | "export type" | "dynamic";

/** One import of a module. */
export interface ImportRef {
  /** The specifier as written (`./x.ts`, `../config/load.ts`, `zod`). */
  readonly specifier: string;
  /** 1-based line of the `import` or `export` keyword. */
  readonly line: number;
  /** Which form names it. */
  readonly kind: ImportKind;
}

/** A token of the skeleton: a word, a punctuator, a string literal (its value), or anything else that ends a value. */
interface Token {
  readonly kind: "word" | "punct" | "string" | "value";
  readonly text: string;
  readonly line: number;
}

/** Words after which a `/` starts a regular expression rather than a division. */
const BEFORE_EXPRESSION = new Set([
  "return",
  "typeof",
  "instanceof",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
  "case",
  "do",
  "else",
  "yield",
  "await",
]);

const WORD_START = /[\p{ID_Start}$_]/u;
const WORD_PART = /[\p{ID_Continue}$\u200c\u200d]/u;

/** The tokens of `src`, without comments, template text and regular expressions' bodies. */
function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  let line = 1;
  let depth = 0;
  /** For each open `${` of a template, the brace depth its `}` closes at. */
  const substitutions: number[] = [];
  const advanceTo = (end: number) => {
    for (let k = i; k < end; k++) if (src[k] === "\n") line++;
    i = end;
  };
  const regexAllowed = () => {
    const prev = out.at(-1);
    if (!prev) return true;
    if (prev.kind === "word") return BEFORE_EXPRESSION.has(prev.text);
    if (prev.kind !== "punct") return false;
    return prev.text !== ")" && prev.text !== "]" && prev.text !== "}";
  };
  /** Reads template text from `i` to its end (a value) or to a `${` (code follows). */
  const template = () => {
    while (i < src.length) {
      const c = src[i];
      if (c === "\\") advanceTo(i + 2);
      else if (c === "`") {
        advanceTo(i + 1);
        out.push({ kind: "value", text: "`…`", line });
        return;
      } else if (c === "$" && src[i + 1] === "{") {
        advanceTo(i + 2);
        substitutions.push(depth);
        out.push({ kind: "punct", text: "${", line });
        return;
      } else advanceTo(i + 1);
    }
  };
  while (i < src.length) {
    const c = src[i];
    const start = line;
    if (c === "\n" || /\s/.test(c)) advanceTo(i + 1);
    else if (c === "/" && src[i + 1] === "/") {
      const end = src.indexOf("\n", i);
      advanceTo(end < 0 ? src.length : end);
    } else if (c === "/" && src[i + 1] === "*") {
      const end = src.indexOf("*/", i + 2);
      advanceTo(end < 0 ? src.length : end + 2);
    } else if (c === '"' || c === "'") {
      let value = "";
      let k = i + 1;
      while (k < src.length && src[k] !== c && src[k] !== "\n") {
        if (src[k] === "\\") k++;
        value += src[k++];
      }
      advanceTo(k + 1);
      out.push({ kind: "string", text: value, line: start });
    } else if (c === "`") {
      advanceTo(i + 1);
      template();
    } else if (c === "}" && substitutions.at(-1) === depth) {
      substitutions.pop();
      advanceTo(i + 1);
      template();
    } else if (c === "/" && regexAllowed()) {
      let k = i + 1;
      let inClass = false;
      while (k < src.length && src[k] !== "\n" && (inClass || src[k] !== "/")) {
        if (src[k] === "\\") k++;
        else if (src[k] === "[") inClass = true;
        else if (src[k] === "]") inClass = false;
        k++;
      }
      k++;
      while (k < src.length && WORD_PART.test(src[k])) k++;
      advanceTo(k);
      out.push({ kind: "value", text: "/…/", line: start });
    } else if (WORD_START.test(c)) {
      let k = i + 1;
      while (k < src.length && WORD_PART.test(src[k])) k++;
      out.push({ kind: "word", text: src.slice(i, k), line: start });
      advanceTo(k);
    } else if (/[0-9]/.test(c)) {
      let k = i + 1;
      while (k < src.length && /[0-9A-Za-z_.]/.test(src[k])) k++;
      out.push({ kind: "value", text: src.slice(i, k), line: start });
      advanceTo(k);
    } else {
      if (c === "{") depth++;
      if (c === "}") depth--;
      out.push({ kind: "punct", text: c, line: start });
      advanceTo(i + 1);
    }
  }
  return out;
}

/** Tokens that may stand between `import`/`export` and `from` in a static import or re-export. */
const isClauseToken = (t: Token) =>
  t.kind === "word" || (t.kind === "punct" && (t.text === "{" || t.text === "}" || t.text === "," || t.text === "*"));

/** The specifier of a clause starting at `tokens[from]` and ending in `from "…"`, or undefined. */
function clauseSpecifier(tokens: readonly Token[], from: number): string | undefined {
  for (let j = from; j < tokens.length; j++) {
    const t = tokens[j];
    if (t.kind === "string") {
      return tokens[j - 1]?.kind === "word" && tokens[j - 1].text === "from" ? t.text : undefined;
    }
    if (!isClauseToken(t) || (t.kind === "word" && (t.text === "import" || t.text === "export"))) return undefined;
  }
  return undefined;
}

/**
 * Every import of a module, in source order.
 *
 * @param src the module's text
 * @returns its static imports and re-exports (type-only ones included) and its `import()` calls with a literal
 */
export function parseImports(src: string): ImportRef[] {
  const tokens = tokenize(src);
  const out: ImportRef[] = [];
  const is = (j: number, text: string) => tokens[j]?.kind !== "string" && tokens[j]?.text === text;
  for (let j = 0; j < tokens.length; j++) {
    const t = tokens[j];
    if (t.kind !== "word" || (t.text !== "import" && t.text !== "export") || is(j - 1, ".")) continue;
    const next = tokens[j + 1];
    if (!next) break;
    if (t.text === "import") {
      if (next.kind === "string") out.push({ specifier: next.text, line: t.line, kind: "side effect" });
      else if (is(j + 1, "(")) {
        const arg = tokens[j + 2];
        if (arg?.kind === "string" && (is(j + 3, ")") || is(j + 3, ","))) {
          out.push({ specifier: arg.text, line: t.line, kind: "dynamic" });
        }
      } else if (!is(j + 1, ".")) {
        const specifier = clauseSpecifier(tokens, j + 1);
        const typeOnly = is(j + 1, "type") && !is(j + 2, "from") && !is(j + 2, ",");
        if (specifier !== undefined) out.push({ specifier, line: t.line, kind: typeOnly ? "import type" : "import" });
      }
    } else {
      const typeOnly = is(j + 1, "type");
      const k = typeOnly ? j + 2 : j + 1;
      if (!is(k, "{") && !is(k, "*")) continue;
      const specifier = clauseSpecifier(tokens, k);
      if (specifier !== undefined) out.push({ specifier, line: t.line, kind: typeOnly ? "export type" : "export" });
    }
  }
  return out;
}
