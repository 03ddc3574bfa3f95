/**
 * Runs a zod schema over a {@link YamlSource} and turns the first problem
 * (in file order) into an {@link InputError} that names the line, column and
 * key path, with where an unknown key belongs when the contract has it
 * elsewhere, or a "did you mean" for a misspelled one.
 *
 * @module
 */
import type { z } from "zod";
import { clip, InputError } from "./errors.ts";
import type { PathPart, YamlSource } from "./source.ts";

/** Levenshtein distance, for "did you mean" suggestions. */
export function editDistance(a: string, b: string): number {
  const prev = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length];
}

/** The closest name among `candidates`, when it is close enough to be a typo. */
export function closest(name: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(name.toLowerCase(), c.toLowerCase());
    if (d < bestD) [best, bestD] = [c, d];
  }
  return bestD <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}

// zod keeps a schema's structure in `_zod.def`; only the fields read here are typed.
interface Def {
  type: string;
  innerType?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  in?: z.ZodType;
  out?: z.ZodType;
  options?: z.ZodType[];
}
const defOf = (s: z.ZodType) => (s as unknown as { _zod: { def: Def } })._zod.def;

/** `s` past its wrappers (optional, default, a pipe: its output after a transform, else its input). */
function unwrap(s: z.ZodType): z.ZodType {
  for (;;) {
    const d = defOf(s);
    if (d.innerType) s = d.innerType;
    else if (d.type === "pipe" && d.out) s = defOf(d.in!).type === "transform" ? d.out : d.in!;
    else return s;
  }
}

/** The keys an object schema allows at `path`, or [] when there is none. */
export function knownKeys(schema: z.ZodType, path: readonly PathPart[]): string[] {
  let s: z.ZodType | undefined = schema;
  let i = 0;
  while (s) {
    s = unwrap(s);
    const d = defOf(s);
    if (d.type === "union" && d.options) {
      // A union: the keys of every option (suggestions need only be close).
      return [...new Set(d.options.flatMap((o) => knownKeys(o, path.slice(i))))];
    } else if (i === path.length) return d.shape ? Object.keys(d.shape) : [];
    else if (d.type === "array" && d.element) [s, i] = [d.element, i + 1];
    else if (d.shape) [s, i] = [d.shape[String(path[i])], i + 1];
    else return [];
  }
  return [];
}

/** A place a key is allowed: its parent's key path, and the union option it goes with (`load_gen_type synthetic`). */
interface Place {
  readonly path: readonly string[];
  readonly option?: string;
}

/**
 * Every place `key` is allowed in `schema` (parents' key paths, a list's
 * items as `[]`), at most `depth` levels down, each with the union option
 * it goes with when the union is discriminated by a literal field.
 */
function placesOf(schema: z.ZodType, key: string, depth = 5, at: string[] = [], option?: string): Place[] {
  const d = defOf(unwrap(schema));
  if (d.type === "union" && d.options) {
    return d.options.flatMap((o) => placesOf(o, key, depth, at, discriminator(o) ?? option));
  }
  if (d.type === "array" && d.element) {
    return placesOf(d.element, key, depth, [...at.slice(0, -1), `${at.at(-1)}[]`], option);
  }
  if (!d.shape || depth === 0) return [];
  const here: Place[] = Object.hasOwn(d.shape, key) ? [{ path: at, ...(option ? { option } : {}) }] : [];
  return [...here, ...Object.entries(d.shape).flatMap(([k, v]) => placesOf(v, key, depth - 1, [...at, k], option))];
}

/** `field value` of an object schema's literal field (a discriminated union's option), if it has one. */
function discriminator(schema: z.ZodType): string | undefined {
  const d = defOf(schema);
  for (const [k, v] of Object.entries(d.shape ?? {})) {
    const lit = defOf(v) as Def & { values?: unknown[] };
    if (lit.type === "literal" && lit.values?.length === 1) return `${k} ${String(lit.values[0])}`;
  }
  return undefined;
}

