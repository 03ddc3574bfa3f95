import assert from "node:assert/strict";
import { runSources } from "../core/assembly/run.ts";
import { YamlSource } from "../core/config/source.ts";
import { simulate } from "../core/engine/simulator.ts";
import type { RecordedRequest } from "../core/engine/types.ts";
import { assemble } from "../core/assembly/assemble.ts";
import { loadConfigSources } from "../core/config/load.ts";
import fc from "fast-check";
import { LatencyDistribution, SKETCH_RELATIVE_ACCURACY } from "../core/metrics/sketch.ts";
import { ALL_STATISTICS, EXT_COLUMNS, METRIC_COLUMNS, summarize } from "../core/metrics/summary.ts";
import { RequestStream, STREAM_COLUMNS } from "../core/metrics/stream.ts";
import type { ColumnStats, Summary } from "../core/metrics/summary.ts";

/** Two H100s at 70% of their capacity with varied lengths (so that every column has a spread). */
const instances = new YamlSource(
  "i.yaml",
  "instance_groups: [{num_instances: 2, num_devices_per_instance: 1, device_type: H100_SXM_80G, pd_role: both}]",
);
const common = (requests: number) =>
  new YamlSource(
    "c.yaml",
    `model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
load_gen: {load_gen_type: synthetic, num_requests: ${requests}, arrival: {process: poisson, request_rate: 20},
  input_tokens: {dist: uniform, min: 64, max: 2048}, output_tokens: {dist: uniform, min: 8, max: 512}}
serving_config: {max_concurrency: 100000000, engine: vllm}`,
  );

/** `got` within the sketch's relative accuracy of `want` (with room for the rounding of a bucket's bounds). */
function within(got: number, want: number, what: string): void {
  assert.ok(
    Math.abs(got - want) <= SKETCH_RELATIVE_ACCURACY * (1 + 1e-9) * Math.abs(want),
    `${what}: ${got} is not within 0.5% of ${want}`,
  );
}

/** Every statistic of every column of two summaries: percentiles within the sketch's bound, the rest exact. */
function compare(streamed: Summary, exact: Summary): void {
  const columns: [string, ColumnStats, ColumnStats][] = [
    ...METRIC_COLUMNS.map((c) => [c, streamed.perMetric[c], exact.perMetric[c]] as [string, ColumnStats, ColumnStats]),
    ...EXT_COLUMNS.map((c) => [c, streamed.extMetric[c], exact.extMetric[c]] as [string, ColumnStats, ColumnStats]),
  ];
  for (const [column, got, want] of columns) {
    for (const st of ALL_STATISTICS) {
      if (st === "MIN" || st === "MAX") assert.equal(got[st], want[st], `${column} ${st}`);
      // The mean is summed in completion order rather than request order: the same up to rounding.
      else if (st === "AVERAGE") {
        assert.ok(Math.abs(got[st] - want[st]) <= 1e-9 * Math.abs(want[st]), `${column} AVERAGE`);
      } else within(got[st], want[st], `${column} ${st}`);
    }
  }
  assert.deepEqual(streamed.overall, exact.overall);
}

Deno.test("a run longer than its exact count streams its figures: every percentile within 0.5% of the exact run's, counts and extremes exact", () => {
  const exact = runSources([instances], common(20_000), { goodput: { ttft: 0.05, e2e: 10 } });
  const streamed = runSources([instances], common(20_000), { exactUpTo: 1_500, goodput: { ttft: 0.05, e2e: 10 } });
  assert.equal(exact.summary.sketch, undefined);
  assert.deepEqual(streamed.summary.sketch, {
    requests: 20_000,
    exactUpTo: 1_500,
    relativeAccuracy: SKETCH_RELATIVE_ACCURACY,
  });
  // The same run: the simulation is unchanged, only its figures are kept differently.
  assert.equal(streamed.result.endTime, exact.result.endTime);
  compare(streamed.summary, exact.summary);
  assert.equal(streamed.summary.goodput!.met, exact.summary.goodput!.met);
  assert.equal(streamed.summary.preemptions, exact.summary.preemptions);
  // The table keeps every 14th request (⌈20,000 / 1,500⌉): 1,429 rows; the load figures read it at scale.
  assert.equal(streamed.result.requests.count, 1_429);
  assert.equal(streamed.result.requests.stride, 14);
  const [s, e] = [streamed.summary.load, exact.summary.load];
  assert.equal(s.keepsUp, e.keepsUp);
  assert.ok(Math.abs(s.offeredRate / e.offeredRate - 1) < 0.02, `offered ${s.offeredRate} vs ${e.offeredRate}`);
  assert.ok(Math.abs(s.achievedRate / e.achievedRate - 1) < 0.02, `achieved ${s.achievedRate} vs ${e.achievedRate}`);
});

Deno.test("keepEvery thins the table to every k-th request, value for value, while onRecord sees every request once", () => {
  const input = assemble(loadConfigSources([instances], common(3_000))).input;
  const all = simulate(input).requests;
  const seen: RecordedRequest[] = [];
  const thin = simulate(input, { keepEvery: 7, onRecord: (r) => seen.push({ ...r }) }).requests;
  assert.equal(thin.count, Math.ceil(3_000 / 7));
  for (let row = 0; row < thin.count; row++) {
    const id = row * 7;
    for (
      const key of ["arrival", "send", "firstToken", "finish", "input", "output", "preemptions", "engine"] as const
    ) {
      assert.equal(thin[key][row], all[key][id], `request ${id} ${key}`);
    }
  }
  assert.deepEqual(seen.map((r) => r.id).sort((a, b) => a - b), Array.from({ length: 3_000 }, (_, i) => i));
  for (const r of seen) assert.equal(r.finish, all.finish[r.id]);
});

