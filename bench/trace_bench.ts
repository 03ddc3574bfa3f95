/**
 * Trace replay at scale: a generated 1,000,000-line JSONL trace (Mooncake
 * format, short outputs) replayed by 8 single-H100 instances, streamed from
 * disk. Prints wall time and the peak resident memory seen during the run.
 *
 * @module
 */
import { runFiles } from "../core/assembly/run.ts";
import { DEFAULT_READ_LIMITS, realFileSystem } from "../core/config/load.ts";

const dir = Deno.makeTempDirSync({ prefix: "servingcast-trace-bench-" });
const N = 1_000_000;
{
  // 1M requests at 400 req/s: inputs 200–1,000 tokens, outputs 4–16.
  const f = Deno.openSync(`${dir}/trace.jsonl`, { write: true, create: true });
  const enc = new TextEncoder();
  let x = 12345;
  const rand = (n: number) => (x = (x * 48271) % 2147483647) % n;
  let lines: string[] = [];
  for (let i = 0; i < N; i++) {
    lines.push(
      `{"timestamp": ${(i * 2.5).toFixed(1)}, "input_length": ${200 + rand(801)}, "output_length": ${4 + rand(13)}}`,
    );
    if (lines.length === 50_000) {
      f.writeSync(enc.encode(lines.join("\n") + "\n"));
      lines = [];
    }
  }
  f.close();
}
Deno.writeTextFileSync(
  `${dir}/i.yaml`,
  "instance_groups:\n  - {num_instances: 8, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: both}\n",
);
Deno.writeTextFileSync(
  `${dir}/c.yaml`,
  `model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
load_gen: {load_gen_type: trace, trace_path: trace.jsonl}
serving_config: {max_concurrency: 100000, block_size: 16}
`,
);

let reported = false;
Deno.bench({
  name: "replay a 1,000,000-line trace (8 × H100, Llama-3.1-8B, outputs of 4–16 tokens)",
  n: 1,
  warmup: 0,
  fn: () => {
    let peak = Deno.memoryUsage().rss;
    let calls = 0;
    const start = performance.now();
    const out = runFiles([`${dir}/i.yaml`], `${dir}/c.yaml`, {
      onProgress: () => {
        if (++calls % 2000 !== 0) return; // sampling memory is not free
        const rss = Deno.memoryUsage().rss;
        if (rss > peak) peak = rss;
      },
    });
    const wall = (performance.now() - start) / 1000;
    peak = Math.max(peak, Deno.memoryUsage().rss);
    if (!reported) {
      reported = true;
      console.log(
        `  ${out.summary.overall.total_requests} requests, ${out.summary.simulatedSeconds.toFixed(0)} simulated s in ${
          wall.toFixed(1)
        } wall s; peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB`,
      );
    }
  },
});

// One 40 MB line (a JSON array), read whole: the reader was once quadratic in a line's chunks (a test checks what it
// reads; the time is measured here).
{
  const f = Deno.openSync(`${dir}/line.jsonl`, { write: true, create: true });
  const enc = new TextEncoder();
  f.writeSync(enc.encode("["));
  const chunk = enc.encode("1,".repeat(1 << 19));
  for (let i = 0; i < 40; i++) f.writeSync(chunk);
  f.writeSync(enc.encode("1]\n"));
  f.close();
}
Deno.bench({
  name: "read a 40 MB single-line trace file",
  n: 3,
  warmup: 0,
  fn: () => {
    const reader = realFileSystem({ ...DEFAULT_READ_LIMITS, maxStreamBytes: 1e9, maxLineChars: 1e8 });
    let chars = 0;
    for (const l of reader.lines!(`${dir}/line.jsonl`)) chars += l.length;
    if (chars !== 40 * (1 << 20) + 3) throw new Error(`read ${chars} characters`);
  },
});

globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
