/**
 * What a plan may be asked, and what a plan shard may hold: the one schema
 * of a {@link PlanRequest} and of a {@link ShardOutcome} (the JSON file
 * `plan --shard I/N` writes and `plan --merge` reads), with the rules a
 * schema cannot express: devices from the catalog, SLOs the scenario
 * language reads, at most {@link TASK_LIMITS.shards} candidates, and each
 * outcome the candidate at its position of the search. A fresh plan's
 * flags and a merged shard's request pass the same checks.
 *
 * @module
 */
import { isAbsolute } from "node:path";
import { z } from "zod";
import { clip, describeValue, quoteString } from "../config/errors.ts";
import { TASK_LIMITS } from "../config/limits.ts";
import { ATTENTION_QUANT, LINEAR_QUANT } from "../config/schema.ts";
import { ENGINES } from "../config/engine_profiles.ts";
import { DEVICE_CATALOG } from "../hardware/devices.ts";
import { parseBound, resolveMetric, unitMismatch } from "../scenario/mod.ts";
import { candidateList, costPerMillionTokens, SPECULATION_PATTERN } from "./planner.ts";
import type { CandidateId, CandidateOutcome, PlanRequest, PlanSlo, ShardOutcome } from "./planner.ts";

/** Where in a request or a shard a problem is (`outcomes[0][1].device`), and what it is. */
export interface PlanDataProblem {
  /** The JSON path, as parts. */
  readonly path: readonly (string | number)[];
  /** What is wrong, without a final period. */
  readonly detail: string;
}

/** A JSON path as a message shows it: `outcomes[0][1].device`, `request.slos[1].key`. */
export function jsonPath(path: readonly (string | number)[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");
}

/** The longest path a request may name its common file by (Linux's PATH_MAX). */
const PATH_MAX = 4096;

// deno-lint-ignore no-control-regex -- the characters refused
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

const got = (i: { input?: unknown }) => `got ${describeValue(i.input)}`;

/** A string of at most `max` characters without control characters (nothing a shard prints can break a line). */
const text = (max: number = TASK_LIMITS.messageChars) =>
  z.string({ error: (i) => `expected a string, ${got(i)}` })
    .max(max, { error: (i) => `expected at most ${max} characters, got ${(i.input as string).length}` })
    .refine((s) => !CONTROL.test(s), { error: (i) => `expected no control characters, ${got(i)}` });

const positiveInt = () =>
  z.int({ error: (i) => `expected a positive integer, ${got(i)}` })
    .positive({ error: (i) => `expected a positive integer, ${got(i)}` });
const countInt = () =>
  z.int({ error: (i) => `expected a non-negative integer, ${got(i)}` })
    .nonnegative({ error: (i) => `expected a non-negative integer, ${got(i)}` });
const finiteNonNegative = () =>
  z.number({ error: (i) => `expected a finite number ≥ 0, ${got(i)}` })
    .nonnegative({ error: (i) => `expected a finite number ≥ 0, ${got(i)}` });
const bool = () => z.boolean({ error: (i) => `expected true or false, ${got(i)}` });
const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: (i) => `expected one of ${values.join(", ")}, ${got(i)}` });
const list = <T extends z.ZodType>(item: T, max: number = TASK_LIMITS.shards) =>
  z.array(item, { error: (i) => `expected a list, ${got(i)}` })
    .min(1, { error: "expected at least one entry, got an empty list" })
    .max(max, { error: (i) => `expected at most ${max} entries, got ${(i.input as unknown[]).length}` });
const object = <S extends z.ZodRawShape>(shape: S) =>
  z.strictObject(shape, {
    error: (i) => (i.code === "invalid_type" ? `expected an object, ${got(i)}` : undefined),
  });

const PARALLEL = ["tp", "tp-ep", "dp-ep"] as const;
const TOPOLOGY = ["agg", "disagg"] as const;

/**
 * The settings a search may vary (`--max_num_seqs`, `--max_tokens_budget`,
 * `--quantization`, `--engines`, `--kv_cache_dtype`, `--mtp_tokens`, `--speculation`).
 */
export const PLAN_SETTING_KEYS = [
  "serving_config.max_num_seqs",
  "serving_config.max_tokens_budget",
  "model_config.quantize_linear_action",
  "serving_config.engine",
  "model_config.quantize_attention_action",
  "model_config.num_mtp_tokens",
  "serving_config.speculative_config",
] as const;

