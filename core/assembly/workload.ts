/**
 * Turns a validated `load_gen` into the simulator's workload, checking the
 * rules a schema cannot express (min ≤ max, one rate source) at their keys.
 *
 * @module
 */
import type { WorkloadSpec } from "../engine/types.ts";
import { maxLength, meanLength } from "../workload/lengths.ts";
import type { LengthDist } from "../workload/lengths.ts";
import type { RequestClass } from "../workload/source.ts";
import { TraceSource } from "../workload/trace.ts";
import type { LoadedTrace } from "../config/load.ts";
import type { YamlSource } from "../config/source.ts";
import type { LengthDistConfig, LoadGenConfig, RunLimits, SessionsConfig } from "../config/types.ts";
import type { SessionSpec } from "../workload/sessions.ts";
import { datasetLengths } from "../workload/datasets.ts";
import { DEFAULT_LIMITS } from "../config/schema.ts";
import { showLimit } from "../config/errors.ts";
import { scheduleTimeAt } from "../workload/arrival.ts";
import type { RateSegment } from "../workload/arrival.ts";

const seconds = (x: number) => (Number.isFinite(x) ? `${Number(x.toPrecision(3))} s` : "∞ s");

/** Seconds until the `n`th arrival is expected (the first at 0) at `rate`, or under `schedule`. */
function expectedSpan(n: number, rate: number, schedule?: readonly RateSegment[]): number {
  if (n <= 1) return 0;
  if (!schedule) return Number.isFinite(rate) ? (n - 1) / rate : 0;
  return scheduleTimeAt(n - 1, schedule);
}

/** Fails at `key` when the arrivals would span more than `limits.max_arrival_seconds`. */
function checkSpan(src: YamlSource, key: (string | number)[], n: number, span: number, limits: RunLimits): void {
  if (span <= limits.max_arrival_seconds) return;
  const limit = showLimit(limits.max_arrival_seconds);
  const why = "simulated times are integer µs, exact up to about 285 years";
  src.fail(
    key,
    `the arrivals of ${n} requests would span ${
      seconds(span)
    }, more than limits.max_arrival_seconds (${limit} s; ${why})`,
  );
}

/** Fails at `load_gen.num_requests` above `limits.max_requests`. */
function checkRequests(src: YamlSource, n: number, limits: RunLimits): void {
  if (n <= limits.max_requests) return;
  const limit = showLimit(limits.max_requests);
  src.fail(
    ["load_gen", "num_requests"],
    `${n} requests exceed limits.max_requests (${limit}; about 20 bytes each); raise it in the common file's limits`,
  );
}

function lengthDist(src: YamlSource, path: (string | number)[], d: LengthDistConfig): LengthDist {
  const at = (k: string | number, ...rest: (string | number)[]) => [...path, k, ...rest];
  if (d.dist === "uniform" && d.min > d.max) src.fail(at("max"), `must be ≥ min (${d.min}), got ${d.max}`);
  if ((d.dist === "normal" || d.dist === "lognormal") && d.min !== undefined && d.max !== undefined && d.min > d.max) {
    src.fail(at("max"), `must be ≥ min (${d.min}), got ${d.max}`);
  }
  // Lengths are tokens: a spread beyond 100 × the mean draws lengths of 0 or beyond any context.
  if ((d.dist === "normal" || d.dist === "lognormal") && !(d.std <= 100 * d.mean)) {
    src.fail(at("std"), `expected at most 100 × mean (${100 * d.mean}), got ${d.std}`);
  }
  if ((d.dist === "normal" || d.dist === "lognormal") && !(d.mean <= 1e9)) {
    src.fail(at("mean"), `expected at most 1e9 tokens, got ${d.mean}`);
  }
  if (d.dist === "bins") {
    d.bins.forEach((b, i) => {
      if (b.min_tokens > b.max_tokens) {
        src.fail(at("bins", i, "max_tokens"), `must be ≥ min_tokens (${b.min_tokens}), got ${b.max_tokens}`);
      }
    });
  }
  return d;
}

