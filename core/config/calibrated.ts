/**
 * Calibrated constants: the numbers of the model that measured serving runs
 * set, each with its physical meaning, a plausible range a fit never leaves,
 * and a prior (a physics-derived value from public facts other than the
 * measurements it is fitted to) that holds wherever no source pins it.
 *
 * `deno task validate` fits them to the fit rows of
 * scenarios/validation/registry/sources.yaml, refits them without each
 * source in turn (leave-one-source-out), and writes the values, the folds
 * and the held-out residuals to `data/calibrated.json`; a run reads them
 * through {@link Calibration}. Everything else in the model (peaks,
 * kernel-benchmark efficiencies, measured kernel tables) comes from
 * measurements that no validation row grades.
 *
 * @module
 */
import fitted from "./data/calibrated.json" with { type: "json" };

/** A constant of the model that measured serving runs set. */
export interface CalibratedConstant {
  /** `<scope>.<quantity>`, e.g. `host.vllm-0.10.step_us`. */
  readonly name: string;
  /** What it stands for physically. */
  readonly meaning: string;
  /** Its unit: microseconds, or a fraction of a peak. */
  readonly unit: "µs" | "fraction";
  /** The smallest plausible value: a fit never goes below it. */
  readonly min: number;
  /** The largest plausible value: a fit never goes above it. */
  readonly max: number;
  /** The value wherever no source pins it, derived from public facts other than the fit rows. */
  readonly prior: number;
  /** Where the prior and the range come from. */
  readonly priorSource: string;
}

/** Engine families whose host costs share a prior (their CPU design). */
export type HostFamily = "vllm-v0" | "vllm-v1" | "sglang" | "trtllm" | "mindie" | "lmdeploy";

/** The host-cost quantities of an engine build. */
export type HostQuantity = "step_us" | "seq_us" | "request_us";

/** A host-cost prior and range, per family and quantity. */
interface HostPrior {
  readonly prior: number;
  readonly min: number;
  readonly max: number;
  readonly why: string;
}

/**
 * The host costs of each engine family without a pinning source: CPU time a
 * step spends on scheduling, input preparation, sampling and output
 * processing (`step_us`, once per step; `seq_us`, per sequence in it) that
 * the GPU waits for, and the latency of a request before the engine sees it
 * (API server, tokenization, streaming: `request_us`). Ranges and priors
 * from scratch notes of public measurements, summarized in
 * docs/fidelity.md ("Constants"): vLLM's v0.6.0 performance post and
 * issues #6854, #6801 and #6913 (V0: 5–13 ms of GPU idle per step, about
 * 100 µs per sequence at batch 200); the V1 release post and PR #17866
 * (V1: a whole Llama-3.2-1B step under 2.7 ms); SGLang's v0.4 post (the
 * overlap scheduler leaves no GPU idle when the GPU step is the longer);
 * TensorRT-LLM's overlap-scheduler page; client-minus-server TTFT of 8–12 ms
 * (vLLM PR #54628).
 */
/** Every engine's API server (HTTP, chat template, tokenization, hand-off): no engine publishes a figure of its own. */
const API_SERVER_REQUEST: HostPrior = {
  prior: 8000,
  min: 1000,
  max: 30000,
  why: "client-minus-server TTFT 8-12 ms (vLLM PR #54628)",
};

