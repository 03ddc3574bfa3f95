/**
 * `deno task fuzz [--cases N] [--seed S] [--from K]`: the mutation fuzzer of
 * tests/fuzz.ts, each case in its own process with a 30 s limit and a 2 GiB
 * heap, so that a hang or a runaway allocation is a finding rather than the
 * end of the campaign. Prints each finding with the files to reproduce it
 * and a summary; exits 1 when there is any.
 *
 * @module
 */
import { FUZZ_TARGETS, fuzzCase } from "../tests/fuzz.ts";
import type { CaseResult } from "../tests/fuzz.ts";
import { CONSOLE_OUTPUT, readTaskArgs, usageLine } from "../scenarios/_args.ts";
import type { TaskOutput } from "../scenarios/_args.ts";

const USAGE = `Usage: deno task fuzz [--cases N] [--seed S] [--from K] [--target NAME]

Fuzzes every entry point (tests/fuzz.ts, tests/fuzz_targets/): the simulator's
configurations and trace, plan --merge shard folders, calibrate inputs, compare
documents and scenarioTests file trees (symbolic links included), each case in
its own process (30 s, 2 GiB) and temporary folder. A case must run, or fail as
one located exit-2 line; it must print no NaN or Infinity, no unasked workflow
command, and write nothing outside its folder. Hangs, crashes, stack traces and
the rest are findings.

  --cases N      how many cases (default 1000)
  --seed S       the campaign's seed (default 20261201; the suite uses 1)
  --from K       the first case number (default 0), to resume or reproduce
  --target NAME  only this entry point: ${FUZZ_TARGETS.map((t) => t.name).join(", ")}
  -h, --help     show this help and exit

Exit codes: 0 no finding; 1 findings; 2 bad arguments.`;

/** How long one case may take before it counts as a hang. */
const LIMIT_MS = 30_000;
/** This file, run as each case's process (`--one SEED N`). */
const SELF = new URL(import.meta.url).pathname;

/** Runs case `n` of the campaign `seed` in its own process (30 s, 2 GiB): a hang or a crash is a finding. */
async function runCase(seed: number, n: number, target?: string): Promise<CaseResult> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--v8-flags=--max-old-space-size=2048",
      SELF,
      "--one",
      String(seed),
      String(n),
      ...(target === undefined ? [] : [target]),
    ],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), LIMIT_MS);
  const out = await child.output();
  clearTimeout(timer);
  const text = new TextDecoder().decode(out.stdout).trim().split("\n").pop() ?? "";
  if (out.success && text.startsWith("{")) return JSON.parse(text);
  const why = out.signal === "SIGKILL"
    ? `hang: over ${LIMIT_MS / 1000} s`
    : `crashed (exit ${out.code}${
      /out of memory/i.test(new TextDecoder().decode(out.stderr)) ? ", out of memory" : ""
    })`;
  return { outcome: "finding", detail: why };
}

/**
 * `deno task fuzz` in this process (each case still in its own), its lines to `io`.
 *
 * @returns the exit code: 0 no finding (or help), 1 findings, 2 bad arguments
 */
export async function runFuzz(argv: readonly string[], io: TaskOutput = CONSOLE_OUTPUT): Promise<number> {
  const args = readTaskArgs(
    { task: "fuzz", usage: USAGE, options: ["--cases", "--seed", "--from", "--target"] },
    argv,
    io,
  );
  if (typeof args === "number") return args;
  const target = args.options["--target"]?.at(-1);
  if (target !== undefined && !FUZZ_TARGETS.some((t) => t.name === target)) {
    io.err(
      usageLine(
        "fuzz",
        `--target: expected one of ${FUZZ_TARGETS.map((t) => `'${t.name}'`).join(", ")}, got '${target}'`,
      ),
    );
    return 2;
  }
  const values: Record<string, number> = { "--cases": 1000, "--seed": 20261201, "--from": 0 };
  for (const name of Object.keys(values)) {
    const v = args.options[name]?.at(-1);
    if (v === undefined) continue;
    const x = Number(v);
    if (!Number.isSafeInteger(x) || x < 0) {
      io.err(usageLine("fuzz", `${name}: expected a non-negative integer, got '${v}'`));
      return 2;
    }
    values[name] = x;
  }
  const { "--cases": cases, "--seed": seed, "--from": from } = values;
  const counts = { ok: 0, located: 0, finding: 0 };
  let next = from;
  const worker = async () => {
    while (next < from + cases) {
      const n = next++;
      const r = await runCase(seed, n, target);
      counts[r.outcome]++;
      if (r.outcome === "finding") {
        io.out(`case ${n}: ${r.detail}`);
        if (r.files) {
          io.out(
            `  reproduce: deno task fuzz --seed ${seed} --from ${n} --cases 1${target ? ` --target '${target}'` : ""}`,
          );
        }
      }
    }
  };
  const start = performance.now();
  await Promise.all([worker(), worker()]);
  io.out(
    `${cases} cases (seed ${seed}): ${counts.ok} ran, ${counts.located} located errors (exit 2), ${counts.finding} ` +
      `findings; ${((performance.now() - start) / 1000).toFixed(0)} s`,
  );
  return counts.finding > 0 ? 1 : 0;
}

if (import.meta.main) {
  if (Deno.args[0] === "--one") {
    // Child mode: run one case, report it on stdout as JSON.
    console.log(JSON.stringify(await fuzzCase(Number(Deno.args[1]), Number(Deno.args[2]), Deno.args[3])));
  } else Deno.exitCode = await runFuzz(Deno.args);
}
