/**
 * A parsed YAML file that remembers where every key came from, so that a
 * validation error found later (even one found only once the model and the
 * device are known) can name the line and column of the offending key.
 *
 * @module
 */
import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, visit } from "yaml";
import type { Document, Node } from "yaml";
import { clip, InputError } from "./errors.ts";
import type { SourceLocation } from "./errors.ts";

/** One path step: a mapping key or a list index. */
export type PathPart = string | number;

/**
 * Joins a path as the contract prints it: `instance_groups[0].parallel_config.tp_size`
 * (a key longer than 80 characters cut, control characters escaped).
 */
export function keyPathString(path: readonly PathPart[]): string {
  let out = "";
  for (const p of path) {
    if (typeof p === "number") out += `[${p}]`;
    else out += out === "" ? clip(p) : `.${clip(p)}`;
  }
  return out;
}

/** A replaced value: where the replacement was written. */
export interface Override {
  /** Path of the value in this source's data. */
  readonly path: readonly PathPart[];
  /** The new value. */
  readonly value: unknown;
  /** Where it was written (another file, such as a scenario). */
  readonly location: SourceLocation;
}

const setOwn = (o: Record<string | number, unknown>, k: PathPart, v: unknown) =>
  Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });

/**
 * Sets the override's value in `data` (a copy). A list index may name an
 * item or the next one (to append); one further on is an error at the
 * override, before any list is grown.
 */
function setPath(data: unknown, o: Override, value: unknown): unknown {
  const path = o.path;
  if (path.length === 0) return value;
  const root = (data !== null && typeof data === "object" ? data : {}) as Record<string | number, unknown>;
  let node = root;
  for (let i = 0; i < path.length; i++) {
    const part = path[i];
    if (typeof part === "number" && Array.isArray(node) && part > node.length) {
      const n = node.length;
      const list = keyPathString(path.slice(0, i)) || "the list";
      const items = n === 0
        ? "it is empty: [0] appends"
        : `${n} item${n === 1 ? "" : "s"}: [${n === 1 ? 0 : `0]…[${n - 1}`}], or [${n}] to append`;
      throw new InputError(
        { ...o.location, keyPath: keyPathString(path) },
        `index ${part} is past the end of ${list} (${items})`,
      );
    }
    if (i === path.length - 1) break;
    // Own properties only: a key such as '__proto__' or 'constructor' is a plain (unknown) key.
    let next = Object.hasOwn(node, part) ? node[part] : undefined;
    if (next === null || typeof next !== "object") setOwn(node, part, next = {});
    node = next as Record<string | number, unknown>;
  }
  setOwn(node, path[path.length - 1], value);
  return root;
}

/** Alias expansions a file may make (a guard against "billion laughs" files). */
const MAX_ALIAS_COUNT = 100;

function hasAlias(node: Node): boolean {
  let found = false;
  visit(node, {
    Alias: () => {
      found = true;
      return visit.BREAK;
    },
  });
  return found;
}