const HOST_PRIORS: Record<HostFamily, Record<HostQuantity, HostPrior>> = {
  "vllm-v0": {
    step_us: {
      prior: 4000,
      min: 1000,
      max: 12000,
      why: "vLLM issue #6854: 5-13 ms GPU bubble per V0 step, ~4 ms per decode step in traces",
    },
    seq_us: {
      prior: 100,
      min: 20,
      max: 200,
      why: "vLLM issues #6801/#6913: ~20 ms between steps at batch 200, output processing 3.4 ms at batch 32",
    },
    request_us: API_SERVER_REQUEST,
  },
  "vllm-v1": {
    step_us: {
      prior: 1000,
      min: 200,
      max: 3000,
      why: "vLLM V1 post and PR #17866: a whole Llama-3.2-1B step (GPU included) is 2.7 ms",
    },
    seq_us: {
      prior: 40,
      min: 5,
      max: 120,
      why: "V1's persistent batch: 12.7 µs per request for the scheduler alone, plus sampling and output IPC",
    },
    request_us: API_SERVER_REQUEST,
  },
  sglang: {
    step_us: {
      prior: 600,
      min: 100,
      max: 3000,
      why:
        "SGLang v0.4 post: its overlap scheduler hides the CPU step behind the GPU's; a Python event loop of ~0.5-1 ms",
    },
    seq_us: {
      prior: 30,
      min: 5,
      max: 100,
      why: "lower per-sequence tensor processing than vLLM (wuklab scheduling-overhead study)",
    },
    request_us: API_SERVER_REQUEST,
  },
  trtllm: {
    step_us: {
      prior: 400,
      min: 50,
      max: 2000,
      why: "C++ batch manager; the overlap scheduler runs step n's CPU work beside step n+1's GPU work",
    },
    seq_us: { prior: 10, min: 1, max: 50, why: "C++ scheduler (no public per-sequence figure)" },
    request_us: API_SERVER_REQUEST,
  },
  mindie: {
    step_us: {
      prior: 1000,
      min: 200,
      max: 5000,
      why: "no public figure: vLLM V1's prior (a Python scheduler over C++ operators)",
    },
    seq_us: { prior: 40, min: 5, max: 150, why: "no public figure: vLLM V1's prior" },
    request_us: API_SERVER_REQUEST,
  },
  lmdeploy: {
    step_us: {
      prior: 400,
      min: 50,
      max: 2000,
      why: "no public figure: TensorRT-LLM's prior (TurboMind is a C++ engine)",
    },
    seq_us: { prior: 10, min: 1, max: 50, why: "no public figure: TensorRT-LLM's prior" },
    request_us: API_SERVER_REQUEST,
  },
};

/** The host-cost meanings, by quantity. */
const HOST_MEANING: Record<HostQuantity, string> = {
  step_us: "CPU time per engine step the GPU waits for (scheduling, input preparation, sampling, output processing)",
  seq_us: "CPU time per sequence in a step the GPU waits for",
  request_us: "latency of a request before the engine sees it (API server, tokenization, streaming)",
};

/** The prior host cost of a family. */
export function hostPrior(family: HostFamily, q: HostQuantity): number {
  return HOST_PRIORS[family][q].prior;
}

/**
 * A version range of an engine whose host costs public runs pin: its
 * constants are `host.<id>.<quantity>`, fitted on the fit rows that run it;
 * other versions of the engine get their family's prior.
 */
export interface HostPin {
  /** `<engine>-<version>`: the constants' scope. */
  readonly id: string;
  /** The family whose prior and range apply. */
  readonly family: HostFamily;
  /** The quantities the pinning runs can tell apart (the others keep the prior). */
  readonly fits: readonly HostQuantity[];
}

/** The host constant of a pin. */
export const hostConstant = (pin: HostPin | string, q: HostQuantity): string =>
  `host.${typeof pin === "string" ? pin : pin.id}.${q}`;

/** The host constants of a pin, with its family's ranges and priors. */
export function hostConstants(pin: HostPin): CalibratedConstant[] {
  return pin.fits.map((q) => {
    const p = HOST_PRIORS[pin.family][q];
    return {
      name: hostConstant(pin, q),
      meaning: `${pin.id}: ${HOST_MEANING[q]}`,
      unit: "µs",
      min: p.min,
      max: p.max,
      prior: p.prior,
      priorSource: `${pin.family} prior: ${p.why}`,
    };
  });
}

/**
 * The constants of the model itself (not of one engine build), each set by
 * serving runs. The per-engine host costs are {@link hostConstants} of
 * the pins.
 */