/** A plan request's shape (see {@link PlanRequest}); {@link requestProblem} checks the rest. */
const PlanRequestSchema = object({
  commonFile: text(PATH_MAX).refine(isAbsolute, {
    error: (i) => `expected an absolute path (as a plan writes it), ${got(i)}`,
  }),
  targetRate: z.number({ error: (i) => `expected a positive number, ${got(i)}` })
    .positive({ error: (i) => `expected a positive number, ${got(i)}` }),
  slos: list(object({ key: text(), bound: text() })),
  devices: list(text()),
  tpSizes: list(positiveInt()),
  parallel: list(oneOf(PARALLEL), PARALLEL.length).optional(),
  topologies: list(oneOf(TOPOLOGY), TOPOLOGY.length).optional(),
  settings: object({
    "serving_config.max_num_seqs": list(positiveInt()).optional(),
    "serving_config.max_tokens_budget": list(positiveInt()).optional(),
    "model_config.quantize_linear_action": list(oneOf(LINEAR_QUANT)).optional(),
    "serving_config.engine": list(oneOf(ENGINES)).optional(),
    "model_config.quantize_attention_action": list(oneOf(ATTENTION_QUANT)).optional(),
    "model_config.num_mtp_tokens": list(countInt()).optional(),
    "serving_config.speculative_config": list(
      text().regex(SPECULATION_PATTERN, { error: (i) => `expected none, eagle:K or ngram:K (K 1 to 5), ${got(i)}` }),
    ).optional(),
  }).optional(),
  maxDevices: positiveInt(),
  prices: z.record(text(), finiteNonNegative(), { error: (i) => `expected an object, ${got(i)}` }).optional(),
  seeds: positiveInt().max(TASK_LIMITS.seeds, {
    error: (i) => `expected at most ${TASK_LIMITS.seeds} seeds (the limit of a run), ${got(i)}`,
  }).optional(),
});

const candidateShape = {
  device: text(),
  tp: positiveInt(),
  parallel: oneOf(PARALLEL),
  topology: oneOf(TOPOLOGY),
  settings: z.record(
    text(),
    z.union([z.number(), text()], { error: (i) => `expected a number or a string, ${got(i)}` }),
    {
      error: (i) => `expected an object, ${got(i)}`,
    },
  ),
};

/** A candidate's outcome's shape (see {@link CandidateOutcome}). */
const OutcomeSchema = z.discriminatedUnion("kind", [
  object({ kind: z.literal("infeasible"), ...candidateShape, reason: text() }),
  object({ kind: z.literal("fails"), ...candidateShape, instances: countInt(), reason: text() }),
  object({
    kind: z.literal("planned"),
    ...candidateShape,
    moe: bool(),
    instances: positiveInt(),
    prefill: countInt(),
    decode: countInt(),
    devices: positiveInt(),
    costPerHour: finiteNonNegative().optional(),
    costPerMillionTokens: finiteNonNegative().optional(),
    tokensPerDevice: finiteNonNegative(),
    tokensPerUser: finiteNonNegative(),
    ttftP99: finiteNonNegative(),
    tpotP99: finiteNonNegative(),
    // A value the run could not compute is written as null (JSON has no NaN), and shown as '-'.
    values: z.record(text(), z.number().nullable(), { error: (i) => `expected an object, ${got(i)}` }),
    lowerBound: positiveInt(),
    runs: countInt(),
    requests: positiveInt(),
    pareto: bool(),
    launch: object({
      model: text(),
      engine: oneOf(ENGINES).optional(),
      tp: positiveInt(),
      dp: positiveInt(),
      ep: positiveInt(),
      maxNumSeqs: positiveInt(),
      maxTokensBudget: positiveInt(),
      blockSize: positiveInt(),
      memoryFraction: finiteNonNegative(),
      prefixCaching: bool(),
      chunkedPrefill: bool(),
      maxModelLen: positiveInt(),
      kvDtype: oneOf(ATTENTION_QUANT),
      linearQuant: oneOf(LINEAR_QUANT),
      mtpTokens: countInt(),
    }),
  }),
], {
  error: (i) =>
    i.code === "invalid_union" && i.note === "No matching discriminator"
      ? `expected kind infeasible, fails or planned, got ${
        describeValue((i.input as Record<string, unknown> | null)?.kind)
      }`
      : `expected an object, ${got(i)}`,
});