/**
 * The workload of a run.
 *
 * @param src the common file (for error positions)
 * @param lg its validated `load_gen`
 * @param maxConcurrency `serving_config.max_concurrency`
 * @param seed a seed override
 * @param trace the validated trace, for `load_gen_type: trace`
 */
export function workloadOf(
  src: YamlSource,
  lg: LoadGenConfig,
  maxConcurrency: number,
  seed?: number,
  trace?: LoadedTrace,
  limits: RunLimits = DEFAULT_LIMITS,
  contextLength?: number,
): WorkloadSpec {
  if (lg.load_gen_type === "fixed_length") {
    checkRequests(src, lg.num_requests, limits);
    checkSpan(
      src,
      ["load_gen", "request_rate"],
      lg.num_requests,
      expectedSpan(lg.num_requests, lg.request_rate),
      limits,
    );
    return {
      numRequests: lg.num_requests,
      input: { dist: "fixed", value: lg.num_input_tokens },
      output: { dist: "fixed", value: lg.num_output_tokens },
      arrival: { rate: lg.request_rate, process: lg.arrival_process, cv: lg.arrival_cv },
      maxConcurrency,
      seed: seed ?? lg.seed,
    };
  }
  if (lg.load_gen_type === "trace") {
    const t = trace!;
    // Gaps scale by time_scale, or so that the mean rate becomes request_rate.
    const span = t.last - t.origin;
    const scale = lg.request_rate !== undefined && t.count > 1 && span > 0
      ? (1000 / lg.request_rate) / (span / (t.count - 1))
      : lg.time_scale;
    const rate = t.count > 1 && span > 0 ? ((t.count - 1) / (span * scale)) * 1000 : Infinity;
    checkSpan(
      src,
      ["load_gen", lg.request_rate !== undefined ? "request_rate" : "time_scale"],
      t.count,
      (span * scale) / 1000,
      limits,
    );
    return {
      numRequests: t.count,
      input: { dist: "uniform", min: 1, max: t.maxInput },
      output: { dist: "uniform", min: 1, max: t.maxOutput },
      arrival: { rate, process: "constant", cv: 1 },
      source: () => new TraceSource(t.records(), t.count, { origin: t.origin, scale }, lg.hash_block_tokens),
      label: `a trace (${t.file.replace(/^.*[\\/]/, "")}, mean ${t.meanInput.toFixed(0)} in / ${
        t.meanOutput.toFixed(0)
      } out, ${Number.isFinite(rate) ? `${rate.toPrecision(3)} req/s` : "all at t=0"})`,
      maxConcurrency,
      seed: seed ?? lg.seed,
    };
  }
  const a = lg.arrival;
  if (a.process !== "burst" && (a.request_rate === undefined) === (a.rate_schedule === undefined)) {
    src.fail(["load_gen", "arrival"], "give exactly one of request_rate and rate_schedule (or process: burst)");
  }
  let classes: RequestClass[];
  if (lg.classes) {
    if (lg.input_tokens || lg.output_tokens) {
      src.fail(
        ["load_gen", lg.input_tokens ? "input_tokens" : "output_tokens"],
        "give lengths per class when classes are set",
      );
    }
    if (lg.dataset) src.fail(["load_gen", "dataset"], "give lengths per class when classes are set");
    classes = lg.classes.map((c, i) => ({
      name: c.name ?? `class${i}`,
      weight: c.weight,
      input: lengthDist(src, ["load_gen", "classes", i, "input_tokens"], c.input_tokens),
      output: lengthDist(src, ["load_gen", "classes", i, "output_tokens"], c.output_tokens),
      sharedPrefixTokens: c.shared_prefix_tokens,
      prefixGroups: c.prefix_groups,
    }));
  } else if (lg.dataset) {
    if (lg.input_tokens || lg.output_tokens) {
      src.fail(
        ["load_gen", lg.input_tokens ? "input_tokens" : "output_tokens"],
        `give either dataset (${lg.dataset}) or input_tokens and output_tokens`,
      );
    }
    const d = datasetLengths(lg.dataset)!;
    classes = [{
      name: lg.dataset,
      weight: 1,
      input: d.input,
      output: d.output,
      sharedPrefixTokens: lg.shared_prefix_tokens,
      prefixGroups: lg.prefix_groups,
    }];
  } else {
    if (!lg.input_tokens || !lg.output_tokens) {
      src.fail(
        ["load_gen"],
        `missing required key '${lg.input_tokens ? "output_tokens" : "input_tokens"}' (or give classes)`,
      );
    }
    classes = [{
      name: "default",
      weight: 1,
      input: lengthDist(src, ["load_gen", "input_tokens"], lg.input_tokens),
      output: lengthDist(src, ["load_gen", "output_tokens"], lg.output_tokens),
      sharedPrefixTokens: lg.shared_prefix_tokens,
      prefixGroups: lg.prefix_groups,
    }];
  }
  checkRequests(src, lg.num_requests, limits);
  const schedule = a.rate_schedule?.map((s) => ({ duration: s.duration, rate: s.request_rate }));
  if (a.process !== "burst") {
    checkSpan(
      src,
      ["load_gen", "arrival", schedule ? "rate_schedule" : "request_rate"],
      lg.num_requests,
      expectedSpan(lg.num_requests, a.request_rate ?? Infinity, schedule),
      limits,
    );
  }
  const one = classes.length === 1 ? classes[0] : undefined;
  const sessions = lg.sessions ? sessionSpec(src, lg.sessions, contextLength) : undefined;
  return {
    ...(sessions ? { sessions } : {}),
    ...(lg.dataset ? { dataset: lg.dataset } : {}),
    numRequests: lg.num_requests,
    input: one?.input ?? mixture(classes, "input"),
    output: one?.output ?? mixture(classes, "output"),
    classes,
    arrival: {
      rate: a.request_rate ?? Infinity,
      process: a.process,
      cv: a.cv,
      schedule,
    },
    maxConcurrency,
    seed: seed ?? lg.seed,
  };
}