Deno.test("the 100M-request day of examples/fleet-100m/, its first 1M requests: every streamed percentile within 0.5% of the exact one", () => {
  const dir = new URL("../examples/fleet-100m/", import.meta.url);
  const read = (file: string) => Deno.readTextFileSync(new URL(file, dir));
  const day = read("common.yaml");
  assert.match(day, /num_requests: 100000000\n/);
  const prefix = day.replace("num_requests: 100000000\n", "num_requests: 1000000\n");
  const input = assemble(
    loadConfigSources(
      [new YamlSource("instances.yaml", read("instances.yaml"))],
      new YamlSource("common.yaml", prefix),
    ),
  ).input;
  assert.equal(input.engines.length, 512);
  // One run, summarized twice: from its whole table (exact), and from the sketches its requests streamed into as
  // they finished (exact up to 1,000), as a 100M-request run summarizes them.
  const stream = new RequestStream(1_000, 1_000_000);
  const result = simulate(input, { onRecord: (r) => stream.add(r) });
  const exact = summarize(result);
  assert.equal(exact.overall.total_requests, 1_000_000);
  compare(summarize(result, { stream }), exact);
});

Deno.test("examples/fleet-100m/common-24h.yaml is the 100M-request day spread over 24 hours: its schedule's segments an hour long at 868/3,600 of the rates, the same fleet, lengths and routing", () => {
  const dir = new URL("../examples/fleet-100m/", import.meta.url);
  const read = (file: string) => Deno.readTextFileSync(new URL(file, dir));
  const load = (common: string) =>
    assemble(
      loadConfigSources(
        [new YamlSource("instances.yaml", read("instances.yaml"))],
        new YamlSource(common, read(common)),
      ),
    ).input;
  const [day, literal] = [load("common.yaml"), load("common-24h.yaml")];
  const [a, b] = [day.workload.arrival.schedule!, literal.workload.arrival.schedule!];
  assert.equal(b.length, 24);
  assert.equal(b.reduce((t, s) => t + s.duration, 0), 86_400);
  b.forEach((s, i) => assert.ok(Math.abs(s.rate - (a[i].rate * 868) / 3_600) < 1e-4, `segment ${i}`));
  assert.deepEqual({ ...literal.workload, arrival: undefined }, { ...day.workload, arrival: undefined });
  assert.equal(literal.routing, day.routing);
  assert.equal(literal.engines.length, 512);
});

Deno.test("the from-arrival columns kept as twins of TTFT and E2E until a request waits: the same stream as kept apart (property-based)", () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          arrival: fc.integer({ min: 0, max: 1e9 }),
          // Mostly none: the twins then part late, after the columns have turned to sketches (exact up to 16).
          wait: fc.oneof({ weight: 12, arbitrary: fc.constant(0) }, {
            weight: 1,
            arbitrary: fc.integer({ min: 1, max: 1e6 }),
          }),
          ttft: fc.integer({ min: 1, max: 1e7 }),
          decode: fc.integer({ min: 0, max: 1e8 }),
          output: fc.integer({ min: 1, max: 4096 }),
          served: fc.oneof(fc.constant(true), fc.constant(true), fc.constant(false)),
        }),
        { maxLength: 80 },
      ),
      fc.integer({ min: 0, max: 80 }),
      (reqs, readAt) => {
        // Exact up to 16: both ways, the exact values and the sketch.
        const twinned = new RequestStream(16, 16);
        const apart = new RequestStream(16, 16, undefined, STREAM_COLUMNS.map(() => new LatencyDistribution(16, 16)));
        reqs.forEach((q, i) => {
          const send = q.arrival + q.wait;
          const first = send + q.ttft;
          const r: RecordedRequest = {
            id: i,
            arrival: q.arrival,
            send,
            firstToken: q.served ? first : -1,
            finish: q.served ? first + q.decode : -1,
            engine: q.served ? 0 : -1,
            input: 100,
            output: q.output,
            preemptions: 0,
          };
          twinned.add(r);
          apart.add(r);
          // Reading the columns part way parts the twins; adding goes on.
          if (i === readAt) assert.equal(twinned.columns[7].count, apart.columns[7].count);
        });
        assert.deepEqual(twinned.toJSON(), apart.toJSON());
      },
    ),
    { seed: 29, numRuns: 300 },
  );
  // Parted by a request that waited, long after the columns turned to sketches (exact up to 4).
  const twinned = new RequestStream(4, 4);
  const apart = new RequestStream(4, 4, undefined, STREAM_COLUMNS.map(() => new LatencyDistribution(4, 4)));
  for (let i = 0; i < 12; i++) {
    const send = 1_000 * i + (i === 10 ? 500 : 0);
    const r = { id: i, arrival: 1_000 * i, send, firstToken: send + 40 + i, finish: send + 900 + 7 * i, engine: 0 };
    for (const s of [twinned, apart]) s.add({ ...r, input: 100, output: 8, preemptions: 0 });
  }
  assert.deepEqual(twinned.toJSON(), apart.toJSON());
  assert.equal(twinned.columns[7].count, 12);
});
