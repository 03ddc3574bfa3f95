/**
 * A parsed YAML file that remembers where every key came from, so that a
 * validation error found later (even one found only once the model and the
 * device are known) can name the line and column of the offending key.
 *
 * @module
 */
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument } from "yaml";
import type { Document, Node } from "yaml";
import { InputError } from "./errors.ts";
import type { SourceLocation } from "./errors.ts";

/** One path step: a mapping key or a list index. */
export type PathPart = string | number;

/** Joins a path as the contract prints it: `instance_groups[0].parallel_config.tp_size`. */
export function keyPathString(path: readonly PathPart[]): string {
  let out = "";
  for (const p of path) {
    if (typeof p === "number") out += `[${p}]`;
    else out += out === "" ? p : `.${p}`;
  }
  return out;
}

/** A YAML file parsed to plain data, with positions for every key path. */
export class YamlSource {
  /** The file as the user named it. */
  readonly file: string;
  /** The plain data (`unknown` until validated). */
  readonly data: unknown;
  #doc: Document.Parsed;
  #lines: LineCounter;

  /**
   * Parses `text`; YAML syntax errors and duplicate keys throw {@link InputError}.
   *
   * @param file the file name to print in messages
   * @param text the file's contents
   */
  constructor(file: string, text: string) {
    this.file = file;
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
        `YAML syntax error: ${first.replace(/\.$/, "")}`,
      );
    }
    this.data = this.#doc.toJS({ maxAliasCount: 100 });
  }

  /**
   * The location of the deepest node along `path` that exists. With
   * `keyOnly` the position of the last key itself rather than its value
   * (used for "unknown key" messages).
   */
  locate(path: readonly PathPart[], keyOnly = false): SourceLocation {
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

  /** Throws an {@link InputError} located at `path`. */
  fail(path: readonly PathPart[], detail: string, keyOnly = false): never {
    throw new InputError(this.locate(path, keyOnly), detail);
  }
}
