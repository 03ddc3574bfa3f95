/**
 * Turns a validated `load_gen` into the simulator's workload, checking the
 * rules a schema cannot express (min ≤ max, one rate source) at their keys.
 *
 * @module
 */
import type { WorkloadSpec } from "../engine/types.ts";
import type { LengthDist } from "../workload/lengths.ts";
import type { YamlSource } from "./source.ts";
import type { LengthDistConfig, LoadGenConfig } from "./types.ts";

function lengthDist(src: YamlSource, key: string, d: LengthDistConfig): LengthDist {
  const at = (k: string | number, ...rest: (string | number)[]) => ["load_gen", key, k, ...rest];
  if (d.dist === "uniform" && d.min > d.max) src.fail(at("max"), `must be ≥ min (${d.min}), got ${d.max}`);
  if ((d.dist === "normal" || d.dist === "lognormal") && d.min !== undefined && d.max !== undefined && d.min > d.max) {
    src.fail(at("max"), `must be ≥ min (${d.min}), got ${d.max}`);
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
 */
export function workloadOf(src: YamlSource, lg: LoadGenConfig, maxConcurrency: number, seed?: number): WorkloadSpec {
  if (lg.load_gen_type === "fixed_length") {
    return {
      numRequests: lg.num_requests,
      input: { dist: "fixed", value: lg.num_input_tokens },
      output: { dist: "fixed", value: lg.num_output_tokens },
      arrival: { rate: lg.request_rate, process: lg.arrival_process, cv: lg.arrival_cv },
      maxConcurrency,
      seed: seed ?? lg.seed,
    };
  }
  const a = lg.arrival;
  if (a.process !== "burst" && (a.request_rate === undefined) === (a.rate_schedule === undefined)) {
    src.fail(["load_gen", "arrival"], "give exactly one of request_rate and rate_schedule (or process: burst)");
  }
  return {
    numRequests: lg.num_requests,
    input: lengthDist(src, "input_tokens", lg.input_tokens),
    output: lengthDist(src, "output_tokens", lg.output_tokens),
    arrival: {
      rate: a.request_rate ?? Infinity,
      process: a.process,
      cv: a.cv,
      schedule: a.rate_schedule?.map((s) => ({ duration: s.duration, rate: s.request_rate })),
    },
    maxConcurrency,
    seed: seed ?? lg.seed,
  };
}
