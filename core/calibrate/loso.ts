/**
 * Leave-one-source-out calibration: every calibrated constant
 * (core/config/calibrated.ts) fitted to the fit rows of the registry, then
 * refitted without each source's rows in turn, and every row predicted by
 * the constants fitted without its own source. The fit minimizes the sum of
 * squared log errors, plus a pull toward each constant's prior (a Gaussian
 * prior of width {@link PRIOR_WIDTH} of its range), within each range by a bounded pattern
 * search (Hooke and Jeeves: it needs no derivatives, and host costs that an
 * overlap scheduler hides have none until they show), one group of constants
 * at a time, on the rows of the rigs the registry says set them; a constant
 * no remaining rig sets takes its prior.
 *
 * @module
 */
import type { FileSystem } from "../config/load.ts";
import { CALIBRATED_CONSTANTS, calibration } from "../config/engine_profiles.ts";
import type { CalibratedConstant, CalibratedFile, Calibration, ConstantValues } from "../config/calibrated.ts";
import { LoadedConfigs, runScenario } from "../scenario/runner.ts";
import type { Scenario } from "../scenario/scenario.ts";
import type { MeasuredRow } from "./registry.ts";

const SPECS: ReadonlyMap<string, CalibratedConstant> = new Map(CALIBRATED_CONSTANTS.map((c) => [c.name, c]));

/**
 * The prior's width: one standard deviation of a constant's Gaussian prior,
 * as a share of its range in the fit's scale (half the range: the range is
 * what the physics allows, the prior the likeliest value within it).
 */
const PRIOR_WIDTH = 0.5;

/**
 * One standard deviation of a row's log error about what the constants can
 * explain, in the fit's objective: 1, a row off by a factor e weighs as much
 * as a constant one prior width from its prior. Chosen by leave-one-source-
 * out over the registry (2026-12): 0.2 (the scatter the held-out rows show)
 * gave 19.0% held out against 19.2% at 1, but pushed the Ascend HBM
 * efficiency and SGLang 0.4.0's per-request cost onto their bounds and vLLM
 * 0.7's step cost to 11.6 ms, rows wanting what the physics does not allow;
 * at 1 no constant reaches a bound. Few rows thus move a constant little.
 */
const ROW_SIGMA = 1;

/** A constant moves a row by more than this (log ratio, ≈ 0.2%) over its range: the row depends on it. */
const INFLUENCE = 0.002;

/** What a row was simulated on: its first instance group's chip and engine, and the model's kind. */
export interface RowContext {
  /** The chip of the first instance group. */
  readonly chip: string;
  /** The engine the scenario names (`serving_config.engine`), or "none" (the generic path). */
  readonly engine: string;
  /** The engine profile record used, if any. */
  readonly record?: string;
  /** The model is a mixture of experts. */
  readonly moe: boolean;
}