/** A shard file's shape (see {@link ShardOutcome}): the request, which share, and its outcomes. */
const ShardSchema = object({
  request: PlanRequestSchema,
  shard: object({
    index: countInt(),
    count: positiveInt().max(TASK_LIMITS.shards, {
      error: (i) => `expected at most ${TASK_LIMITS.shards} shards, ${got(i)}`,
    }),
  }),
  outcomes: z.array(
    z.tuple([countInt(), OutcomeSchema], { error: (i) => `expected [position, outcome], ${got(i)}` }),
    { error: (i) => `expected a list, ${got(i)}` },
  ).max(TASK_LIMITS.shards, {
    error: (i) => `expected at most ${TASK_LIMITS.shards} outcomes, got ${(i.input as unknown[]).length}`,
  }),
});

/** The first zod issue as a problem (its path and message). */
function issueProblem(error: z.ZodError, prefix: readonly (string | number)[] = []): PlanDataProblem {
  const issue = error.issues[0];
  const path = [...prefix, ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))];
  if (issue.code === "unrecognized_keys") return { path, detail: `unknown key '${clip(String(issue.keys[0]))}'` };
  if (issue.code === "invalid_type" && issue.input === undefined && path.length) {
    const at = path.slice(0, -1);
    const what = at.length ? "" : " (a shard holds request, shard and outcomes, as --shard writes them)";
    return { path: at, detail: `missing required key '${clip(String(path.at(-1)))}'${what}` };
  }
  return { path, detail: issue.message };
}

/** The path of the first own key `__proto__` (which a parse would drop) within `depth` levels of `data`. */
function protoKey(data: unknown, depth = 8, at: (string | number)[] = []): (string | number)[] | undefined {
  if (data === null || typeof data !== "object" || depth === 0) return undefined;
  if (!Array.isArray(data) && Object.hasOwn(data, "__proto__")) return [...at, "__proto__"];
  for (const [k, v] of Object.entries(data)) {
    const found = protoKey(v, depth - 1, [...at, Array.isArray(data) ? Number(k) : k]);
    if (found) return found;
  }
  return undefined;
}

/**
 * `text` as a key and a bound expression (`ttft.p99<=2`: `ttft.p99`, `<= 2`),
 * or why not: the form `--slo` takes and a request holds.
 */
export function parseSlo(text: string): PlanSlo | string {
  const m = /^\s*([A-Za-z_][\w.()/ -]*?)\s*(<=|>=|==|<|>)\s*(.+?)\s*$/.exec(text);
  if (!m) return `--slo '${text}': expected KEY OP BOUND, e.g. 'ttft.p99<=2'`;
  const [, key, op, value] = m;
  if (!resolveMetric(key)) return `--slo '${text}': unknown metric '${key}'`;
  // A number, with a unit if one is wanted (2s, 500ms), optionally at a confidence ('@ 90%'): the planner compares
  // against a bound, not an expression of other metrics. The scenario language's parser reads it, as an `expect`.
  const parsed = parseBound(`${op} ${value}`);
  if (typeof parsed === "string") return `--slo '${text}': ${parsed}`;
  if (parsed.rhs.kind !== "num" || parsed.tolerance) {
    return `--slo '${text}': expected a number after ${op} (a unit may follow, as in 2s or 500ms), got '${value}'`;
  }
  const mismatch = unitMismatch(parsed.rhs, resolveMetric(key)!.unit);
  if (mismatch) return `--slo '${text}': ${mismatch}`;
  return { key, bound: parsed.text };
}

/** How many candidates `req` has ({@link candidateList}'s length), counted without listing them. */
export function candidateCount(req: PlanRequest): number {
  const kinds = req.parallel ?? ["tp"];
  const layouts = req.tpSizes.reduce((n, tp) => n + (tp > 1 ? kinds.length : kinds.includes("tp") ? 1 : 0), 0);
  const grid = Object.values(req.settings ?? {}).reduce((n, values) => n * values.length, 1);
  return req.devices.length * layouts * (req.topologies ?? ["agg"]).length * grid;
}

/** The first value of `xs` given twice, if any. */
function twice<T>(xs: readonly T[]): number | undefined {
  const seen = new Set<T>();
  for (const [i, x] of xs.entries()) {
    if (seen.has(x)) return i;
    seen.add(x);
  }
  return undefined;
}

/**
 * Why `req` is not a request a plan can run, or undefined: the rules its
 * type cannot express. Devices are catalog devices, each once; SLOs are
 * metrics of the scenario language with a number bound (as {@link parseSlo}
 * writes them), each key once; every device has a price when prices are
 * given; and the search has at most {@link TASK_LIMITS.shards} candidates.
 * The fields' types and ranges are {@link requestShapeProblem}'s.
 */
