/**
 * Multi-turn sessions (core/workload/sessions.ts) and the routers that read
 * them: a session's turns arrive in order, each a think time after the turn
 * before finished (or was refused), every prompt carries the conversation
 * so far, and the run has exactly `num_requests` turns.
 */
import assert from "node:assert/strict";
import * as fc from "fast-check";
import { simulate } from "../core/engine/simulator.ts";
import { engineSpec, linearCost } from "../core/engine/_fixtures.ts";
import type { SimulationInput } from "../core/engine/types.ts";
import { ROUTING_POLICIES } from "../core/policy/mod.ts";
import { Session, SessionSource } from "../core/workload/sessions.ts";
import type { SessionSpec } from "../core/workload/sessions.ts";
import type { RequestClass } from "../core/workload/source.ts";
import { SYNTHETIC_PREFIX_BLOCK } from "../core/workload/source.ts";
import { runFiles } from "../core/assembly/run.ts";
import { memoryFs } from "./_helpers.ts";

const chat = (system: number, groups = 1): RequestClass => ({
  name: "chat",
  weight: 1,
  input: { dist: "uniform", min: 1, max: 300 },
  output: { dist: "uniform", min: 1, max: 200 },
  sharedPrefixTokens: system,
  prefixGroups: groups,
});

const spec = (o: Partial<SessionSpec> = {}): SessionSpec => ({
  turns: { dist: "uniform", min: 1, max: 8 },
  thinkTime: { dist: "exponential", mean: 2 },
  maxContext: Infinity,
  ...o,
});

Deno.test("a session's prompts carry the system prompt and the whole conversation; the turns add up to num_requests", () => {
  const source = new SessionSource(1000, { rate: 5, process: "poisson", cv: 1 }, [chat(700, 3)], spec(), 3);
  let turns = 0;
  while (source.hasNext()) {
    const d = source.next();
    const s = d.session as Session;
    assert.ok(s instanceof Session);
    turns += s.turns;
    assert.equal(d.input, s.inputs[0]);
    assert.ok(s.inputs[0] >= 700 + 1 && s.inputs[0] <= 700 + 300, "system prompt + first message");
    for (let k = 1; k < s.turns; k++) {
      // The previous prompt, its reply, and a new message of 1 to 300 tokens.
      const message = s.inputs[k] - s.inputs[k - 1] - s.outputs[k - 1];
      assert.ok(message >= 1 && message <= 300, `session ${s.id} turn ${k}: message of ${message}`);
    }
    // One content-id list covers the longest prompt; the system prompt's whole blocks are its group's (shared).
    const last = s.inputs[s.turns - 1];
    assert.ok(s.prefix.ids.length * SYNTHETIC_PREFIX_BLOCK >= last);
    assert.ok(s.prefix.ids.length * SYNTHETIC_PREFIX_BLOCK < last + SYNTHETIC_PREFIX_BLOCK);
    assert.ok(s.prefix.ids[42] < 2 ** 51 && s.prefix.ids[43] >= 2 ** 51, "43 whole blocks of system prompt, then own");
  }
  assert.equal(turns, 1000, "the last session is cut to the run's count");
});

Deno.test("a session ends before the turn that would pass max_context_tokens (its first turn always runs)", () => {
  const source = new SessionSource(
    500,
    { rate: 5, process: "poisson", cv: 1 },
    [chat(0)],
    spec({ turns: { dist: "fixed", value: 50 }, maxContext: 2000 }),
    1,
  );
  let sessions = 0;
  while (source.hasNext()) {
    const s = source.next().session as Session;
    sessions++;
    for (let k = 1; k < s.turns; k++) assert.ok(s.inputs[k] + s.outputs[k] <= 2000);
    assert.ok(s.turns < 50, "cut by the context limit, not the turn count");
  }
  assert.ok(sessions > 10);
});

