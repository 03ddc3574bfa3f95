/**
 * Conformance of each engine family's scheduler to the engine's own
 * decisions (tests/conformance/README.md): every scripted stream of
 * tests/conformance/<family>/ is replayed through the engine (core/engine,
 * with the family's scheduler from core/policy) one step at a time, and
 * each step's batch (the tokens each request was given), admissions,
 * preemptions, finishes, running and waiting queues and free KV blocks are
 * compared with what the engine's scheduler decided: recorded by running
 * vLLM V1's own `Scheduler` (record_vllm_v1.py), or derived by hand from
 * the engine's source, each rule cited in the stream's file.
 *
 * A family is checked here once its scheduler follows its engine on every
 * stream; until then it is listed in PENDING with what differs (a family
 * with streams must be one or the other).
 */
import assert from "node:assert/strict";
import { Engine } from "../core/engine/engine.ts";
import { Request } from "../core/engine/request.ts";
import { engineSpec } from "../core/engine/_fixtures.ts";
import type { EngineSpec } from "../core/engine/types.ts";
import type { SchedulerName } from "../core/policy/mod.ts";
import type { PrefixIds } from "../core/workload/source.ts";
import { ROOT } from "./_helpers.ts";

/** One scripted stream, as tests/conformance/README.md describes it (the fields this replay reads). */
interface Stream {
  readonly family: string;
  readonly name: string;
  readonly description: string;
  readonly settings: Record<string, unknown>;
  readonly requests: readonly StreamRequest[];
  readonly steps: readonly ExpectedStep[];
}

/** A request of a stream: its prompt may start with `shared_prefix` tokens common to its `prefix_group`. */
interface StreamRequest {
  readonly id: string;
  readonly arrival_step: number;
  readonly prompt_tokens: number;
  readonly output_tokens: number;
  readonly shared_prefix?: number;
  readonly prefix_group?: string;
}

/** A request's shared prompt start as the simulator's workload gives it: one id per token, equal within a group. */
function prefixOf(q: StreamRequest): PrefixIds | undefined {
  if (!q.shared_prefix || q.prefix_group === undefined) return undefined;
  const group = [...q.prefix_group].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 1_000_003, 7);
  return { ids: Array.from({ length: q.shared_prefix }, (_, j) => group * 10_000 + j), blockTokens: 1 };
}

/** What an engine decided in one step. */
interface ExpectedStep {
  readonly step: number;
  readonly scheduled: Record<string, number>;
  readonly admitted: readonly string[];
  readonly resumed?: readonly string[];
  readonly preempted?: readonly string[];
  readonly finished: readonly string[];
  readonly running: readonly string[];
  readonly waiting: readonly string[];
  readonly free_blocks?: number;
}

/** What a family's stream settings mean for our engine. */
const SPEC_OF: Record<string, (s: Record<string, unknown>) => Partial<EngineSpec>> = {
  vllm_v1: (s) => ({
    scheduler: "vllm_v1" as SchedulerName,
    blockSize: s.block_size as number,
    kvBlocks: s.usable_kv_blocks as number,
    maxTokens: s.max_num_batched_tokens as number,
    maxSeqs: s.max_num_seqs as number,
    chunkedPrefill: s.chunked_prefill as boolean,
    prefixCaching: s.prefix_caching as boolean,
    maxModelLen: s.max_model_len as number,
    prefillChunkCap: s.long_prefill_token_threshold as number,
    mixPrefillDecode: true,
    admission: "greedy",
  }),
};

/** Families whose scheduler does not follow its engine on every stream yet, and what differs. */
const PENDING: Record<string, string> = {
  sglang:
    "SGLang stops admitting after one refusal until a request leaves (batch_is_full); its PrefillAdder (a new request needs its whole prompt and clipped output free, running ones reserve their rest at new_token_ratio), the ratio's decay and reset, retraction of the fewest-output request to the back of the queue: the simulator's conservative admission reserves 0.7 of each request's rest at admission and preempts the newest",
  trtllm:
    "TensorRT-LLM reserves prompt + max_new_tokens (one token more than the KV holds), ends a micro-batch at the first prompt over max_num_tokens, rounds context chunks down to whole blocks, and MAX_UTILIZATION pauses the last started request with its generated tokens folded into its prompt: the simulator reserves prompt + output − 1, keeps admitting past a prompt that does not fit, and has no block-rounded chunks",
};