export function requestProblem(req: PlanRequest): PlanDataProblem | undefined {
  for (const [i, s] of req.slos.entries()) {
    const parsed = parseSlo(`${s.key}${s.bound}`);
    if (typeof parsed === "string" || parsed.key !== s.key || parsed.bound !== s.bound) {
      return {
        path: ["slos", i],
        detail: typeof parsed === "string"
          ? parsed.replace(/^--slo '.*?': /s, "")
          : `expected a bound as --slo writes it (${quoteString(`${parsed.key} ${parsed.bound}`)})`,
      };
    }
  }
  const slo = twice(req.slos.map((s) => s.key));
  if (slo !== undefined) return { path: ["slos", slo, "key"], detail: `${req.slos[slo].key} is given twice` };
  for (const [i, d] of req.devices.entries()) {
    if (!Object.hasOwn(DEVICE_CATALOG, d)) {
      return { path: ["devices", i], detail: `expected a catalog device, got ${quoteString(d)}` };
    }
  }
  const lists: [keyof PlanRequest, readonly unknown[] | undefined][] = [
    ["devices", req.devices],
    ["tpSizes", req.tpSizes],
    ["parallel", req.parallel],
    ["topologies", req.topologies],
  ];
  for (const [key, values] of lists) {
    const at = values && twice(values);
    if (at !== undefined) return { path: [key, at], detail: `${describeValue(values![at])} is given twice` };
  }
  for (const [key, values] of Object.entries(req.settings ?? {})) {
    if (!(PLAN_SETTING_KEYS as readonly string[]).includes(key)) {
      return { path: ["settings", key], detail: `unknown setting; expected one of ${PLAN_SETTING_KEYS.join(", ")}` };
    }
    const at = twice(values);
    if (at !== undefined) {
      return { path: ["settings", key, at], detail: `${describeValue(values[at])} is given twice` };
    }
  }
  if (req.prices) {
    const unpriced = req.devices.filter((d) => !Object.hasOwn(req.prices!, d));
    if (unpriced.length) {
      return { path: ["prices"], detail: `no price for ${unpriced.join(", ")} (every device needs one)` };
    }
  }
  const n = candidateCount(req);
  if (n > TASK_LIMITS.shards) {
    return {
      path: [],
      detail: `the search has ${n.toLocaleString("en-US")} candidates (devices × TP sizes × layouts × topologies × ` +
        `settings), more than ${TASK_LIMITS.shards.toLocaleString("en-US")}; split it into several plans`,
    };
  }
  if (n === 0) return { path: ["parallel"], detail: "no candidate: tp-ep and dp-ep need a TP size above 1" };
  return undefined;
}

/** Why `data` is not a request's shape (types, ranges, lengths; own key `__proto__` refused), or undefined. */
export function requestShapeProblem(data: unknown): PlanDataProblem | undefined {
  const proto = protoKey(data);
  if (proto) return { path: proto, detail: "unknown key '__proto__'" };
  const r = PlanRequestSchema.safeParse(data, { reportInput: true });
  return r.success ? undefined : issueProblem(r.error);
}

/** The candidate as a message names it: `H100_SXM_80G tp 2 agg seqs=128`. */
function describeCandidate(c: CandidateId): string {
  const settings = Object.values(c.settings).join(" ");
  return `${c.device} ${c.parallel} ${c.tp} ${c.topology}${settings ? ` ${settings}` : ""}`;
}

/** Whether two candidates' settings are the same keys (in order) with the same values. */
function sameSettings(a: CandidateId["settings"], b: CandidateId["settings"]): boolean {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
}