/** One scenario run many times with different constants: its rows' simulated values, remembered per set of values. */
export class Target {
  readonly scenario: Scenario;
  /** Chip, engine and model kind, from its first run. */
  readonly context: RowContext;
  /** The constants its runs read. */
  readonly reads: ReadonlySet<string>;
  /**
   * The constants it depends on: those read whose range moves one of its
   * rows by more than {@link INFLUENCE} (from the prior to either end of the
   * range, the others at their priors).
   */
  get dependsOn(): ReadonlySet<string> {
    return this.#dependsOn ??= new Set(
      [...this.reads].filter((n) => {
        const c = SPECS.get(n)!;
        const base = this.simulate({});
        return [c.min, c.max].some((v) =>
          this.simulate({ [n]: v }).some((x, i) => !(Math.abs(Math.log(x / base[i])) <= INFLUENCE))
        );
      }),
    );
  }
  #dependsOn?: ReadonlySet<string>;
  #fs?: FileSystem;
  #loaded = new LoadedConfigs();
  #memo = new Map<string, readonly number[]>();

  /**
   * Runs the scenario once, with `initial` pinned (default: every constant
   * at its prior), to learn which constants it reads.
   */
  constructor(scenario: Scenario, fs?: FileSystem, initial: ConstantValues = {}) {
    this.#fs = fs;
    // Only the measurements matter: no assertions, capacity searches or baselines.
    this.scenario = { ...scenario, assertions: [], perPoint: [], slos: [], minValueSlos: [], baseline: undefined };
    const reads = new Set<string>();
    const first = runScenario(this.scenario, this.#fs, {
      calibration: calibration(initial).recording((n) => reads.add(n)),
      loaded: this.#loaded,
    });
    this.reads = reads;
    this.#memo.set(this.#key(initial), first.measurements.map((m) => m.simulated));
    const plan = first.output.assembled;
    const record = plan.groups[0].serving.profile?.resolved.record;
    this.context = {
      chip: plan.groups[0].device.name,
      engine: plan.config.common.serving_config.engine ?? "none",
      ...(record ? { record: record.label } : {}),
      moe: plan.model.moe !== undefined,
    };
  }

  #run(c: Calibration): readonly number[] {
    return runScenario(this.scenario, this.#fs, { calibration: c, loaded: this.#loaded }).measurements.map((m) =>
      m.simulated
    );
  }

  /** The simulated values of its rows with `values` pinned (others at their prior). */
  simulate(values: ConstantValues): readonly number[] {
    const key = this.#key(values);
    let v = this.#memo.get(key);
    if (v === undefined) {
      v = this.#run(calibration(JSON.parse(key)));
      this.#memo.set(key, v);
    }
    return v;
  }

  /** The values of the constants it reads, as a memo key (the others cannot change its runs). */
  #key(values: ConstantValues): string {
    const mine: Record<string, number> = {};
    for (const n of [...this.reads].sort()) if (Object.hasOwn(values, n)) mine[n] = values[n];
    return JSON.stringify(mine);
  }
}

/** A fitted constant and how it sits in its range. */
export interface FittedConstant {
  /** The constant. */
  readonly spec: CalibratedConstant;
  /** Its fitted value. */
  readonly value: number;
  /** It ends within 0.5% of its range (in the fit's scale) of `min` or `max`. */
  readonly atBound?: "min" | "max";
}

/** One connected group of constants and the fit rows that read them, fitted together. */
export interface FitGroup {
  /** The constants, by name. */
  readonly constants: readonly FittedConstant[];
  /** Ids of the fit rows. */
  readonly rows: readonly string[];
  /** Root-mean-square log error of the rows with the priors. */
  readonly rmsBefore: number;
  /** … with the fitted values. */
  readonly rmsAfter: number;
}

/** A fit: the values and its groups. */
export interface Fit {
  /** The fitted values by name (only the constants some fit row reads). */
  readonly values: ConstantValues;
  /** Its groups. */
  readonly groups: readonly FitGroup[];
}

/** Options of a fit. */
export interface FitOptions {
  /** The pattern search stops when its step (a share of each range, in the fit's scale) falls below this (default 1/512). */
  readonly tolerance?: number;
  /** Called with a line of progress. */
  readonly progress?: (line: string) => void;
}

const sumOfSquares = (e: readonly number[]) => e.reduce((a, x) => a + x * x, 0);

/**
 * Where a pattern search starts: the best of the prior and a coarse grid of
 * each constant at 1/8, 3/8, 5/8 and 7/8 of its range (for groups of up to
 * three constants), so that a search does not stay in the basin of the prior
 * when two constants trade off (a launch cost against a bandwidth).
 */
function coarseStart(start: readonly number[], f: (ps: readonly number[]) => number): number[] {
  if (start.length > 3) return [...start];
  const levels = [0.125, 0.375, 0.625, 0.875];
  let best = [...start];
  let fBest = f(best);
  const grid = start.reduce<number[][]>((acc) => acc.flatMap((xs) => levels.map((l) => [...xs, l])), [[]]);
  for (const ps of grid) {
    const v = f(ps);
    if (v < fBest - 1e-12) [best, fBest] = [ps, v];
  }
  return best;
}

/**
 * Minimizes `f` over [0, 1]^k from `start` by a pattern search: try each
 * coordinate one step up and down, move on the first improvement, and halve
 * the step when none improves, down to `tolerance`. Deterministic.
 */