function streams(family: string): Stream[] {
  const dir = `${ROOT}tests/conformance/${family}`;
  return [...Deno.readDirSync(dir)].filter((e) => e.name.endsWith(".json")).map((e) => e.name).sort()
    .map((n) => JSON.parse(Deno.readTextFileSync(`${dir}/${n}`)) as Stream);
}

/** Replays `s` through our engine: each step's decisions, in the stream's terms. */
function replay(s: Stream): ExpectedStep[] {
  // Every request accounted at every step (no lazy cohort): each one's tokens of the step are visible.
  const e = new Engine(0, engineSpec({ ...SPEC_OF[s.family](s.settings), cost: { stepTime: () => 1e-3 } }), Infinity);
  const reqs = s.requests.map((q, i) =>
    new Request(i, q.prompt_tokens, q.output_tokens, q.arrival_step * 1000, prefixOf(q))
  );
  const name = (r: Request) => s.requests[r.id].id;
  const seen = new Set<number>();
  const out: ExpectedStep[] = [];
  const last = Math.max(...s.steps.map((x) => x.step));
  for (let k = 0; k <= last; k++) {
    for (const r of reqs) if (s.requests[r.id].arrival_step === k) e.enqueue(r);
    const before = new Map(reqs.map((r) => [r.id, r.preemptions]));
    const wasRunning = new Set(e.running.map((r) => r.id));
    e.schedule();
    const scheduled: Record<string, number> = {};
    for (const r of e.running) if (r.scheduled > 0) scheduled[name(r)] = r.scheduled;
    const admitted: string[] = [];
    const resumed: string[] = [];
    for (const r of e.running) {
      if (wasRunning.has(r.id)) continue;
      (seen.has(r.id) ? resumed : admitted).push(name(r));
      seen.add(r.id);
    }
    const preempted = reqs.filter((r) => r.preemptions > before.get(r.id)!).map(name);
    e.account(1000);
    const finished = e.completeStep((k + 1) * 1000).map(name);
    out.push({
      step: k,
      scheduled,
      admitted,
      resumed,
      preempted,
      finished,
      running: e.running.map(name),
      waiting: [...iterate(e)].map(name),
      // As vLLM counts them: cached blocks no request references are in its free queue.
      free_blocks: e.ledger.pool.free + e.ledger.cachedEvictable,
    });
  }
  return out;
}

/** The waiting queue, front first. */
function* iterate(e: Engine): Generator<Request> {
  const copy: Request[] = [];
  while (e.waiting.size > 0) copy.push(e.waiting.shift()!);
  for (const r of copy) e.waiting.push(r);
  yield* copy;
}

/** The fields a step is compared on (those the stream's family records). */
function comparable(x: ExpectedStep): Record<string, unknown> {
  return {
    step: x.step,
    scheduled: x.scheduled,
    admitted: x.admitted,
    resumed: x.resumed ?? [],
    // As a set: their order shows in the waiting queue's (each goes back to its front), compared exactly.
    preempted: [...x.preempted ?? []].sort(),
    finished: x.finished,
    running: x.running,
    waiting: x.waiting,
    free_blocks: x.free_blocks,
  };
}

for (const family of Object.keys(SPEC_OF)) {
  for (const s of streams(family)) {
    Deno.test(`${family} scheduler follows the engine's own decisions on ${s.name}`, () => {
      const got = replay(s);
      for (const [i, want] of s.steps.entries()) {
        assert.deepEqual(comparable(got[i]), comparable(want), `${s.name} step ${want.step}: ${s.description}`);
      }
    });
  }
}

Deno.test("conformance streams: at least 10 per engine family, each recorded or derived with its source", () => {
  const families = [...Deno.readDirSync(`${ROOT}tests/conformance`)].filter((e) => e.isDirectory).map((e) => e.name);
  for (const f of families) {
    const list = streams(f);
    assert.ok(list.length >= 10, `${f}: ${list.length} streams`);
    assert.ok(Object.hasOwn(SPEC_OF, f) || Object.hasOwn(PENDING, f), `${f}: neither checked nor pending`);
  }
  for (const f of Object.keys(PENDING)) assert.ok(!Object.hasOwn(SPEC_OF, f), `${f} is checked: drop it from PENDING`);
});