/** Why `o`, at `position` of `req`'s search, is not the outcome a planner writes there, or undefined. */
function outcomeProblem(
  req: PlanRequest,
  candidates: readonly CandidateId[],
  position: number,
  o: CandidateOutcome,
): PlanDataProblem | undefined {
  if (!req.devices.includes(o.device)) {
    return {
      path: ["device"],
      detail: `expected one of the request's devices (${req.devices.join(", ")}), got ${quoteString(o.device)}`,
    };
  }
  const want = candidates[position];
  if (
    o.device !== want.device || o.tp !== want.tp || o.parallel !== want.parallel || o.topology !== want.topology ||
    !sameSettings(o.settings, want.settings)
  ) {
    return {
      path: [],
      detail: `expected candidate ${position} of the request (${describeCandidate(want)}), got ${describeCandidate(o)}`,
    };
  }
  if (o.kind !== "planned") return undefined;
  if (o.devices !== o.instances * o.tp) {
    return { path: ["devices"], detail: `expected instances × tp (${o.instances * o.tp}), got ${o.devices}` };
  }
  if (o.devices > req.maxDevices) {
    return {
      path: ["devices"],
      detail: `expected at most the request's maxDevices (${req.maxDevices}), got ${o.devices}`,
    };
  }
  const split = o.topology === "disagg"
    ? o.prefill >= 1 && o.decode >= 1 && o.prefill + o.decode === o.instances
    : o.prefill === 0 && o.decode === 0;
  if (!split) {
    return {
      path: ["prefill"],
      detail: o.topology === "disagg"
        ? `expected prefill ≥ 1 and decode ≥ 1 adding up to instances (${o.instances}), got ${o.prefill} + ${o.decode}`
        : `expected prefill and decode 0 when aggregated, got ${o.prefill} and ${o.decode}`,
    };
  }
  const price = req.prices?.[o.device];
  if (price === undefined ? o.costPerHour !== undefined : o.costPerHour !== o.devices * price) {
    return {
      path: ["costPerHour"],
      detail: price === undefined
        ? `expected none (the request has no prices), got ${o.costPerHour}`
        : `expected devices × price (${o.devices * price}), got ${describeValue(o.costPerHour)}`,
    };
  }
  const perMillion = o.costPerHour === undefined
    ? undefined
    : costPerMillionTokens(o.costPerHour, o.tokensPerDevice * o.devices);
  if (o.costPerMillionTokens !== perMillion) {
    return {
      path: ["costPerMillionTokens"],
      detail: perMillion === undefined
        ? `expected none (the request has no prices), got ${o.costPerMillionTokens}`
        : `expected $/hour per million output tokens an hour (${perMillion}), got ${
          describeValue(o.costPerMillionTokens)
        }`,
    };
  }
  const keys = Object.keys(o.values);
  const slos = req.slos.map((s) => s.key);
  if (keys.length !== slos.length || !slos.every((k) => Object.hasOwn(o.values, k))) {
    return { path: ["values"], detail: `expected a value for each SLO (${slos.join(", ")}), got ${keys.join(", ")}` };
  }
  return undefined;
}

/**
 * The shard in `data` (a parsed shard file), or why it is not one: its
 * shape (one schema: strict objects, finite numbers, non-negative counts,
 * safe integers, at most {@link TASK_LIMITS.shards} shards and outcomes,
 * short strings without control characters), its request
 * ({@link requestProblem}), and its outcomes: exactly the candidates of
 * its share in search order, each the request's candidate at its position,
 * with consistent figures.
 */
export function readShard(data: unknown): ShardOutcome | PlanDataProblem {
  const proto = protoKey(data);
  if (proto) return { path: proto, detail: "unknown key '__proto__'" };
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    return {
      path: [],
      detail: `expected an object of request, shard and outcomes (as --shard writes), got ${describeValue(data)}`,
    };
  }
  const r = ShardSchema.safeParse(data, { reportInput: true });
  if (!r.success) return issueProblem(r.error);
  // The input, not the parse: it is the same (strict objects, no defaults), with its own keys as written.
  const shard = data as ShardOutcome;
  const { index, count } = shard.shard;
  if (index >= count) {
    return { path: ["shard", "index"], detail: `expected an index below count (${count}), got ${index}` };
  }
  const bad = requestProblem(shard.request);
  if (bad) return { path: ["request", ...bad.path], detail: bad.detail };
  const candidates = candidateList(shard.request);
  // This share's positions, in order: every index-th of count.
  let next = index;
  const share = Math.max(0, Math.ceil((candidates.length - index) / count)); // this shard's candidates
  for (const [i, [position, outcome]] of shard.outcomes.entries()) {
    if (next >= candidates.length) {
      return {
        path: ["outcomes", i],
        detail: `expected ${share} outcome${
          share === 1 ? "" : "s"
        } (shard ${index}/${count} of ${candidates.length} candidates), got ${shard.outcomes.length}`,
      };
    }
    if (position !== next) {
      return {
        path: ["outcomes", i, 0],
        detail: `expected candidate ${next} (shard ${index}/${count} holds candidates ${index}, ${
          index + count
        }, …), got ${position}`,
      };
    }
    const problem = outcomeProblem(shard.request, candidates, position, outcome);
    if (problem) return { path: ["outcomes", i, 1, ...problem.path], detail: problem.detail };
    next += count;
  }
  if (next < candidates.length) {
    return {
      path: ["outcomes"],
      detail: `candidate ${next} of shard ${index}/${count} missing (${shard.outcomes.length} of ${share} outcomes)`,
    };
  }
  return shard;
}