export const MODEL_CONSTANTS: readonly CalibratedConstant[] = [
  {
    name: "A100_SXM_80G.hbm_efficiency",
    meaning: "fraction of A100-80GB's 2,039 GB/s that streaming kernels (weights, KV) reach",
    unit: "fraction",
    min: 0.7,
    max: 0.95,
    prior: 0.88,
    priorSource:
      "HBM streaming efficiency measured on other NVIDIA parts: FlashMLA 3,000 of 3,350 GB/s on H800 (0.90), AIConfigurator's B200 decode attention 0.89; A100's older HBM2e taken slightly lower",
  },
  {
    name: "MI300X_192G.hbm_efficiency",
    meaning: "fraction of MI300X's 5.3 TB/s that streaming kernels (weights, KV) reach",
    unit: "fraction",
    min: 0.6,
    max: 0.9,
    prior: 0.8,
    priorSource:
      "upstream-style catalog value for HBM3 on CDNA3 before any MI300X serving run was fitted (NVIDIA parts reach 0.89-0.90; AMD's own kernels are taken a tenth lower)",
  },
  {
    name: "ascend_910.hbm_efficiency",
    meaning:
      "fraction of HBM bandwidth that an engine's streaming kernels reach on an Ascend 910B/910C die (Atlas 800 A2, A3), engine runs only: the generic path keeps upstream's profile",
    unit: "fraction",
    // A weight-streaming kernel below 0.4 of HBM bandwidth is no longer a bandwidth effect but some other cost.
    min: 0.4,
    max: 0.9,
    prior: 0.6,
    priorSource:
      "upstream ServingCast's Atlas 800 A2/A3 device profiles (memory efficiency 0.6; shared/reference/hardware.md)",
  },
  {
    name: "ascend_910.matmul_efficiency",
    meaning:
      "fraction of the matrix-unit peak that an engine's GEMMs and prefill attention reach on an Ascend 910B/910C die, engine runs only",
    unit: "fraction",
    min: 0.15,
    max: 0.95,
    prior: 0.7,
    priorSource:
      "upstream ServingCast's Atlas 800 A2/A3 profiles (compute efficiency 0.7); a single 910B BF16 matmul measurement reaches ~0.93 of peak (shared/reference/calibration.md §1), engines' mixed shapes less",
  },
  {
    name: "kernel_floor_us.cuda",
    meaning:
      "the shortest time a kernel of an engine step occupies an NVIDIA GPU (in-stream launch latency, prologue, tail): a step's GPU time is at least its kernels × this",
    unit: "µs",
    min: 1,
    max: 8,
    prior: 3,
    priorSource:
      "CUDA graphs remove the CPU launch but not the device-side cost of each kernel, ~2-4 µs for the tiny kernels of a small decode batch (cuLaunchKernel 3.0-3.3 µs, tritonbench PR #1017; full graphs cut vLLM's TPOT 7-10% against piecewise ones, vLLM PRs #16072, #42885)",
  },
  {
    name: "kernel_floor_us.rocm",
    meaning:
      "the shortest time a kernel of an engine step occupies an AMD GPU (in-stream launch latency, prologue, tail)",
    unit: "µs",
    min: 2,
    max: 20,
    prior: 6,
    priorSource:
      "ROCm's per-kernel cost runs above CUDA's: launch-bound ops of 11-17 µs end to end on MI308X (PyTorch PR #196920); whisper decode 2.15 → 0.68 ms with graphs on MI355X (vLLM PR #48664) leaves ~1-3 µs of device time per kernel after the launches",
  },
  {
    name: "launch_us.cuda",
    meaning:
      "CPU time to launch one kernel from an eager PyTorch engine on CUDA (op dispatch and cudaLaunchKernel): a step without a CUDA graph lasts at least its kernels × this",
    unit: "µs",
    min: 4,
    max: 25,
    prior: 10,
    priorSource:
      "raw cuLaunchKernel 3.0-3.3 µs, Triton launcher 4.7-5.6 µs, Inductor per kernel 6.8-9.1 µs (tritonbench PR #1017); eager SGLang Llama-3-8B exposes ≥ 2-6 µs per kernel (SGLang PR #1401)",
  },
  {
    name: "launch_us.rocm",
    meaning: "CPU time to launch one kernel from an eager PyTorch engine on ROCm (HIP)",
    unit: "µs",
    min: 8,
    max: 40,
    prior: 15,
    priorSource:
      "launch-bound PyTorch rocBLAS ops take 11-17 µs on MI308X (PyTorch PR #196920); ROCm 6.3's known CPU-overhead issue (ROCm/clr#78)",
  },
  {
    name: "launch_us.ascend",
    meaning:
      "host time to dispatch one operator from an eager PyTorch engine on Ascend (torch_npu's op dispatch and CANN launch): a step without a graph lasts at least its kernels × this",
    unit: "µs",
    min: 10,
    max: 200,
    prior: 40,
    priorSource:
      "no public per-operator figure: CUDA's framework-level 10 µs (tritonbench PR #1017) and ROCm's 11-17 µs (PyTorch PR #196920) scaled by torch_npu's extra dispatch layer (aclnn two-phase launch); a wide range",
  },
  {
    name: "rocm-2025q1.moe_hbm_efficiency",
    meaning:
      "fraction of HBM bandwidth the ROCm builds of early 2025 (Triton block-scale FP8 fused MoE, before AITER) reach streaming the routed experts a decode batch touches",
    unit: "fraction",
    min: 0.05,
    max: 0.35,
    prior: 0.12,
    priorSource:
      "AMD's AITER posts (Mar/May 2025): AITER's fused MoE is up to 3× the earlier kernels, which reaches ~0.35-0.5 of HBM bandwidth like Hopper's grouped GEMMs (DeepGEMM README: 0.61 on H800)",
  },
  {
    name: "rocm-2025q1.mla_decode_hbm_efficiency",
    meaning:
      "fraction of HBM bandwidth the ROCm builds of early 2025 (Triton MLA decode, before AITER) reach reading the latent KV cache",
    unit: "fraction",
    min: 0.02,
    max: 0.3,
    prior: 0.08,
    priorSource:
      "AMD's AITER posts (Mar 2025): AITER's MLA decode is up to 17× the earlier kernel; FlashMLA-class kernels reach ~0.9 (FlashMLA README), AITER's taken at 0.5-0.8",
  },
];