function patternSearch(start: readonly number[], f: (ps: readonly number[]) => number, tolerance: number): number[] {
  let x = [...start];
  let fx = f(x);
  for (let step = 0.25; step >= tolerance;) {
    let moved = false;
    for (let i = 0; i < x.length && !moved; i++) {
      for (const dir of [1, -1]) {
        const y = [...x];
        y[i] = Math.min(1, Math.max(0, x[i] + dir * step));
        if (y[i] === x[i]) continue;
        const fy = f(y);
        if (fy < fx - 1e-12) {
          [x, fx, moved] = [y, fy, true];
          break;
        }
      }
    }
    if (!moved) step /= 2;
  }
  return x;
}

/** The fit's scale of a constant: log when its range spans a factor 4 or more from a positive minimum. */
const logScale = (c: CalibratedConstant) => c.min > 0 && c.max / c.min >= 4;
/** A constant's value from its position p ∈ [0, 1] in its range, and back. */
const fromUnit = (c: CalibratedConstant, p: number) =>
  logScale(c) ? c.min * Math.pow(c.max / c.min, p) : c.min + p * (c.max - c.min);
const toUnit = (c: CalibratedConstant, v: number) =>
  logScale(c) ? Math.log(v / c.min) / Math.log(c.max / c.min) : (v - c.min) / (c.max - c.min);

const logError = (simulated: number, measured: number) =>
  simulated > 0 && Number.isFinite(simulated) ? Math.log(simulated / measured) : 5;

/**
 * Fits the constants the rigs of `rows` set (`sets` in the registry), group
 * by group: constants a rig sets together, or several rigs set, form one
 * group, fitted on those rigs' rows; a group whose rows depend on another's
 * constants comes after it, which is then held at its fitted values. Any
 * constant no rig sets stays at its prior.
 */
function fitRows(
  rows: readonly MeasuredRow[],
  targets: ReadonlyMap<Scenario, Target>,
  options: FitOptions,
): Fit {
  const parent = new Map<string, string>();
  const find = (x: string): string => {
    let p = parent.get(x) ?? x;
    while (p !== (parent.get(p) ?? p)) p = parent.get(p)!;
    parent.set(x, p);
    return p;
  };
  const union = (a: string, b: string) => parent.set(find(a), find(b));
  const rigs = [...new Set(rows.map((r) => r.rig))];
  for (const rig of rigs) {
    for (const n of rig.sets) if (!parent.has(n)) parent.set(n, n);
    for (const n of rig.sets.slice(1)) union(n, rig.sets[0]);
  }
  // A group ordered after those whose constants its rows depend on; a cycle makes one group.
  const members = () => {
    const m = new Map<string, string[]>();
    for (const n of [...parent.keys()].sort()) m.set(find(n), [...(m.get(find(n)) ?? []), n]);
    return m;
  };
  const rowsOf = (names: readonly string[]) => rows.filter((r) => r.rig.sets.some((n) => names.includes(n)));
  const needs = (names: readonly string[]) =>
    new Set(
      rowsOf(names).flatMap((r) => [...targets.get(r.scenario)!.dependsOn]).filter((n) => parent.has(n)).map(find),
    );
  const order: string[] = [];
  for (let merged = true; merged;) {
    merged = false;
    order.length = 0;
    const groups = members();
    const state = new Map<string, "open" | "done">();
    const visit = (g: string, path: string[]): boolean => {
      if (state.get(g) === "done") return true;
      if (state.get(g) === "open") {
        for (const h of path.slice(path.indexOf(g))) union(h, g);
        return false;
      }
      state.set(g, "open");
      for (const h of [...needs(groups.get(g)!)].sort()) if (h !== g && !visit(h, [...path, g])) return false;
      state.set(g, "done");
      order.push(g);
      return true;
    };
    for (const g of [...groups.keys()].sort()) {
      if (!visit(g, [])) {
        merged = true;
        break;
      }
    }
  }
  const groupsByRoot = members();
  const values: Record<string, number> = {};
  const fitted: FitGroup[] = [];
  for (const root of order) {
    const names = groupsByRoot.get(root)!;
    const specs = names.map((n) => SPECS.get(n)!);
    const groupRows = rowsOf(names);
    const residuals = (v: ConstantValues) =>
      groupRows.map((r) =>
        logError(targets.get(r.scenario)!.simulate({ ...values, ...v })[r.index], r.measurement.value)
      );
    const at = (ps: readonly number[]): ConstantValues =>
      Object.fromEntries(specs.map((c, i) => [c.name, fromUnit(c, Math.min(1, Math.max(0, ps[i])))]));
    const start = specs.map((c) => toUnit(c, c.prior));
    options.progress?.(`fitting ${names.join(", ")} on ${groupRows.length} rows`);
    // The negative log posterior: the rows' squared log errors in units of ROW_SIGMA, plus the prior's pull (a
    // constant moved across its whole range costs as much as four rows off by ROW_SIGMA), so that the data must
    // demand a value far from the physics.
    const objective = (ps: readonly number[]) =>
      sumOfSquares(residuals(at(ps))) / ROW_SIGMA ** 2 +
      ps.reduce((a, p, i) => a + ((p - start[i]) / PRIOR_WIDTH) ** 2, 0);
    const found = patternSearch(coarseStart(start, objective), objective, options.tolerance ?? 1 / 512);
    const rms = (e: readonly number[]) => Math.sqrt(sumOfSquares(e) / Math.max(1, e.length));
    const before = rms(residuals(at(start)));
    const after = rms(residuals(at(found)));
    Object.assign(values, at(found));
    fitted.push({
      constants: specs.map((c, i) => {
        const atBound = found[i] <= 0.005 ? "min" as const : found[i] >= 0.995 ? "max" as const : undefined;
        return { spec: c, value: values[c.name], ...(atBound ? { atBound } : {}) };
      }),
      rows: groupRows.map((r) => r.id),
      rmsBefore: before,
      rmsAfter: after,
    });
  }
  return { values, groups: fitted };
}