Deno.test("follow-ups: each turn a think time after the one before, none after the last", () => {
  const source = new SessionSource(
    3,
    { rate: 1, process: "constant", cv: 1 },
    [chat(0)],
    spec({ turns: { dist: "fixed", value: 3 } }),
    0,
  );
  const d = source.next();
  const s = d.session as Session;
  assert.equal(source.hasNext(), false);
  const t1 = source.followUp(s, 1_000_000)!;
  assert.equal(t1.arrival, 1_000_000 + s.thinks[0]);
  assert.equal(t1.input, s.inputs[1]);
  assert.equal(t1.prefix, s.prefix);
  const t2 = source.followUp(s, 5_000_000)!;
  assert.equal(t2.arrival, 5_000_000 + s.thinks[1]);
  assert.equal(source.followUp(s, 9_000_000), undefined);
  assert.throws(() => source.followUp({ engine: 0 }, 0), /not a session of a SessionSource/);
});

/** Random small session runs: engines, routing, prefix caching, KV room, client limit, think times. */
const sessionCase = fc.record({
  engines: fc.integer({ min: 1, max: 3 }),
  routing: fc.constantFrom(...ROUTING_POLICIES),
  prefixCaching: fc.boolean(),
  blockSize: fc.constantFrom(1, 16, 64),
  kvBlocks: fc.integer({ min: 4, max: 4000 }),
  // KV offload: a host tier evicted prefix blocks move to (0: none).
  hostBlocks: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2000 })),
  maxConcurrency: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.constant(1000)),
  numRequests: fc.integer({ min: 1, max: 60 }),
  system: fc.integer({ min: 0, max: 400 }),
  maxTurns: fc.integer({ min: 1, max: 6 }),
  think: fc.double({ min: 0, max: 3, noNaN: true }),
  maxContext: fc.oneof(fc.constant(Infinity), fc.integer({ min: 50, max: 3000 })),
  seed: fc.nat({ max: 100_000 }),
});

Deno.test("sessions' turns arrive in order, each its think time after the turn before finished, with and without a host KV tier (property-based)", () => {
  fc.assert(
    fc.property(sessionCase, (c) => {
      const input: SimulationInput = {
        engines: Array.from({ length: c.engines }, (_, i) =>
          engineSpec({
            label: `e${i}`,
            instance: i,
            cost: linearCost(0.5, 0.001),
            kvBlocks: c.kvBlocks,
            blockSize: c.blockSize,
            prefixCaching: c.prefixCaching,
            hostKvBlocks: c.prefixCaching ? c.hostBlocks : 0,
            hostBlockLoadSeconds: 1e-5,
          })),
        routing: c.routing,
        workload: {
          numRequests: c.numRequests,
          input: { dist: "uniform", min: 1, max: 300 },
          output: { dist: "uniform", min: 1, max: 200 },
          classes: [chat(c.system)],
          sessions: spec({
            turns: { dist: "uniform", min: 1, max: c.maxTurns },
            thinkTime: { dist: "exponential", mean: c.think },
            maxContext: c.maxContext,
          }),
          arrival: { rate: 2, process: "poisson", cv: 1 },
          maxConcurrency: c.maxConcurrency,
          seed: c.seed,
        },
      };
      // Request id (arrival order) → its session and turn; per session, turns arrived and the last one's end.
      const turnOf: { s: Session; k: number; arrival: number }[] = [];
      const arrived = new Map<Session, number>();
      const ended = new Map<Session, { k: number; at: number }>();
      const result = simulate(input, {
        onArrival: (d) => {
          const s = d.session as Session;
          const k = arrived.get(s) ?? 0;
          assert.equal(d.input, s.inputs[k], `session ${s.id} turn ${k}: prompt`);
          assert.equal(d.output, s.outputs[k], `session ${s.id} turn ${k}: reply`);
          if (k > 0) {
            const before = ended.get(s);
            assert.equal(before?.k, k - 1, `session ${s.id} turn ${k} arrived before turn ${k - 1} ended`);
            assert.equal(d.arrival, before!.at + s.thinks[k - 1], `session ${s.id} turn ${k}: think time`);
          }
          arrived.set(s, k + 1);
          turnOf.push({ s, k, arrival: d.arrival });
        },
        onRecord: (r) => {
          const { s, k, arrival } = turnOf[r.id];
          assert.equal(r.arrival, arrival, `session ${s.id} turn ${k} reached the client at another time`);
          // A refused turn ends when it was sent: the next one follows it.
          ended.set(s, { k, at: r.engine >= 0 ? r.finish : r.send });
        },
      });
      assert.equal(turnOf.length, c.numRequests);
      for (const [s, n] of arrived) assert.equal(n, s.turns, `session ${s.id}: ${n} of ${s.turns} turns`);
      // The host tier never holds more than it can (simulate() checked the device blocks: none leaked).
      for (const e of result.engines) assert.ok((e.hostBlocks ?? 0) <= c.hostBlocks, `host tier of ${e.label}`);
      const t = result.requests;
      for (let i = 0; i < t.count; i++) assert.ok(t.arrival[i] <= t.send[i], `request ${i}: sent before it arrived`);
    }),
    { seed: 30, numRuns: 150 },
  );
});

