/**
 * `deno task check [files…] [--tag T] [--json-dir D]`: runs scenarios
 * outside `deno test` and prints one line per scenario (PASS or FAIL, key
 * metrics, wall time), then the messages of what failed; with `--json-dir`,
 * writes each run's `--output_json` document there. With no file, every
 * scenario (the validation ones included). Exits 1 when any scenario fails,
 * 2 on bad input.
 *
 * @module
 */
import { InputError } from "../core/config/errors.ts";
import { loadScenario, runScenario } from "../core/scenario/mod.ts";
import { relative, scenarioFiles } from "./_files.ts";
import { runJson } from "../core/run.ts";

const args = [...Deno.args];
const tags: string[] = [];
for (let i = args.indexOf("--tag"); i >= 0; i = args.indexOf("--tag")) tags.push(...args.splice(i, 2).slice(1));
const jsonAt = args.indexOf("--json-dir");
const jsonDir = jsonAt >= 0 ? args.splice(jsonAt, 2)[1] : undefined;
if (jsonDir) Deno.mkdirSync(jsonDir, { recursive: true });
const files = args.length ? args : scenarioFiles();

let failed = 0;
let badInput = false;
const messages: string[] = [];
const fmt = (x: number, unit: string) => (Number.isFinite(x) ? `${Number(x.toPrecision(3))}${unit}` : "–");
for (const file of files) {
  let line: string;
  try {
    const s = loadScenario(file);
    if (tags.length && !tags.some((t) => s.tags.includes(t))) continue;
    const start = performance.now();
    const r = runScenario(s);
    const wall = (performance.now() - start) / 1000;
    const m = r.output.summary;
    const extra = r.maxRateMeeting !== undefined ? `  max_rate_meeting=${fmt(r.maxRateMeeting, "")}` : "";
    line = `${r.pass ? "PASS" : "FAIL"}  ${s.name}  ttft.p99=${fmt(m.perMetric["TTFT(s)"].P99, "s")}  tpot.p99=${
      fmt(m.perMetric["TPOT(s)"].P99, "s")
    }  throughput=${fmt(m.overall["output_token_throughput(tok/s)"], " tok/s")}${extra}  (${wall.toFixed(2)} s)`;
    if (jsonDir) {
      for (const [run, out] of r.runs) {
        Deno.writeTextFileSync(
          `${jsonDir}/${s.name}${run ? `.${run.replace(/[^\w.=-]+/g, "_")}` : ""}.json`,
          runJson(out),
        );
      }
    }
    if (!r.pass) {
      failed++;
      messages.push(...r.checks.filter((c) => !c.pass).map((c) => c.message));
      messages.push(...r.measurements.filter((c) => !c.pass).map((c) => c.message));
    }
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    failed++;
    badInput = true;
    line = `FAIL  ${relative(file)}  (bad input)`;
    messages.push(e.message);
  }
  console.log(line);
}
for (const m of messages) console.error(m);
Deno.exit(badInput ? 2 : failed ? 1 : 0);
