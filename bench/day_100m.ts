/**
 * The 100M-request day of `examples/fleet-100m/` (issue 29's acceptance: 512 × H100, under 10 minutes and under
 * 1 GB), run as `deno task sim` runs it for a user: `--shard i/n` processes side by side (one per core by default),
 * then `--merge`. Prints each shard's wall time and peak resident memory (Linux: the kernel's high-water mark,
 * sampled twice a second), the merge's, the total and the merged summary's first lines.
 *
 * `deno task bench:day [--shards N] [--requests N] [--common FILE]` (`--requests` runs the day's first N requests
 * instead; `--common` another day on the same fleet, such as `examples/fleet-100m/common-24h.yaml`). It reads
 * `/proc`, which Deno grants only with every permission: the task runs with `-A`.
 *
 * @module
 */
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Deno.args,
  options: { shards: { type: "string" }, requests: { type: "string" }, common: { type: "string" } },
});
const shards = Number(values.shards ?? navigator.hardwareConcurrency ?? 2);
if (!Number.isInteger(shards) || shards < 1) throw new RangeError(`--shards: a whole number ≥ 1, got ${values.shards}`);
const root = new URL("../", import.meta.url);
const example = new URL("examples/fleet-100m/", root);
const dir = Deno.makeTempDirSync({ prefix: "servingcast-day-" });
let common = values.common ?? new URL("common.yaml", example).pathname;
if (values.requests !== undefined) {
  const n = Number(values.requests);
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`--requests: a whole number ≥ 1, got ${values.requests}`);
  const day = Deno.readTextFileSync(common);
  const prefix = day.replace("num_requests: 100000000\n", `num_requests: ${n}\n`);
  if (prefix === day) throw new Error(`${common}: no "num_requests: 100000000" line to shorten`);
  common = `${dir}/common.yaml`;
  Deno.writeTextFileSync(common, prefix);
}
const files = ["--instance_config_path", new URL("instances.yaml", example).pathname, "--common_config_path", common];
// `deno task sim`'s own command (deno.json), run directly: a task runner between would be the process sampled.
const denoJson = JSON.parse(Deno.readTextFileSync(new URL("deno.json", root)));
const sim = (denoJson.tasks.sim as string).split(" ").slice(1);

/** Peak resident memory of process `pid` so far, bytes (undefined where /proc is not there). */
function peakOf(pid: number): number | undefined {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(Deno.readTextFileSync(`/proc/${pid}/status`))?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}

/** Runs `deno` with `args`, sampling its peak memory; its wall seconds, peak bytes and output. */
async function run(args: string[]): Promise<{ wall: number; peak?: number; stdout: string; stderr: string }> {
  const start = performance.now();
  const child = new Deno.Command(Deno.execPath(), { args, cwd: root.pathname, stdout: "piped", stderr: "piped" })
    .spawn();
  let peak: number | undefined;
  const sample = () => {
    const p = peakOf(child.pid);
    if (p !== undefined) peak = Math.max(peak ?? 0, p);
  };
  const timer = setInterval(sample, 500);
  const out = await child.output();
  clearInterval(timer);
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  if (!out.success) throw new Error(`deno ${args.join(" ")} failed:\n${decode(out.stderr)}`);
  return { wall: (performance.now() - start) / 1000, peak, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

const mb = (b?: number) => (b === undefined ? "n/a" : `${(b / 1e6).toFixed(0)} MB`);
const start = performance.now();
const outputs = Array.from({ length: shards }, (_, i) => `${dir}/shard-${i}.json`);
const parts = await Promise.all(
  outputs.map((out, i) => run([...sim, ...files, "--shard", `${i}/${shards}`, "--shard_output", out])),
);
parts.forEach((p, i) => console.log(`shard ${i}/${shards}: ${p.wall.toFixed(1)} s wall, peak ${mb(p.peak)}`));
const merge = await run([...sim, ...files, "--merge", ...outputs]);
const total = (performance.now() - start) / 1000;
const together = parts.every((p) => p.peak !== undefined) ? parts.reduce((s, p) => s + p.peak!, 0) : undefined;
console.log(`merge: ${merge.wall.toFixed(1)} s wall, peak ${mb(merge.peak)}`);
console.log(`total: ${total.toFixed(1)} s wall; the shards' peaks together ${mb(together)}`);
console.log(merge.stderr.trim().split("\n")[0]);
console.log(merge.stdout.split("\n").slice(0, 9).join("\n"));
Deno.removeSync(dir, { recursive: true });