Deno.test("session affinity keeps a conversation on one engine; prefix-aware routing follows its cached history", () => {
  const common = (routing: string) =>
    `model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
load_gen:
  load_gen_type: synthetic
  num_requests: 400
  arrival: {process: poisson, request_rate: 2}
  input_tokens: {dist: uniform, min: 100, max: 400}
  output_tokens: {dist: uniform, min: 50, max: 200}
  shared_prefix_tokens: 512
  sessions: {turns: {dist: fixed, value: 4}, think_time: {dist: fixed, value: 1}}
serving_config: {engine: vllm, enable_prefix_caching: true, routing_policy: ${routing}, max_concurrency: 1000}
`;
  const inst = "instance_groups: [{num_instances: 3, num_devices_per_instance: 1, device_type: H100_SXM_80G, " +
    "pd_role: both}]";
  const run = (routing: string) => {
    const engines = new Map<Session, Set<number>>();
    const turnOf: Session[] = [];
    const fs = memoryFs({ "i.yaml": inst, "c.yaml": common(routing) });
    const out = runFiles(["i.yaml"], "c.yaml", {
      fs,
      onArrival: (d) => turnOf.push(d.session as Session),
      onRecord: (r) => {
        const s = turnOf[r.id];
        engines.set(s, (engines.get(s) ?? new Set()).add(r.engine));
      },
    });
    const spread = [...engines.values()].filter((e) => e.size > 1).length / engines.size;
    const p = out.summary.prefixCache!;
    return { spread, hit: p.hitTokens / p.promptTokens, ttft: out.summary.perMetric["TTFT(s)"].MEDIAN };
  };
  const ll = run("least_loaded");
  const affinity = run("session_affinity");
  const prefix = run("prefix_aware");
  assert.equal(affinity.spread, 0, "every session on one engine");
  assert.ok(ll.spread > 0.5, `least-loaded spreads most sessions (${ll.spread})`);
  assert.ok(prefix.spread < 0.2, `prefix-aware follows the history (${prefix.spread})`);
  for (const r of [affinity, prefix]) {
    assert.ok(r.hit > ll.hit + 0.1, `hit rate ${r.hit} against least-loaded's ${ll.hit}`);
    assert.ok(r.ttft < ll.ttft, `TTFT p50 ${r.ttft} against least-loaded's ${ll.ttft}`);
  }
});

