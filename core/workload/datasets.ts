/**
 * Length shapes of public datasets, as serving papers publish them: a
 * lognormal per column fitted to the published median and 90th percentile
 * (μ = ln median, σ = ln(P90 / median) / z₀.₉, z₀.₉ = 1.2816), cut at the
 * papers' filters. `load_gen.dataset` takes one by name; nothing is
 * downloaded. Each shape is tested against its published figures
 * (tests/datasets_test.ts).
 *
 * @module
 */
import type { LengthDist } from "./lengths.ts";

/** The 90th percentile of a standard normal. */
const Z90 = 1.2815515655446004;

/** Published figures of one column, tokens. */
export interface PublishedLengths {
  readonly median: number;
  readonly p90: number;
}

/** A dataset's length shape. */
export interface DatasetShape {
  /** `load_gen.dataset`. */
  readonly name: string;
  /** What it is. */
  readonly description: string;
  /** The published prompt and output figures the shape is fitted to. */
  readonly published: { readonly input: PublishedLengths; readonly output: PublishedLengths };
  /** Longest prompt and output drawn (the source's filter). */
  readonly max: { readonly input: number; readonly output: number };
  /** Where the figures were published, and how they were measured. */
  readonly source: string;
}

/** The shapes by name. */
export const DATASET_SHAPES: readonly DatasetShape[] = [
  {
    name: "sharegpt4_chat",
    description: "ShareGPT-style chat (openchat_sharegpt4: GPT-4 conversations shared from ChatGPT)",
    published: { input: { median: 1730, p90: 5696 }, output: { median: 415, p90: 834 } },
    max: { input: 8192, output: 8192 },
    source: "Agrawal et al., Taming Throughput-Latency Tradeoff in LLM Inference with Sarathi-Serve (OSDI 2024), " +
      "Table 2: openchat_sharegpt4, prompt tokens median 1730 / P90 5696, output median 415 / P90 834 (requests over " +
      "8,192 tokens in all removed; Llama-2 tokenizer per its artifact)",
  },
  {
    name: "arxiv_summarization",
    description: "long-context summarisation (arXiv papers to abstracts)",
    published: { input: { median: 7059, p90: 12985 }, output: { median: 208, p90: 371 } },
    max: { input: 16384, output: 16384 },
    source: "Agrawal et al., Sarathi-Serve (OSDI 2024), Table 2: arxiv_summarization, prompt tokens median 7059 / " +
      "P90 12985, output median 208 / P90 371 (requests over 16,384 tokens in all removed)",
  },
  {
    name: "azure_code",
    description: "code completion (Azure's production coding service, 2023)",
    published: { input: { median: 1500, p90: 5188 }, output: { median: 13, p90: 55 } },
    max: { input: 8192, output: 2048 },
    source:
      "Patel et al., Splitwise (ISCA 2024), §III-A: coding median prompt 1500 tokens, median output 13; the P90s " +
      "(5188, 55) from the trace it released (Azure LLM inference trace 2023, code, 8,819 requests; as Vidur's " +
      "data/processed_traces/splitwise_code.csv holds it)",
  },
];

/** The lognormal of a column fitted to its median and P90, as a {@link LengthDist} (mean and std), cut at `max`. */
export function fittedLengths(p: PublishedLengths, max: number): LengthDist {
  const mu = Math.log(p.median);
  const sigma = Math.log(p.p90 / p.median) / Z90;
  const mean = Math.exp(mu + (sigma * sigma) / 2);
  const std = mean * Math.sqrt(Math.exp(sigma * sigma) - 1);
  return { dist: "lognormal", mean, std, min: 1, max };
}

/** Dataset `name`'s prompt and output distributions, or undefined for an unknown name. */
export function datasetLengths(
  name: string,
): { input: LengthDist; output: LengthDist; shape: DatasetShape } | undefined {
  const shape = DATASET_SHAPES.find((d) => d.name === name);
  if (!shape) return undefined;
  return {
    input: fittedLengths(shape.published.input, shape.max.input),
    output: fittedLengths(shape.published.output, shape.max.output),
    shape,
  };
}
