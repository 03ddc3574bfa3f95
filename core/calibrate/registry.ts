/**
 * The registry of measured rows (scenarios/validation/registry/sources.yaml):
 * every source (a publisher and a document, commit or run) and every rig
 * (one hardware × engine build × model × harness run), with the rows of
 * each rig that set calibrated constants. {@link collectRows} reads the
 * measured rows of scenario files and gives each its source, rig and role.
 *
 * @module
 */
import { z } from "zod";
import { InputError } from "../config/errors.ts";
import { denoFileSystem, readYaml } from "../config/load.ts";
import type { FileSystem } from "../config/load.ts";
import { mapping } from "../config/schema.ts";
import { hasConstant } from "../config/engine_profiles.ts";
import { validate } from "../config/validate.ts";
import { loadScenario } from "../scenario/scenario.ts";
import type { Measurement, Scenario } from "../scenario/scenario.ts";

const text = () => z.string({ error: "expected text" }).min(1, { error: "expected text" });
const id = () =>
  z.string({ error: "expected an id" }).regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, {
    error: "expected an id of letters, digits, '.', '_' and '-'",
  });

/** Schema of the registry file. */
export const RegistrySchema = mapping({
  sources: z.array(mapping({
    id: id(),
    publisher: text(),
    document: text(),
    rigs: z.array(mapping({
      id: id(),
      hardware: text(),
      engine: text(),
      model: text(),
      harness: text(),
      fit: z.array(id()).min(1).optional(),
      sets: z.array(z.string().min(1)).min(1).optional(),
    })).min(1),
  })).min(1),
});

/** One rig: a hardware × engine build × model × harness run. */
export interface Rig {
  /** Its id (rows name it as `rig:`). */
  readonly id: string;
  /** The source that published it. */
  readonly source: Source;
  /** Devices and count. */
  readonly hardware: string;
  /** Engine and build. */
  readonly engine: string;
  /** Model and precision. */
  readonly model: string;
  /** The benchmark and its load. */
  readonly harness: string;
  /** Ids of its rows that set calibrated constants. */
  readonly fit: ReadonlySet<string>;
  /** The calibrated constants its fit rows set (core/config/calibrated.ts). */
  readonly sets: readonly string[];
}

/** One source: a publisher and a document, commit or run. */
export interface Source {
  /** Its id: the unit left out in turn. */
  readonly id: string;
  /** Who published it. */
  readonly publisher: string;
  /** The document, file at a commit, page or run. */
  readonly document: string;
  /** Its rigs. */
  readonly rigs: readonly Rig[];
}

/** The loaded registry. */
export interface Registry {
  /** The file. */
  readonly file: string;
  /** Every source, in file order. */
  readonly sources: readonly Source[];
  /** Rigs by id. */
  readonly rigs: ReadonlyMap<string, Rig>;
}

/**
 * Reads and checks the registry: ids unique across sources and rigs, and a
 * fit row listed once.
 *
 * @throws {InputError} at the offending key
 */
export function loadRegistry(file: string, fs: FileSystem = denoFileSystem): Registry {
  const src = readYaml(file, fs);
  const r = validate(src, RegistrySchema);
  const rigs = new Map<string, Rig>();
  const seen = new Set<string>();
  const fitRows = new Set<string>();
  const sources: Source[] = r.sources.map((s, i) => {
    if (seen.has(s.id)) src.fail(["sources", i, "id"], `source id '${s.id}' appears twice`);
    seen.add(s.id);
    const source: { -readonly [K in keyof Source]: Source[K] } = { ...s, rigs: [] };
    source.rigs = s.rigs.map((g, j) => {
      if (rigs.has(g.id) || seen.has(g.id)) src.fail(["sources", i, "rigs", j, "id"], `rig id '${g.id}' appears twice`);
      for (const [k, row] of (g.fit ?? []).entries()) {
        if (fitRows.has(row)) src.fail(["sources", i, "rigs", j, "fit", k], `row '${row}' is listed twice`);
        fitRows.add(row);
      }
      const at = ["sources", i, "rigs", j];
      if ((g.fit === undefined) !== (g.sets === undefined)) {
        src.fail(
          [...at, g.fit ? "fit" : "sets"],
          "a rig with fit rows names the constants they set ('sets'), and only then",
        );
      }
      for (const [k, name] of (g.sets ?? []).entries()) {
        if (!hasConstant(name)) src.fail([...at, "sets", k], `no calibrated constant '${name}'`);
      }
      const rig: Rig = { ...g, source, fit: new Set(g.fit ?? []), sets: g.sets ?? [] };
      rigs.set(g.id, rig);
      return rig;
    });
    return source;
  });
  return { file, sources, rigs };
}