/** A conversation's content ids cover 16M tokens: no session runs longer. */
const SESSION_TOKENS = 16_000_000;

/**
 * The sessions of a synthetic workload, checked. A conversation stops
 * before a turn that would pass `max_context_tokens`, by default the
 * model's context length (`contextLength`), as a chat client stops at it.
 */
function sessionSpec(src: YamlSource, c: SessionsConfig, contextLength?: number): SessionSpec {
  const path = ["load_gen", "sessions"];
  const think = c.think_time;
  if (think.dist === "uniform" && think.min > think.max) {
    src.fail([...path, "think_time", "max"], `must be ≥ min (${think.min}), got ${think.max}`);
  }
  const max = c.max_context_tokens ?? contextLength ?? SESSION_TOKENS;
  if (max > SESSION_TOKENS) {
    src.fail([...path, "max_context_tokens"], `expected at most ${SESSION_TOKENS} tokens of conversation, got ${max}`);
  }
  return { turns: lengthDist(src, [...path, "turns"], c.turns), thinkTime: think, maxContext: max };
}

/** A stand-in distribution covering every class's lengths (for bounds and descriptions). */
function mixture(classes: readonly RequestClass[], key: "input" | "output"): LengthDist {
  const max = classes.reduce((m, c) => Math.max(m, maxLength(c[key])), 0);
  const total = classes.reduce((s, c) => s + c.weight, 0);
  const mean = classes.reduce((s, c) => s + c.weight * meanLength(c[key]), 0) / total;
  return { dist: "lognormal", mean: Math.round(mean), std: 0, min: 1, max: Number.isFinite(max) ? max : undefined };
}
