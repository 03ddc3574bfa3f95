/**
 * Runs a zod schema over a {@link YamlSource} and turns the first problem
 * (in file order) into an {@link InputError} that names the line, column and
 * key path, with a "did you mean" for misspelled keys.
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

/** The keys an object schema allows at `path`, or [] when there is none. */
export function knownKeys(schema: z.ZodType, path: readonly PathPart[]): string[] {
  let s: z.ZodType | undefined = schema;
  let i = 0;
  while (s) {
    const d = defOf(s);
    if (d.innerType) s = d.innerType;
    else if (d.type === "pipe" && d.out) s = defOf(d.in!).type === "transform" ? d.out : d.in;
    else if (d.type === "union" && d.options) {
      // A union: the keys of every option (suggestions need only be close).
      return [...new Set(d.options.flatMap((o) => knownKeys(o, path.slice(i))))];
    } else if (i === path.length) return d.shape ? Object.keys(d.shape) : [];
    else if (d.type === "array" && d.element) [s, i] = [d.element, i + 1];
    else if (d.shape) [s, i] = [d.shape[String(path[i])], i + 1];
    else return [];
  }
  return [];
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
export function validate<S extends z.ZodType>(src: YamlSource, schema: S): z.output<S> {
  // A map key '__proto__' would be dropped by a record's parse (it sets the prototype): refuse it anywhere.
  const proto = protoKeyPath(src.data);
  if (proto) throw new InputError(src.locate(proto, true), "unknown key '__proto__'");
  const r = schema.safeParse(src.data ?? {});
  if (r.success) return r.data;
  const errors = r.error.issues.map((iss) => {
    const path = iss.path as PathPart[];
    if (iss.code === "unrecognized_keys") {
      const key = String(iss.keys[0]);
      const known = knownKeys(schema, path);
      const near = closest(key, known);
      const hint = near ? `; did you mean '${near}'?` : "";
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
