/**
 * Profiling cost at scale: `deno task bench` (or `deno bench --allow-read
 * --allow-write --allow-env bench/profiling_bench.ts`).
 *
 * The simulator bench's headline case (100,000 requests of 1,000 input /
 * 200 output tokens, Poisson arrivals at 160 req/s, 8 single-H100
 * instances of Llama-3.1-8B, about 627 simulated seconds) run through the
 * command line in this process, as `deno task sim` runs it: without
 * profiling, with a full profile, with `--profiling_window` over 60 simulated
 * seconds (300–360 s, the steady state), the same gzipped, and with
 * `--profiling_requests 100`. The target: a 60-second window adds under 2× to
 * the run's time and writes under 50 MB.
 *
 * After the benches, a table: median wall time per case and its ratio to the
 * run without profiling, the files written (trace and requests.csv) and
 * the process's peak resident memory during the case (sampled; the bench
 * process's heap from earlier cases counts too, so compare cases with care:
 * `/usr/bin/time -v deno task sim …` gives one run's own).
 *
 * @module
 */
import { main } from "../cli.ts";
import { HEADLINE_COMMON, HEADLINE_INSTANCES } from "./_headline.ts";

const dir = Deno.makeTempDirSync({ prefix: "servingcast-profile-bench-" });
Deno.writeTextFileSync(`${dir}/instances.yaml`, HEADLINE_INSTANCES);
Deno.writeTextFileSync(`${dir}/common.yaml`, HEADLINE_COMMON);
const FILES = ["--instance_config_path", `${dir}/instances.yaml`, "--common_config_path", `${dir}/common.yaml`];
const OUT = `${dir}/profiles`;
const PROFILE = ["--enable_profiling", "--profiling_output_path", OUT];
/** How often the peak resident memory is sampled, ms: often enough next to runs of seconds, too little to cost. */
const RSS_SAMPLE_MS = 2;
/** 60 simulated seconds in the steady state of the ~627-second run. */
const WINDOW = ["--profiling_window", "300,360"];

/**
 * The process's peak resident memory, sampled every {@link RSS_SAMPLE_MS} ms
 * by a worker thread (the run is synchronous: a timer on this thread would
 * not fire during it; resident memory is the whole process's, whichever
 * thread asks). /proc/self/status would give the kernel's own peak, but
 * Deno lets only --allow-all read it.
 */
const peakRss = (() => {
  const peak = new Float64Array(new SharedArrayBuffer(8));
  const source = `self.onmessage = (e) => {
    const peak = e.data;
    setInterval(() => { const r = Deno.memoryUsage().rss; if (r > peak[0]) peak[0] = r; }, ${RSS_SAMPLE_MS});
  };`;
  const worker = new Worker(URL.createObjectURL(new Blob([source], { type: "text/javascript" })), { type: "module" });
  worker.postMessage(peak);
  return {
    reset: () => (peak[0] = Deno.memoryUsage().rss),
    read: () => Math.max(peak[0], Deno.memoryUsage().rss),
    stop: () => worker.terminate(),
  };
})();

interface Figures {
  walls: number[];
  trace: number;
  csv: number;
  peak: number;
}
const figures = new Map<string, Figures>();
const quiet = { stdout: () => {}, stderr: () => {} };

/** Sizes of the files of the one profile folder under {@link OUT} (trace, CSV), then removes it. */
function collect(): { trace: number; csv: number } {
  let trace = 0;
  let csv = 0;
  for (const stamp of Deno.readDirSync(OUT)) {
    for (const f of Deno.readDirSync(`${OUT}/${stamp.name}`)) {
      const size = Deno.statSync(`${OUT}/${stamp.name}/${f.name}`).size;
      if (f.name.startsWith("trace.json")) trace += size;
      else if (f.name === "requests.csv") csv += size;
    }
  }
  Deno.removeSync(OUT, { recursive: true });
  return { trace, csv };
}

function bench(name: string, args: string[]): void {
  Deno.bench({
    name,
    n: 3,
    warmup: 1,
    async fn(b) {
      peakRss.reset();
      b.start();
      const start = performance.now();
      const code = await main([...FILES, ...args], quiet);
      const wall = (performance.now() - start) / 1000;
      b.end();
      if (code !== 0) throw new Error(`${name}: exit ${code}`);
      const peak = peakRss.read();
      const sizes = args.includes("--enable_profiling") ? collect() : { trace: 0, csv: 0 };
      const f = figures.get(name) ?? { walls: [], peak: 0, ...sizes };
      f.walls.push(wall);
      f.peak = Math.max(f.peak, peak);
      figures.set(name, f);
    },
  });
}

bench("no profiling", []);
bench("full profile (every step and request)", PROFILE);
bench("--profiling_window 300,360 (60 simulated s)", [...PROFILE, ...WINDOW]);
bench("--profiling_window 300,360 --profiling_gzip", [...PROFILE, ...WINDOW, "--profiling_gzip"]);
bench("--profiling_requests 100", [...PROFILE, "--profiling_requests", "100"]);

globalThis.addEventListener("unload", () => {
  peakRss.stop();
  Deno.removeSync(dir, { recursive: true });
  if (figures.size === 0) return;
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const base = median(figures.get("no profiling")?.walls ?? [NaN]);
  const mb = (n: number) => (n / 1e6).toFixed(1).padStart(7);
  console.log(`\n${"case".padEnd(44)} wall s  × plain  trace MB  csv MB  peak RSS MiB`);
  for (const [name, f] of figures) {
    const wall = median(f.walls);
    console.log(
      `${name.padEnd(44)} ${wall.toFixed(2).padStart(6)}  ${(wall / base).toFixed(2).padStart(6)}  ${mb(f.trace)}  ${
        mb(f.csv)
      }  ${(f.peak / 2 ** 20).toFixed(0).padStart(6)}`,
    );
  }
});
