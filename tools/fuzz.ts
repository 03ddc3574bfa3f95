/**
 * `deno task fuzz [--cases N] [--seed S] [--from K]`: the mutation fuzzer of
 * tests/fuzz.ts, each case in its own process with a 30 s limit and a 2 GiB
 * heap, so that a hang or a runaway allocation is a finding rather than the
 * end of the campaign. Prints each finding with the files to reproduce it
 * and a summary; exits 1 when there is any.
 *
 * @module
 */
import { fuzzCase } from "../tests/fuzz.ts";
import { parseTaskArgs, usageError } from "../scenarios/_args.ts";

const USAGE = `Usage: deno task fuzz [--cases N] [--seed S] [--from K]

Mutates the bundled configurations and trace (tests/fuzz.ts) and runs each case
in its own process (30 s, 2 GiB): a case must run or fail as a located input
error, and print no NaN. Hangs, crashes and NaN are findings.

  --cases N   how many cases (default 1000)
  --seed S    the campaign's seed (default 20261201; the suite uses 1)
  --from K    the first case number (default 0), to resume or reproduce
  -h, --help  show this help and exit

Exit codes: 0 no finding; 1 findings; 2 bad arguments.`;

// Child mode: run one case, report it on stdout as JSON.
if (Deno.args[0] === "--one") {
  const r = fuzzCase(Number(Deno.args[1]), Number(Deno.args[2]));
  console.log(JSON.stringify(r));
  Deno.exit(0);
}

const args = parseTaskArgs({ task: "fuzz", usage: USAGE, options: ["--cases", "--seed", "--from"] }, Deno.args);
const arg = (name: string, fallback: number) => {
  const v = args.options[name]?.at(-1);
  if (v === undefined) return fallback;
  const x = Number(v);
  if (!Number.isSafeInteger(x) || x < 0) usageError("fuzz", `${name}: expected a non-negative integer, got '${v}'`);
  return x;
};

const cases = arg("--cases", 1000);
const seed = arg("--seed", 20261201);
const from = arg("--from", 0);
const LIMIT_MS = 30_000;
const self = new URL(import.meta.url).pathname;
const counts = { ok: 0, located: 0, finding: 0 };
let next = from;

async function one(n: number): Promise<void> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-env",
      "--v8-flags=--max-old-space-size=2048",
      self,
      "--one",
      String(seed),
      String(n),
    ],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), LIMIT_MS);
  const out = await child.output();
  clearTimeout(timer);
  const text = new TextDecoder().decode(out.stdout).trim().split("\n").pop() ?? "";
  let r: { outcome: "ok" | "located" | "finding"; detail?: string; files?: Record<string, string> };
  if (out.success && text.startsWith("{")) r = JSON.parse(text);
  else {
    const why = out.signal === "SIGKILL"
      ? `hang: over ${LIMIT_MS / 1000} s`
      : `crashed (exit ${out.code}${
        /out of memory/i.test(new TextDecoder().decode(out.stderr)) ? ", out of memory" : ""
      })`;
    r = { outcome: "finding", detail: why };
  }
  counts[r.outcome]++;
  if (r.outcome === "finding") {
    console.log(`case ${n}: ${r.detail}`);
    if (r.files) console.log(`  reproduce: fuzzCase(${seed}, ${n}) in tests/fuzz.ts`);
  }
}

async function worker() {
  while (next < from + cases) await one(next++);
}
const start = performance.now();
await Promise.all([worker(), worker()]);
console.log(
  `${cases} cases (seed ${seed}): ${counts.ok} ran, ${counts.located} located errors (exit 2), ${counts.finding} findings; ${
    ((performance.now() - start) / 1000).toFixed(0)
  } s`,
);
Deno.exit(counts.finding > 0 ? 1 : 0);