/** The values of constants by name (those pinned by a source; any other takes its prior). */
export type ConstantValues = Readonly<Record<string, number>>;

/** The fitted values and the held-out folds, as `deno task validate` writes them. */
export interface CalibratedFile {
  /** What wrote the file. */
  readonly generated: string;
  /** The constants pinned by the fit rows of every source. */
  readonly values: ConstantValues;
  /** The sources each pinned constant was fitted on. */
  readonly pinnedBy: Readonly<Record<string, readonly string[]>>;
  /** Per source with fit rows: the constants refitted without its rows (leave-one-source-out). */
  readonly folds: Readonly<Record<string, ConstantValues>>;
}

/**
 * The constants a run uses: a source's fitted value where one pins it,
 * the prior elsewhere. Reads can be recorded (which constants a run depends
 * on, for the fit).
 */
export class Calibration {
  /** The values pinned by sources. */
  readonly values: ConstantValues;
  #specs: ReadonlyMap<string, CalibratedConstant>;
  #onRead?: (name: string) => void;

  /**
   * A set of pinned values over the constants `specs` names.
   *
   * @param values pinned values by name
   * @param specs every constant there is, by name
   * @param onRead called with the name of each constant read
   */
  constructor(
    values: ConstantValues,
    specs: ReadonlyMap<string, CalibratedConstant>,
    onRead?: (name: string) => void,
  ) {
    this.values = values;
    this.#specs = specs;
    this.#onRead = onRead;
  }

  /**
   * The value of `name`: pinned, or its prior.
   *
   * @throws {RangeError} for a name no constant has
   */
  get(name: string): number {
    const spec = this.#specs.get(name);
    if (!spec) throw new RangeError(`no calibrated constant '${name}'`);
    this.#onRead?.(name);
    return Object.hasOwn(this.values, name) ? this.values[name] : spec.prior;
  }

  /** Whether a source pins `name` (otherwise it takes its prior). */
  pinned(name: string): boolean {
    return Object.hasOwn(this.values, name);
  }

  /** The same values with other ones in place of some. */
  with(values: ConstantValues): Calibration {
    return new Calibration({ ...this.values, ...values }, this.#specs, this.#onRead);
  }

  /** Only the given values pinned (every other constant at its prior). */
  only(values: ConstantValues): Calibration {
    return new Calibration(values, this.#specs, this.#onRead);
  }

  /** The same values, reporting each read to `onRead`. */
  recording(onRead: (name: string) => void): Calibration {
    return new Calibration(this.values, this.#specs, onRead);
  }
}

/** The committed fit (core/config/data/calibrated.json). */
export const CALIBRATED_FILE: CalibratedFile = fitted as CalibratedFile;