Deno.test("kv_offload: host blocks from host memory, their load time from the device's host link or the device file's", () => {
  const common = (extra: string) =>
    `model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
load_gen: {load_gen_type: fixed_length, num_requests: 2, num_input_tokens: 100, num_output_tokens: 10}
serving_config: {engine: vllm, block_size: 16, ${extra}}
`;
  const inst = (device: string) =>
    `instance_groups: [{num_instances: 1, num_devices_per_instance: 1, device_type: ${device}, pd_role: both}]`;
  const engine = (device: string, extra: string, files: Record<string, string> = {}) =>
    runFiles(["i.yaml"], "c.yaml", { fs: memoryFs({ "i.yaml": inst(device), "c.yaml": common(extra), ...files }) })
      .assembled.input.engines[0];
  // Llama-3.1-8B: 32 layers × 8 KV heads × 128 × 2 (K and V) × 2 bytes = 131,072 bytes a token, 2 MiB a 16-token block.
  const block = 16 * 131072;
  const h100 = engine("H100_SXM_80G", "enable_prefix_caching: true, kv_offload: {host_memory_gb: 64}");
  assert.equal(h100.hostKvBlocks, Math.floor(64e9 / block));
  assert.equal(h100.hostBlockLoadSeconds, block / 55e9, "PCIe 5 ×16: 55 GB/s");
  const given = engine("H100_SXM_80G", "enable_prefix_caching: true, kv_offload: {host_memory_gb: 1, bandwidth: 1e9}");
  assert.equal(given.hostBlockLoadSeconds, block / 1e9);
  const device = "memory_gib: 96\nhbm_bandwidth_tb_s: 4\ntflops: {bf16: 989}\nhost_link_bandwidth_gb_s: 450\n";
  const c2c = engine("gh.yaml", "enable_prefix_caching: true, kv_offload: {host_memory_gb: 64}", { "gh.yaml": device });
  assert.equal(c2c.hostBlockLoadSeconds, block / 450e9, "the device file's link (C2C)");
  assert.equal(engine("H100_SXM_80G", "enable_prefix_caching: true").hostKvBlocks, undefined, "no tier unless asked");
  assert.throws(
    () => engine("H100_SXM_80G", "enable_prefix_caching: false, kv_offload: {host_memory_gb: 64}"),
    /c\.yaml:\d+:\d+: serving_config\.kv_offload: KV offload moves the prefix cache's evicted blocks: set enable_prefix_caching: true$/,
  );
});

Deno.test("a full host tier never drops the blocks an admission is loading (regression: its own eviction did)", () => {
  // One engine of 120 blocks, sessions whose history overflows it, host tiers from 4 blocks (full at once) to 256: an
  // admission that makes room offloads blocks into the tier, which drops its oldest. Every load takes a block the
  // tier holds (the admission checks it and throws otherwise), and loads happen.
  let loads = 0;
  for (let seed = 0; seed < 10; seed++) {
    for (const host of [4, 16, 64, 256]) {
      const r = simulate({
        engines: [engineSpec({
          prefixCaching: true,
          kvBlocks: 120,
          blockSize: 16,
          hostKvBlocks: host,
          hostBlockLoadSeconds: 1e-5,
          cost: linearCost(0.5, 0.001),
        })],
        routing: "least_loaded",
        workload: {
          numRequests: 200,
          input: { dist: "fixed", value: 1 },
          output: { dist: "fixed", value: 1 },
          classes: [{
            name: "c",
            weight: 1,
            input: { dist: "uniform", min: 20, max: 200 },
            output: { dist: "uniform", min: 1, max: 60 },
            sharedPrefixTokens: 64,
            prefixGroups: 3,
          }],
          sessions: spec({
            turns: { dist: "uniform", min: 1, max: 6 },
            thinkTime: { dist: "exponential", mean: 0.3 },
            maxContext: 1500,
          }),
          arrival: { rate: 20, process: "poisson", cv: 1 },
          maxConcurrency: 1000,
          seed,
        },
      });
      loads += r.engines[0].cacheHostHitTokens! / 16;
      assert.ok(r.engines[0].hostBlocks! <= host);
    }
  }
  assert.ok(loads > 1000, `${loads} blocks loaded`);
});

Deno.test("session affinity under PD keeps a conversation on its prefill engine; think times are at least 1 µs", () => {
  const engines = [
    ...[0, 1, 2].map((i) => engineSpec({ role: "prefill", instance: i, label: `p${i}`, prefixCaching: true })),
    ...[0, 1].map((i) => engineSpec({ role: "decode", instance: i, label: `d${i}`, group: 1 })),
  ];
  const prefill = new Map<Session, Set<number>>();
  const turnOf: Session[] = [];
  simulate({
    engines,
    routing: "session_affinity",
    workload: {
      numRequests: 240,
      input: { dist: "fixed", value: 1 },
      output: { dist: "fixed", value: 1 },
      classes: [chat(64)],
      sessions: spec({ turns: { dist: "fixed", value: 3 }, thinkTime: { dist: "fixed", value: 0 } }),
      arrival: { rate: 5, process: "poisson", cv: 1 },
      maxConcurrency: 1000,
      seed: 3,
    },
  }, {
    onArrival: (d) => {
      const s = d.session as Session;
      turnOf.push(s);
      for (const t of s.thinks) assert.ok(t >= 1, "a zero think time is 1 µs");
    },
    onRecord: (r) => {
      const s = turnOf[r.id];
      // A request's engine is its prefill engine (its decode engine is chosen at the hand-off).
      prefill.set(s, (prefill.get(s) ?? new Set()).add(r.engine));
    },
  });
  assert.ok(prefill.size >= 70, `${prefill.size} sessions`);
  for (const [s, e] of prefill) assert.equal(e.size, 1, `session ${s.id} on prefill engines ${[...e]}`);
});