/** One row's predictions. */
export interface RowPrediction {
  /** The row. */
  readonly row: MeasuredRow;
  /** What it was simulated on. */
  readonly context: RowContext;
  /** Simulated with the full fit. */
  readonly inSample: number;
  /** Simulated with the constants fitted without the row's source (= `inSample` when its source fits nothing). */
  readonly heldOut: number;
}

/** What a leave-one-source-out calibration found. */
export interface LosoResult {
  /** The fit on every fit row. */
  readonly full: Fit;
  /** The sources each fitted constant was fitted on. */
  readonly pinnedBy: Readonly<Record<string, readonly string[]>>;
  /** Per source with fit rows, the fit without them. */
  readonly folds: ReadonlyMap<string, Fit>;
  /** Every row's predictions, in the order given. */
  readonly predictions: readonly RowPrediction[];
}

/**
 * Fits every calibrated constant on the fit rows, refits without each source
 * that has fit rows, and predicts every row.
 */
export function leaveOneSourceOut(
  rows: readonly MeasuredRow[],
  fs?: FileSystem,
  options: FitOptions = {},
): LosoResult {
  const targets = targetsOf(rows, fs);
  const fitRowsAll = rows.filter((r) => r.role === "fit");
  options.progress?.(`full fit on ${fitRowsAll.length} rows`);
  const full = fitRows(fitRowsAll, targets, options);
  const pinnedBy: Record<string, string[]> = {};
  for (const n of Object.keys(full.values).sort()) {
    pinnedBy[n] = [...new Set(fitRowsAll.filter((r) => r.rig.sets.includes(n)).map((r) => r.rig.source.id))].sort();
  }
  const folds = new Map<string, Fit>();
  for (const source of [...new Set(fitRowsAll.map((r) => r.rig.source.id))].sort()) {
    options.progress?.(`without ${source}`);
    folds.set(source, fitRows(fitRowsAll.filter((r) => r.rig.source.id !== source), targets, options));
  }
  const foldValues = new Map([...folds].map(([k, f]) => [k, f.values]));
  return { full, pinnedBy, folds, predictions: predictWith(rows, full.values, foldValues, targets) };
}