/** A row's role: it sets calibrated constants, or only grades them. */
export type RowRole = "fit" | "validation";

/** One measured row of a scenario file, with its provenance. */
export interface MeasuredRow {
  /** Its id (`id:`). */
  readonly id: string;
  /** The rig that measured it. */
  readonly rig: Rig;
  /** The scenario that holds it. */
  readonly scenario: Scenario;
  /** Its index in the scenario's `measured:` list. */
  readonly index: number;
  /** The measurement. */
  readonly measurement: Measurement;
  /** Fit (its rig lists it) or validation. */
  readonly role: RowRole;
  /** A validation row of a rig that has fit rows: never counted as held out. */
  readonly sameRig: boolean;
}

/**
 * The measured rows of scenario files, each with its rig and role. `fitDir`
 * is the folder of fit rows: a fit row must live under it (beside it, a fit
 * scenario may hold validation rows of the same run that the fit leaves
 * out), and a row outside it is a validation row of a rig without fit rows
 * or a same-rig row.
 *
 * @throws {InputError} at a row without `id` or `rig`, a rig the registry lacks, an id used twice, a fit row
 * outside `fitDir`, or a registered fit row no file holds
 */
export function collectRows(
  files: readonly string[],
  registry: Registry,
  fitDir: string,
  fs: FileSystem = denoFileSystem,
): MeasuredRow[] {
  const rows: MeasuredRow[] = [];
  const ids = new Set<string>();
  for (const file of files) {
    const scenario = loadScenario(file, fs);
    const underFit = file.startsWith(fitDir.endsWith("/") ? fitDir : `${fitDir}/`);
    for (const [index, m] of scenario.measured.entries()) {
      const at = (msg: string): never => {
        throw new InputError(m.location, msg);
      };
      if (m.id === undefined) at("every measured row of the project names its 'id'");
      if (m.rig === undefined) at(`'${m.id}' names no 'rig' (one of ${registry.file})`);
      const rig = registry.rigs.get(m.rig!) ?? at(`rig '${m.rig}' is not in ${registry.file}`);
      if (ids.has(m.id!)) at(`row id '${m.id}' is used twice`);
      ids.add(m.id!);
      const role: RowRole = rig.fit.has(m.id!) ? "fit" : "validation";
      if (role === "fit" && !underFit) at(`'${m.id}' is a fit row of ${rig.id}: its scenario belongs under ${fitDir}`);
      if (role === "validation" && underFit && rig.fit.size === 0) {
        at(`'${m.id}' is under ${fitDir} but its rig ${rig.id} has no fit rows`);
      }
      rows.push({
        id: m.id!,
        rig,
        scenario,
        index,
        measurement: m,
        role,
        sameRig: role === "validation" && rig.fit.size > 0,
      });
    }
  }
  for (const rig of registry.rigs.values()) {
    for (const row of rig.fit) {
      if (!ids.has(row)) {
        throw new InputError({ file: registry.file }, `fit row '${row}' of ${rig.id} is in no scenario`);
      }
    }
  }
  return rows;
}