/**
 * Where an unknown key belongs, said from where it was written: under a
 * key of this object (`load_gen.arrival`), with another option of its
 * union, elsewhere in this file, or in the other file of the contract.
 */
function whereItBelongs(
  schema: z.ZodType,
  path: readonly PathPart[],
  key: string,
  elsewhere?: OtherFile,
): string | undefined {
  const parent = path.map(String);
  const places = placesOf(schema, key).filter((p) => p.path.join(".") !== parent.join(".") || p.option);
  const dotted = (p: readonly string[]) => p.join(".") || "the top level";
  const below = places.filter((p) => p.path.length > parent.length && parent.every((k, i) => p.path[i] === k));
  if (below.length) return `it belongs under ${dotted(below[0].path)}`;
  const options = places.filter((p) => p.path.join(".") === parent.join(".") && p.option).map((p) => p.option!);
  if (options.length) return `it goes with ${[...new Set(options)].join(" or ")}`;
  if (places.length) return `it belongs under ${dotted(places[0].path)}`;
  if (elsewhere) {
    const there = placesOf(elsewhere.schema, key);
    if (there.length) return `it belongs in ${elsewhere.label}, under ${dotted(there[0].path)}`;
  }
  return undefined;
}

/** The other file of the contract, where a key written in the wrong file is looked for. */
export interface OtherFile {
  /** How a message names it ("the common file (--common_config_path)"). */
  readonly label: string;
  readonly schema: z.ZodType;
}

function valueAt(data: unknown, path: readonly PathPart[]): unknown {
  let v = data;
  for (const p of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[p as string];
  }
  return v;
}

/**
 * Validates `src.data` against `schema`.
 *
 * @returns the parsed (defaulted) value
 * @throws {InputError} at the first problem in file order
 */
export function validate<S extends z.ZodType>(src: YamlSource, schema: S, elsewhere?: OtherFile): z.output<S> {
  // A map key '__proto__' would be dropped by a record's parse (it sets the prototype): refuse it anywhere.
  const proto = protoKeyPath(src.data);
  if (proto) throw new InputError(src.locate(proto, true), "unknown key '__proto__'");
  const r = schema.safeParse(src.data ?? {});
  if (r.success) return r.data;
  const errors = r.error.issues.map((iss) => {
    const path = iss.path as PathPart[];
    if (iss.code === "unrecognized_keys") {
      const key = String(iss.keys[0]);
      // A key allowed elsewhere is named where it belongs; else a near spelling (never the word itself).
      const home = whereItBelongs(schema, path, key, elsewhere);
      const near = home ? undefined : closest(key, knownKeys(schema, path).filter((k) => k !== key));
      const hint = home ? ` here: ${home}` : near ? `; did you mean '${near}'?` : "";
      return new InputError(src.locate([...path, key], true), `unknown key '${clip(key)}'${hint}`);
    }
    if (iss.code === "invalid_type" && valueAt(src.data, path) === undefined) {
      const key = path[path.length - 1];
      const loc = src.locate(path.slice(0, -1));
      return new InputError({ ...loc, keyPath: src.locate(path).keyPath }, `missing required key '${key}'`);
    }
    return new InputError(src.locate(path), iss.message);
  });
  errors.sort((a, b) =>
    (a.location.line ?? 0) - (b.location.line ?? 0) || (a.location.col ?? 0) - (b.location.col ?? 0)
  );
  throw errors[0];
}

/** The key path of the first own key `__proto__` in `data`, if any. */
function protoKeyPath(data: unknown, at: PathPart[] = []): PathPart[] | undefined {
  if (data === null || typeof data !== "object") return undefined;
  if (!Array.isArray(data) && Object.hasOwn(data, "__proto__")) return [...at, "__proto__"];
  for (const [k, v] of Object.entries(data)) {
    const found = protoKeyPath(v, [...at, Array.isArray(data) ? Number(k) : k]);
    if (found) return found;
  }
  return undefined;
}