/** Every row's scenario as a target, once per scenario, first run with `initial`. */
function targetsOf(rows: readonly MeasuredRow[], fs?: FileSystem, initial: ConstantValues = {}): Map<Scenario, Target> {
  const targets = new Map<Scenario, Target>();
  for (const r of rows) if (!targets.has(r.scenario)) targets.set(r.scenario, new Target(r.scenario, fs, initial));
  return targets;
}

function predictWith(
  rows: readonly MeasuredRow[],
  full: ConstantValues,
  folds: ReadonlyMap<string, ConstantValues>,
  targets: ReadonlyMap<Scenario, Target>,
): RowPrediction[] {
  return rows.map((row): RowPrediction => {
    const t = targets.get(row.scenario)!;
    const inSample = t.simulate(full)[row.index];
    const fold = folds.get(row.rig.source.id);
    return { row, context: t.context, inSample, heldOut: fold ? t.simulate(fold)[row.index] : inSample };
  });
}

/**
 * Every row predicted with constants already fitted (such as the committed
 * core/config/data/calibrated.json): in sample with `full`, held out with
 * the fold of its source where there is one. No fit runs.
 */
export function predictRows(
  rows: readonly MeasuredRow[],
  full: ConstantValues,
  folds: Readonly<Record<string, ConstantValues>>,
  fs?: FileSystem,
): RowPrediction[] {
  return predictWith(rows, full, new Map(Object.entries(folds)), targetsOf(rows, fs, full));
}

/** A calibrated constant as fitted, for the report. */
export interface ReportedConstant {
  /** The constant. */
  readonly spec: CalibratedConstant;
  /** Its value (the prior when no source pins it). */
  readonly value: number;
  /** The sources whose fit rows set it (empty: the prior). */
  readonly pinnedBy: readonly string[];
  /** It sits at an end of its range. */
  readonly atBound?: "min" | "max";
}

/** The calibrated constants as a report lists them: the value each run uses, who set it, whether it sits at a bound. */
export function reportedConstants(
  values: ConstantValues,
  pinnedBy: Readonly<Record<string, readonly string[]>>,
): ReportedConstant[] {
  return CALIBRATED_CONSTANTS.map((spec) => {
    const pinned = Object.hasOwn(values, spec.name);
    const value = pinned ? values[spec.name] : spec.prior;
    const p = toUnit(spec, value);
    const atBound = !pinned ? undefined : p <= 0.005 ? "min" as const : p >= 0.995 ? "max" as const : undefined;
    return { spec, value, pinnedBy: pinnedBy[spec.name] ?? [], ...(atBound ? { atBound } : {}) };
  });
}

/** The file `deno task validate` writes for runs to read (core/config/data/calibrated.json). */
export function calibratedFile(r: LosoResult): CalibratedFile {
  const sorted = (v: ConstantValues) =>
    Object.fromEntries(Object.keys(v).sort().map((k) => [k, Number(v[k].toPrecision(6))]));
  return {
    generated:
      "deno task validate: the calibrated constants fitted on every source's fit rows (values), the sources that set each (pinnedBy), and per source with fit rows the constants refitted without it (folds)",
    values: sorted(r.full.values),
    pinnedBy: r.pinnedBy,
    folds: Object.fromEntries([...r.folds].map(([k, f]) => [k, sorted(f.values)])),
  };
}

/** Lines about fitted constants at an end of their range, in the full fit and in each fold. */
export function boundWarnings(r: LosoResult): string[] {
  const out: string[] = [];
  const fits = [["every source", r.full] as const, ...[...r.folds].map(([s, f]) => [`without ${s}`, f] as const)];
  for (const [which, fit] of fits) {
    for (const g of fit.groups) {
      for (const c of g.constants) {
        if (c.atBound) {
          out.push(
            `warning: ${c.spec.name} fitted to ${
              c.value.toPrecision(4)
            }, at the ${c.atBound} of its range (${c.spec.min}-${c.spec.max} ${c.spec.unit}) (${which}): the rows it is fitted on want a value the physics does not allow`,
          );
        }
      }
    }
  }
  return out;
}