Deno.test("session and offload mistakes are located errors; a conversation stops at the model's context by default", () => {
  const inst = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, device_type: H100_SXM_80G, " +
    "pd_role: both}]";
  const common = (sessions: string, serving = "engine: vllm") =>
    `model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}
load_gen:
  load_gen_type: synthetic
  num_requests: 40
  arrival: {request_rate: 1}
  input_tokens: {dist: fixed, value: 2000}
  output_tokens: {dist: fixed, value: 500}
  sessions: ${sessions}
serving_config: {${serving}}
`;
  const run = (sessions: string, serving?: string) =>
    runFiles(["i.yaml"], "c.yaml", { fs: memoryFs({ "i.yaml": inst, "c.yaml": common(sessions, serving) }) });
  assert.throws(
    () => run("{turns: {dist: fixed, value: 3}, think_time: {dist: lognormal, mean: 0, std: 2}}"),
    /c\.yaml:\d+:\d+: load_gen\.sessions\.think_time\.mean: expected a positive number, got 0$/,
  );
  assert.throws(
    () => run("{turns: {dist: fixed, value: 3}, think_time: {dist: fixed, value: 1}, max_context_tokens: 20000000}"),
    /load_gen\.sessions\.max_context_tokens: expected at most 16000000 tokens of conversation, got 20000000$/,
  );
  // 40,000 turns asked: Llama-3.1-8B's 131,072-token context ends each conversation after 52 turns of 2,500 tokens.
  const long = run("{turns: {dist: fixed, value: 40000}, think_time: {dist: fixed, value: 0.1}}");
  assert.equal(long.summary.overall.total_requests, 40);
  assert.ok(long.summary.perMetric.INPUT_TOKENS.MAX < 131072);
  for (const engine of ["sglang", "mindie"]) {
    assert.throws(
      () =>
        run(
          "{turns: {dist: fixed, value: 3}, think_time: {dist: fixed, value: 1}}",
          `engine: ${engine}, enable_prefix_caching: true, kv_offload: {host_memory_gb: 8}`,
        ),
      /serving_config\.kv_offload: (SGLang|MindIE)'s scheduling loop does not read a host KV tier here/,
      engine,
    );
  }
});

Deno.test("a turn finds the previous turn's prompt and reply cached (full blocks), as vLLM V1 keeps them", () => {
  // Turn 1: a 100-token message, a 50-token reply: 149 tokens with KV (the last sampled token never is), 9 full
  // 16-token blocks. Turn 2's prompt is those 150 tokens and a 100-token message: it finds the 9 blocks, 144 tokens
  // (the prompt's 6 blocks alone would be 96).
  const r = simulate({
    engines: [engineSpec({ prefixCaching: true, blockSize: 16, kvBlocks: 1000, cost: linearCost(1) })],
    routing: "least_loaded",
    workload: {
      numRequests: 2,
      input: { dist: "fixed", value: 100 },
      output: { dist: "fixed", value: 50 },
      classes: [{ ...chat(0), input: { dist: "fixed", value: 100 }, output: { dist: "fixed", value: 50 } }],
      sessions: spec({ turns: { dist: "fixed", value: 2 }, thinkTime: { dist: "fixed", value: 1 } }),
      arrival: { rate: 1, process: "constant", cv: 1 },
      maxConcurrency: 10,
      seed: 0,
    },
  });
  assert.deepEqual([...r.requests.input], [100, 250]);
  assert.equal(r.engines[0].cacheHitTokens, 144);
});