/** Freezes `v` and everything in it: a parsed file is shared by its readers (see `readYaml`). */
function deepFreeze<T>(v: T): T {
  // Typed arrays (a `!!binary` value) cannot be frozen; they stay as they are.
  if (v !== null && typeof v === "object" && !ArrayBuffer.isView(v) && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

const isPrefix = (a: readonly PathPart[], b: readonly PathPart[]) =>
  a.length <= b.length && a.every((p, i) => String(p) === String(b[i]));

/** A YAML file parsed to plain data, with positions for every key path. */
export class YamlSource {
  /** The file as the user named it. */
  readonly file: string;
  /** The plain data (`unknown` until validated). */
  readonly data: unknown;
  #doc!: Document.Parsed;
  #lines!: LineCounter;
  #base?: { source: YamlSource; prefix: readonly PathPart[]; overrides: readonly Override[] };

  /**
   * Parses `text`; YAML syntax errors and duplicate keys throw {@link InputError}.
   *
   * @param file the file name to print in messages
   * @param text the file's contents
   */
  constructor(file: string, text: string);
  constructor(
    file: string,
    text: string,
    view?: { source: YamlSource; prefix: readonly PathPart[]; overrides: readonly Override[] },
  ) {
    this.file = file;
    if (view) {
      this.#base = view;
      let data = structuredClone(view.source.#valueAt(view.prefix));
      for (const o of view.overrides) data = setPath(data, o, structuredClone(o.value));
      this.data = data;
      return;
    }
    this.#lines = new LineCounter();
    this.#doc = parseDocument(text, {
      lineCounter: this.#lines,
      prettyErrors: false,
      uniqueKeys: true,
    });
    const err = this.#doc.errors[0];
    if (err) {
      const pos = this.#lines.linePos(err.pos[0]);
      const first = err.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "");
      throw new InputError(
        { file, line: pos.line, col: pos.col },
        `YAML syntax error: ${clip(first.replace(/\.$/, ""), 200)}`,
      );
    }
    try {
      this.data = deepFreeze(this.#doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }));
    } catch (e) {
      if (!(e instanceof ReferenceError)) throw e;
      throw this.#aliasError(/unresolved alias/i.test(e.message));
    }
  }

  /**
   * The located error for an alias that names no earlier anchor
   * (`unresolved`), or for too many alias expansions: placed at the first
   * alias of an anchor that holds aliases itself (what multiplies), else at
   * the first alias.
   */
  #aliasError(unresolved: boolean): InputError {
    const anchors = new Map<string, Node>();
    let at: Node | undefined;
    let first: Node | undefined;
    visit(this.#doc, (_key, node) => {
      if (isAlias(node)) {
        const target = anchors.get(node.source);
        first ??= node;
        const nested = target !== undefined && !unresolved && hasAlias(target);
        if ((unresolved && target === undefined) || nested) {
          at = node;
          return visit.BREAK;
        }
      } else if (node && typeof node === "object" && "anchor" in node && typeof node.anchor === "string") {
        anchors.set(node.anchor, node as Node);
      }
    });
    const node = at ?? first;
    const lp = this.#lines.linePos(node?.range?.[0] ?? 0);
    const detail = unresolved
      ? `unresolved alias '*${clip(isAlias(node) ? node.source : "")}' (the anchor must be set before the alias)`
      : `too many alias expansions (at most ${MAX_ALIAS_COUNT})`;
    return new InputError({ file: this.file, line: lp.line, col: lp.col }, `YAML alias error: ${detail}`);
  }

  /**
   * The location of the deepest node along `path` that exists. With
   * `keyOnly` the position of the last key itself rather than its value
   * (used for "unknown key" messages).
   */
  locate(path: readonly PathPart[], keyOnly = false): SourceLocation {
    if (this.#base) {
      const { source, prefix, overrides } = this.#base;
      for (let i = overrides.length - 1; i >= 0; i--) {
        if (isPrefix(overrides[i].path, path)) return { ...overrides[i].location, keyPath: keyPathString(path) };
      }
      // A key that only an override's path brought in (load_gen.typo.x) is at that override.
      if (source.#valueAt([...prefix, ...path]) === undefined) {
        const o = overrides.findLast((o) => isPrefix(path, o.path));
        if (o) return { ...o.location, keyPath: keyPathString(path) };
      }
      return { ...source.locate([...prefix, ...path], keyOnly), keyPath: keyPathString(path) };
    }
    let node: unknown = this.#doc.contents;
    let pos: number | undefined = (node as Node | null)?.range?.[0];
    for (let i = 0; i < path.length; i++) {
      const part = path[i];
      let next: unknown;
      let keyPos: number | undefined;
      if (isMap(node)) {
        const pair = node.items.find((it) => isPair(it) && isScalar(it.key) && String(it.key.value) === String(part));
        if (!pair) break;
        keyPos = (pair.key as Node).range?.[0];
        next = pair.value;
      } else if (isSeq(node) && typeof part === "number") {
        next = node.items[part];
      } else break;
      const last = i === path.length - 1;
      if (last && keyOnly && keyPos !== undefined) {
        pos = keyPos;
        break;
      }
      const r = (next as Node | null)?.range?.[0];
      pos = r ?? keyPos ?? pos;
      node = next;
    }
    const lp = pos === undefined ? { line: 1, col: 1 } : this.#lines.linePos(pos);
    return { file: this.file, line: lp.line, col: lp.col, keyPath: keyPathString(path) };
  }

  #valueAt(path: readonly PathPart[]): unknown {
    let v = this.data;
    for (const p of path) {
      if (v === null || typeof v !== "object" || !Object.hasOwn(v, p)) return undefined;
      v = (v as Record<string, unknown>)[p as string];
    }
    return v;
  }

  /**
   * A view of part of this file (an inline block), with some values replaced
   * (overrides written elsewhere): its data is a copy; errors in it point at
   * this file, or at the override that set the value.
   *
   * @param prefix where the block sits in this file ([] = the whole file)
   * @param overrides values to replace, by path inside the block
   * @param file the name the view reports (default: this file's)
   */
  view(prefix: readonly PathPart[], overrides: readonly Override[] = [], file = this.file): YamlSource {
    return new (YamlSource as unknown as new (
      file: string,
      text: string,
      view: { source: YamlSource; prefix: readonly PathPart[]; overrides: readonly Override[] },
    ) => YamlSource)(file, "", { source: this, prefix, overrides });
  }

  /** Throws an {@link InputError} located at `path`. */
  fail(path: readonly PathPart[], detail: string, keyOnly = false): never {
    throw new InputError(this.locate(path, keyOnly), detail);
  }
}
