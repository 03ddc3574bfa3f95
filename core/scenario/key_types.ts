/**
 * What kind of number a configuration key holds, read from the config's zod
 * schemas: a sweep over an integer key (`num_instances`, `max_num_seqs`,
 * `num_requests`) is bisected over integers and never run at a fractional
 * value.
 *
 * @module
 */
import type { z } from "zod";
import { CommonFileSchema, InstanceFileSchema } from "../config/schema.ts";
import type { PathPart } from "../config/source.ts";

// zod keeps a schema's structure in `_zod.def`; only the fields read here are typed.
interface Def {
  type: string;
  innerType?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  valueType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  options?: z.ZodType[];
  format?: string;
  checks?: { _zod: { def: { check?: string; format?: string } } }[];
}
const defOf = (s: z.ZodType) => (s as unknown as { _zod: { def: Def } })._zod.def;

/** zod's integer number formats (`z.int()` is `safeint`). */
const INT_FORMATS = new Set(["safeint", "int32", "uint32"]);

/** Wrappers stripped, unions spread: the schemas a value may be checked against. */
function leaves(s: z.ZodType): z.ZodType[] {
  const d = defOf(s);
  if (d.innerType) return leaves(d.innerType);
  if (d.type === "pipe" && d.in && d.out) return leaves(defOf(d.in).type === "transform" ? d.out : d.in);
  if (d.type === "union" && d.options) return d.options.flatMap(leaves);
  return [s];
}

/** The schemas of `part` inside `s` (none when no variant of `s` has it). */
function child(s: z.ZodType, part: PathPart): z.ZodType[] {
  return leaves(s).flatMap((n) => {
    const d = defOf(n);
    if (typeof part === "number") return d.type === "array" && d.element ? [d.element] : [];
    if (d.shape) return Object.hasOwn(d.shape, part) ? [d.shape[part]] : [];
    return d.type === "record" && d.valueType ? [d.valueType] : [];
  });
}

function isInt(s: z.ZodType): boolean {
  const d = defOf(s);
  if (d.type !== "number") return false;
  if (d.format && INT_FORMATS.has(d.format)) return true;
  return (d.checks ?? []).some((c) => c._zod.def.check === "number_format" && INT_FORMATS.has(c._zod.def.format ?? ""));
}

/**
 * Whether the configuration key at `path` (`instance_groups[0].num_instances`,
 * `load_gen.request_rate`) takes integers only: true when every schema the
 * key has (in each `load_gen_type` that has it) is an integer, false for
 * other numbers and for keys the schemas do not know.
 */
export function isIntegerKey(path: readonly PathPart[]): boolean {
  let nodes: z.ZodType[] = [path[0] === "instance_groups" ? InstanceFileSchema : CommonFileSchema];
  for (const part of path) nodes = nodes.flatMap((n) => child(n, part));
  const all = nodes.flatMap(leaves);
  return all.length > 0 && all.every(isInt);
}
