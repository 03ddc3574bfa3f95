/**
 * The discrete-event loop: a client sends requests (arrival process,
 * `max_concurrency`), a router places each on an engine, engines run steps.
 * Handlers change state and push the events they cause; the loop only pops
 * events and advances the clock (integer µs).
 *
 * Invariants (tested in tests/invariants_test.ts):
 * 1. every request either finishes exactly once or is reported unservable;
 * 2. KV blocks in use stay within [0, capacity] on every engine;
 * 3. the clock never goes back;
 * 4. the same input gives the same result, bit for bit;
 * 5. at the end no KV block is held or reserved but by the prefix cache, and
 *    no work is left counted against an engine (checked).
 *
 * @module
 */
import { LoadTree, makeRouter } from "../policy/mod.ts";
import { SyntheticSource } from "../workload/source.ts";
import { SessionSource } from "../workload/sessions.ts";
import type { RequestDraw, RequestSource } from "../workload/source.ts";
import { empty } from "./arrays.ts";
import { Deque } from "./deque.ts";
import { DrawHeap } from "./draw_heap.ts";
import { landed, releaseHeld, reserveIncoming } from "./kv_handoff.ts";
import { Engine } from "./engine.ts";
import { EventQueue } from "./event_queue.ts";
import { GapCounts } from "./gap_counts.ts";
import { Request } from "./request.ts";
import { TransferManager } from "./transfer.ts";
import type { RequestTable, SimulationInput, SimulationOptions, SimulationResult, WorkloadSpec } from "./types.ts";

function newTable(requests: number, stride: number): RequestTable {
  const n = Math.ceil(requests / stride);
  const times = () => new Float64Array(n).fill(-1);
  return {
    count: n,
    ...(stride > 1 ? { stride } : {}),
    arrival: times(),
    send: times(),
    firstToken: times(),
    finish: times(),
    input: new Int32Array(n),
    output: new Int32Array(n),
    preemptions: new Int32Array(n),
    engine: new Int32Array(n).fill(-1),
  };
}

/** Why `e` can never serve a request of these lengths (a prefill engine holds only the prompt), or undefined. */
function whyNot(e: Engine, input: number, output: number): string | undefined {
  return e.whyUnservable(input, e.spec.role === "prefill" ? 1 : output);
}

/** A workload's request stream: its own source (a trace), or its synthetic arrivals, lengths and classes. */
export function workloadSource(w: WorkloadSpec): RequestSource {
  if (w.source) return w.source();
  const classes = w.classes ??
    [{ name: "default", weight: 1, input: w.input, output: w.output, sharedPrefixTokens: 0, prefixGroups: 1 }];
  return w.sessions
    ? new SessionSource(w.numRequests, w.arrival, classes, w.sessions, w.seed)
    : new SyntheticSource(w.numRequests, w.arrival, classes, w.seed);
}

/**
 * Pools of at most this many engines are routed by a scan of the pool, larger ones by a {@link LoadTree}: the same
 * choice. A scan reads every engine at every request; the tree replays, at every request, the engines whose load
 * changed since the last one, which for a small pool is most of them. Measured in one process (least_loaded, 12.5
 * req/s per H100): the scan is 9–11% faster on 8 and 16 engines, 4–6% on 32 and 64; the tree 2–10% on 128 and
 * 20–40% on 256.
 */
const SCAN_UP_TO = 64;

/** An engine's own event, while engines run ahead (see {@link Simulation}): its step ends. */
const LOCAL_STEP_END = 0;
/** An engine's own event: it looks at its queue (MindIE's queue delay, SGLang's turn after an idle one). */
const LOCAL_WAKE = 1;

/** What decides which requests an engine can serve: engines with the same kind answer alike. */
const kindOf = (e: Engine) => e.unservableKey;

/**
 * Whether a run of `input` with `options` lets engines run ahead of the
 * clock (see {@link Simulation}): the router reads nothing of the engines,
 * no client limit binds, no engine hands work to another, and no hook
 * wants steps or transfers in time order.
 */
export function runsAhead(input: SimulationInput, options: SimulationOptions = {}): boolean {
  const w = input.workload;
  return !options.lockstep && !options.onStep && !options.onTransfer &&
    makeRouter(input.routing, w.seed).blind === true && input.engines.every((e) => e.role !== "decode") &&
    w.maxConcurrency >= w.numRequests && w.sessions === undefined;
}

/**
 * Runs one simulation to completion.
 *
 * @param input engines, workload and routing policy
 * @param options profiling and progress hooks (they do not change results)
 * @returns per-request times, per-engine counters and unservable requests
 *
 * @example Simulate a resolved plan
 * ```ts
 * import { assemble, loadConfig, simulate } from "../../mod.ts";
 * import assert from "node:assert/strict";
 *
 * const i = "instance_groups: [{num_instances: 1, num_devices_per_instance: 1, " +
 *   "device_type: H100_SXM_80G, pd_role: both}]";
 * const c = "model_config: {name: meta-llama/Llama-3.1-8B-Instruct, quantize_linear_action: DISABLED}\n" +
 *   "load_gen: {load_gen_type: fixed_length, num_requests: 4, num_input_tokens: 128, num_output_tokens: 8}";
 * const files: Record<string, string> = { "i.yaml": i, "c.yaml": c };
 * const fs = { readText: (p: string) => files[p], isDirectory: () => false };
 * const result = simulate(assemble(loadConfig(["i.yaml"], "c.yaml", fs)).input);
 * const t = result.requests;
 * assert.equal(t.count, 4);
 * for (let k = 0; k < t.count; k++) assert.ok(t.arrival[k] <= t.firstToken[k] && t.firstToken[k] < t.finish[k]);
 * assert.equal(result.engines[0].served, 4);
 * ```
 */
export function simulate(input: SimulationInput, options: SimulationOptions = {}): SimulationResult {
  return new Simulation(input, options).run();
}

/**
 * One run's state and its event handlers, one method per event kind; the
 * loop in {@link run} only pops events and advances the clock.
 *
 * **Running ahead.** When the router reads nothing of the engines
 * (round-robin, random), no client limit binds and no engine hands work to
 * another (no PD), an engine's life depends only on the requests routed to
 * it: nothing it does changes another engine. Its steps' ends and its own
 * wake-ups then stay out of the event queue, as its local event
 * (`#localAt`), and are played in a burst, in time order, when a request is
 * about to reach it (up to that instant: its steps ending then first, its
 * wake-ups then after the instant's requests, as the event priorities have
 * it) and at the end of the run. The handlers are the same; each engine sees
 * the same events in the same order, so every request's times and every
 * engine's counters are the same as in lockstep (`SimulationOptions.lockstep`;
 * tests/invariants_test.ts compares them). Only the order in which requests
 * finishing on different engines are recorded differs. The burst keeps one
 * engine's state in the cache across its steps: 512 engines stepping in
 * turn through one queue missed the cache at nearly every step.
 */
class Simulation {
  readonly #w: SimulationInput["workload"];
  readonly #options: SimulationOptions;
  readonly #engines: Engine[];
  readonly #router: ReturnType<typeof makeRouter>;
  readonly #decodeRouter: ReturnType<typeof makeRouter>;
  /** PD-disaggregated: requests go to prefill engines first (`front`), then to decode engines. */
  readonly #front: Engine[];
  /** For each pool (front, decoders), one engine of each kind ({@link kindOf}) in it, in pool order. */
  readonly #specsOf = new Map<Engine[], Engine[]>();
  readonly #decoders: Engine[];
  /**
   * For each pool whose router takes the least key, its load tree, and each
   * engine's tree and place in it: every handler that changes an engine
   * touches it, and routing a request every engine of the pool can serve
   * asks the tree (the same choice as the router's scan).
   */
  readonly #trees = new Map<Engine[], LoadTree>();
  readonly #treeOf: (LoadTree | undefined)[] = [];
  readonly #place: Int32Array;
  readonly #transfers: TransferManager;
  readonly #source: RequestSource;
  /** Sessions' later turns, drawn when the turn before finished, each with its ARRIVAL event queued. */
  readonly #followUps = new DrawHeap();
  /** Requests drawn from the source so far (all of them but sessions' later turns). */
  #drawn = 0;
  readonly #queue = new EventQueue();
  readonly #table: RequestTable;
  /** The table keeps every `#stride`-th request. */
  readonly #stride: number;
  readonly #unservable = new Map<string, number>();
  /** Every engine's inter-token gaps (they share it). */
  readonly #itl = new GapCounts();
  /** Requests the client holds back (max_concurrency). */
  readonly #backlog = new Deque<Request>();
  /** Objects of requests that have left every engine, for later requests ({@link Request.reuse}). */
  readonly #spare: Request[] = [];
  /**
   * Requests on their way to their engines, one queue per per-request latency: the requests sent with one latency
   * reach their engines in the order they were sent (their REQUEST_IN events are at send time + that latency, ties in
   * push order), so one queue per latency serves every engine with it. (One queue per engine left 512 cold ring
   * buffers, 6.6% of a 512-engine run.)
   */
  readonly #transit = new Map<number, Deque<Request>>();
  /** The next request to arrive. */
  #next: RequestDraw | undefined;
  /**
   * Whether every event of an engine may change what its router reads of it. A router that counts requests
   * (`Router.countsRequests`) reads what changes only when a request is routed to the engine or leaves it: its
   * tree is touched then, not at every step (a 512-engine fleet replayed a tree path at each of its 5.9M steps).
   */
  readonly #touchEvery: boolean;
  /** Whether engines run ahead of the clock (see the class doc). */
  readonly #ahead: boolean;
  /** Running ahead: each engine's local event's time (Infinity: none) and kind (LOCAL_STEP_END or LOCAL_WAKE). */
  readonly #localAt: Float64Array;
  readonly #localKind: Uint8Array;
  /**
   * Running ahead: while an engine's local events play, the instant up to
   * which they may (a request reaches the engine then); else the clock.
   */
  #horizon = 0;
  /** The latest time any event, queued or local, happened at. */
  #end = 0;
  #now = 0;
  /** Requests sent to each engine that have not reached it yet (a per-request latency). */
  readonly #inTransit: Int32Array;
  /**
   * Whether an engine's step can form before other events of the same
   * instant that bring it nothing ({@link #alone}): no engine hands requests
   * to another (no PD), and no hook watches the order in which engines step.
   */
  readonly #apart: boolean;
  #arrived = 0;
  /** Routers' choices so far. */
  #routings = 0;
  #inflight = 0;
  #done = 0;

  constructor(input: SimulationInput, options: SimulationOptions) {
    const w = input.workload;
    if (input.engines.length === 0) throw new RangeError("simulate: no engines");
    this.#w = w;
    this.#options = options;
    const finished: Request[] = [];
    this.#engines = input.engines.map((spec, i) => new Engine(i, spec, options.lazyDecodeAfter, this.#itl, finished));
    this.#router = makeRouter(input.routing, w.seed, input.routingWeights);
    this.#front = this.#engines.filter((e) => e.spec.role !== "decode");
    this.#decoders = this.#engines.filter((e) => e.spec.role === "decode");
    for (const pool of [this.#front, this.#decoders]) {
      const seen = new Set<string>();
      this.#specsOf.set(pool, pool.filter((e) => !seen.has(kindOf(e)) && (seen.add(kindOf(e)), true)));
    }
    this.#decodeRouter = makeRouter(input.routing, w.seed + 1, input.routingWeights);
    this.#place = new Int32Array(this.#engines.length);
    for (const [pool, router] of [[this.#front, this.#router], [this.#decoders, this.#decodeRouter]] as const) {
      if (!router.key || pool.length <= SCAN_UP_TO || options.routeByScan) continue;
      const tree = new LoadTree(pool, router.key);
      this.#trees.set(pool, tree);
      pool.forEach((e, i) => {
        this.#treeOf[e.index] = tree;
        this.#place[e.index] = i;
      });
    }
    this.#transfers = new TransferManager(
      this.#engines.map((e) => ({ out: e.spec.linkBandwidth / 1e6, in: e.spec.linkBandwidth / 1e6 })),
    );
    this.#source = workloadSource(w);
    if (this.#source.count !== w.numRequests) {
      throw new RangeError(`source yields ${this.#source.count} of ${w.numRequests} requests`);
    }
    this.#stride = Math.max(1, Math.floor(options.keepEvery ?? 1));
    this.#table = newTable(w.numRequests, this.#stride);
    this.#ahead = runsAhead(input, options);
    this.#touchEvery = this.#router.countsRequests !== true || this.#decodeRouter.countsRequests !== true;
    this.#localAt = new Float64Array(this.#engines.length).fill(Infinity);
    this.#localKind = new Uint8Array(this.#engines.length);
    this.#inTransit = new Int32Array(this.#engines.length);
    this.#apart = this.#decoders.length === 0 && !options.onStep && !options.onTransfer;
  }

  /** Pops events until none is left, then checks that every request and block is accounted for. */
  run(): SimulationResult {
    const w = this.#w;
    const queue = this.#queue;
    if (w.numRequests > 0) {
      this.#next = this.#source.next();
      this.#drawn++;
      queue.push(this.#next.arrival, "ARRIVAL");
    }
    while (queue.pop()) {
      if (queue.time < this.#now) throw new RangeError(`clock went back from ${this.#now} to ${queue.time} µs`);
      this.#now = this.#horizon = queue.time;
      // The event's engine may change its load (a transfer touches its two engines itself; under a router that counts
      // requests, only a step that finishes or hands off one does: #stepEnd touches it then).
      if (this.#touchEvery && queue.kind !== "ARRIVAL" && queue.kind !== "TRANSFER_END") this.#touch(queue.target);
      switch (queue.kind) {
        case "ARRIVAL":
          this.#arrival();
          break;
        case "REQUEST_IN":
          this.#requestIn(this.#engines[queue.target]);
          break;
        case "ENGINE_WAKE":
          if (this.#ahead) this.#catchUp(this.#engines[queue.target], this.#now);
          this.#engineWake(this.#engines[queue.target]);
          break;
        case "STEP_END":
          this.#stepEnd(this.#engines[queue.target]);
          break;
        case "TRANSFER_END":
          this.#transferEnd(queue.target, queue.version);
          break;
      }
    }
    if (this.#ahead) { for (const e of this.#engines) this.#catchUp(e, Infinity); }
    this.#checkEnd();
    return {
      requests: this.#table,
      unservable: this.#unservable,
      endTime: Math.max(this.#now, this.#end),
      engines: this.#engines.map((e) => e.stats()),
      itl: this.#itl.toMap(),
    };
  }

  /**
   * A request arrives at the client: it joins the backlog, and the next arrival is scheduled. It is the source's next
   * request or a session's later turn, whichever is due (the source's first at the same instant).
   */
  #arrival(): void {
    const now = this.#now;
    const followUps = this.#followUps;
    const fromSource = this.#next !== undefined && !(followUps.nextArrival < this.#next.arrival);
    const d = fromSource ? this.#next! : followUps.pop();
    this.#options.onArrival?.(d);
    const spare = this.#spare.pop();
    const r = spare
      ? spare.reuse(this.#arrived, d.input, d.output, now, d.prefix, d.session)
      : new Request(this.#arrived, d.input, d.output, now, d.prefix, d.session);
    if (this.#arrived % this.#stride === 0) {
      const table = this.#table;
      const row = this.#arrived / this.#stride;
      table.arrival[row] = now;
      table.input[row] = r.input;
      table.output[row] = r.output;
    }
    this.#arrived++;
    this.#backlog.push(r);
    if (fromSource) {
      this.#next = undefined;
      const source = this.#source;
      if (source.hasNext ? source.hasNext() : this.#drawn < source.count) {
        const next = source.next();
        this.#drawn++;
        if (next.arrival < now) {
          throw new RangeError(`request ${this.#drawn - 1} arrives before request ${this.#drawn - 2}`);
        }
        this.#next = next;
        this.#queue.push(next.arrival, "ARRIVAL");
      }
    }
    this.#pump();
  }

  /** The earliest arrival still to come, µs (Infinity: none). */
  #nextArrival(): number {
    const a = this.#followUps.nextArrival;
    return this.#next !== undefined && this.#next.arrival < a ? this.#next.arrival : a;
  }

  /** A sent request reaches its engine's queue after the per-request latency. */
  #requestIn(e: Engine): void {
    if (this.#ahead) this.#catchUp(e, this.#now);
    const r = this.#transit.get(e.spec.requestDelay!)!.shift()!;
    this.#inTransit[e.index]--;
    if (r.engine !== e.index) throw new Error(`request ${r.id} of engine ${r.engine} reached engine ${e.index}`);
    r.queued = this.#now;
    e.receive(r);
    this.#wake(e);
  }

  /** An idle engine forms its next step, if it has one, and starts it. */
  #engineWake(e: Engine): void {
    // Also called straight from a step's end, after routing may have read this engine's load.
    if (this.#touchEvery) this.#touch(e.index);
    e.wakePending = false;
    if (e.busy) return;
    const now = this.#now;
    if (!e.schedule(now)) {
      // SGLang's loop turns again right after an idle turn that unblocked its admission; MindIE's when the head of
      // its queue has waited its queue delay.
      if (e.sglang?.takeIdleTurn()) this.#wake(e);
      else if (e.mindie && e.mindie.due > now) {
        e.wakePending = true;
        if (this.#ahead) this.#local(e, e.mindie.due, LOCAL_WAKE);
        else this.#queue.push(e.mindie.due, "ENGINE_WAKE", e.index);
      }
      return;
    }
    this.#start(e);
  }

  /** Starts the step `e` has formed, now: its time, its accounting, its end. */
  #start(e: Engine): void {
    const now = this.#now;
    e.busy = true;
    e.stepStart = now;
    let dt = Math.max(1, Math.round(e.spec.cost.stepTime(e.shape) * 1e6));
    if (e.hostLoad > 0) {
      dt += Math.round(e.hostLoad * 1e6);
      e.hostLoad = 0;
    }
    if (!(dt < Number.MAX_SAFE_INTEGER)) {
      throw new RangeError(`engine ${e.spec.label}: step time is not finite (${dt} µs)`);
    }
    e.account(dt);
    this.#options.onStep?.({
      engine: e.index,
      start: now,
      duration: dt,
      seqs: e.shape.seqs,
      prefillTokens: e.shape.prefillTokens,
      decodeTokens: e.shape.decodeSeqs,
      kvBlocks: e.ledger.used,
      reservedBlocks: e.ledger.reserved,
      cachedBlocks: e.ledger.cachedEvictable,
      waiting: e.waiting.size,
      preemptions: e.preemptions,
      shape: e.shape,
    });
    if (this.#ahead) this.#local(e, now + dt, LOCAL_STEP_END);
    else this.#queue.push(now + dt, "STEP_END", e.index);
  }

  /** A step ends: tokens land, finished requests leave, prompt-done requests go to decode engines. */
  #stepEnd(e: Engine): void {
    // When nothing else happens at this instant, a step of the lazy cohort alone that ends nobody's request is
    // followed at once by the next quiet one (Engine.quietStep), as the general path below would form it. (No routing
    // happens in between, and the event loop's touch, where its router needs one, stands.)
    if (!e.wakePending && this.#alone(e) && e.quietStep(this.#now)) {
      this.#start(e);
      return;
    }
    const finished = e.completeStep(this.#now);
    if (!this.#touchEvery && (finished.length > 0 || e.handoff.length > 0)) this.#touch(e.index);
    for (const r of finished) {
      this.#inflight--;
      this.#record(r);
    }
    if (e.handoff.length) {
      for (const r of e.handoff) this.#handOff(r);
      empty(e.handoff);
    }
    if (finished.length) {
      if (e.spec.role === "decode") this.#drainPending(e);
      this.#options.onProgress?.(this.#done, this.#w.numRequests);
      this.#pump();
    }
    if (!e.hasWork) return;
    // When nothing else at this instant can bring the engine a request (#alone), the wake-up #wake would queue sees
    // what it sees now: the engine looks at its queue now instead. The same steps, one push and one pop fewer for
    // most of them.
    if (!e.wakePending && this.#alone(e)) this.#engineWake(e);
    else this.#wake(e);
  }

  /**
   * Whether nothing else that happens at this instant can bring `e` a
   * request, so that its next step forms now as it would after them: the
   * earliest waiting event is later; or, when engines are {@link #apart},
   * no request arrives at this instant, none waits for a seat (so no finish
   * elsewhere sends one) and none is on its way to `e`. Running ahead, only a
   * request reaching the engine at this instant can happen at it (the
   * horizon).
   *
   * The second case: on 512 engines, 6% of the step ends shared their
   * microsecond with another engine's event and took the general path, a
   * wake-up through the queue and a scheduling pass (345,000 of 5.9M).
   */
  #alone(e: Engine): boolean {
    if (this.#ahead) return this.#now < this.#horizon;
    const now = this.#now;
    if (this.#queue.nextTime > now) return true;
    return this.#apart && this.#backlog.size === 0 && this.#inTransit[e.index] === 0 &&
      this.#nextArrival() > now;
  }

  /** Running ahead: `e`'s local event is at `time`, of `kind`. */
  #local(e: Engine, time: number, kind: number): void {
    this.#localAt[e.index] = time;
    this.#localKind[e.index] = kind;
  }

  /**
   * Running ahead: plays `e`'s local events up to instant `t` (a request
   * reaches it then; Infinity at the end of the run): those before `t`, and
   * at `t` its step's end, whose events come before the instant's requests.
   * A wake-up at `t` comes after them: it goes to the queue.
   */
  #catchUp(e: Engine, t: number): void {
    const i = e.index;
    const at = this.#localAt;
    if (!(at[i] <= t)) return;
    const kind = this.#localKind;
    const clock = this.#now;
    this.#horizon = t;
    for (;;) {
      const time = at[i];
      const wake = kind[i] === LOCAL_WAKE;
      if (time > t || time === Infinity || (time === t && wake)) break;
      at[i] = Infinity;
      this.#now = time;
      if (time > this.#end) this.#end = time;
      if (wake) this.#engineWake(e);
      else this.#stepEnd(e);
    }
    this.#now = this.#horizon = clock;
    if (at[i] === t && t < Infinity) {
      at[i] = Infinity;
      this.#queue.push(t, "ENGINE_WAKE", i);
    }
  }

  /** A KV transfer completes (unless re-planned since): the prompt's blocks move to the decode engine. */
  #transferEnd(id: number, version: number): void {
    const transfers = this.#transfers;
    const t = transfers.get(id);
    if (!t || t.version !== version) return;
    const now = this.#now;
    const r = t.request;
    const src = this.#engines[t.from];
    const dst = this.#engines[t.to];
    this.#touch(t.from);
    this.#touch(t.to);
    for (const x of transfers.finish(t, now)) {
      this.#queue.push(transfers.finishTime(x, now), "TRANSFER_END", x.id, x.version);
    }
    releaseHeld(src, r);
    src.transfers++;
    dst.transfers++;
    src.transferBytes += t.bytes;
    dst.transferBytes += t.bytes;
    src.transferTime += now - t.started;
    dst.transferTime += now - t.started;
    this.#options.onTransfer?.({ request: r.id, from: t.from, to: t.to, start: t.started, end: now, bytes: t.bytes });
    landed(dst, r);
    this.#wake(dst);
    if (src.hasWork) this.#wake(src);
  }

  /** Writes a request's times into the table and counts it done. */
  #record(r: Request): void {
    if (r.id % this.#stride === 0) {
      const row = r.id / this.#stride;
      const table = this.#table;
      table.send[row] = r.send;
      table.firstToken[row] = r.firstToken;
      table.finish[row] = r.finish;
      table.preemptions[row] = r.preemptions;
      table.engine[row] = r.engine;
    }
    this.#options.onRecord?.(r);
    this.#done++;
    // A session's next turn is sent a think time after this one's last token (or at once when it could not be served).
    if (r.session) {
      const d = this.#source.followUp!(r.session, this.#now);
      if (d !== undefined) {
        this.#followUps.push(d);
        this.#queue.push(d.arrival, "ARRIVAL");
      }
    }
    // Its object serves a later request once nothing holds it: not a request of an engine that keeps finished ones
    // (MindIE's loop lingers them in its batch; SGLang's and TurboMind's keep lists of their own), nor under PD.
    const e = r.engine < 0 ? undefined : this.#engines[r.engine];
    if (this.#decoders.length === 0 && (e === undefined || !(e.sglang || e.mindie || e.lmdeploy))) this.#spare.push(r);
  }

  /** Schedules an idle engine to look at its queue now (once). */
  #wake(e: Engine): void {
    if (!e.busy && !e.wakePending) {
      e.wakePending = true;
      // Running ahead, before the horizon: no request can join it, so it is the engine's own.
      if (this.#ahead && this.#now < this.#horizon) this.#local(e, this.#now, LOCAL_WAKE);
      else this.#queue.push(this.#now, "ENGINE_WAKE", e.index);
    }
  }

  /**
   * The engines of `pool` that can serve a request of these lengths, or why none can. Engines alike in every setting
   * that decides it (the engines of one instance group: their specs differ only in labels) answer alike, so one of
   * each kind is asked (`pool` itself comes back when every kind can: a fleet of 512 engines of one group asks once
   * per request, not 512 times).
   */
  #eligible(pool: Engine[], input: number, output: number): Engine[] | string {
    const specs = this.#specsOf.get(pool)!;
    // Nearly always every kind can: that is found without building anything (this runs for every request).
    let refused = 0;
    for (let i = 0; i < specs.length; i++) if (whyNot(specs[i], input, output) !== undefined) refused++;
    if (refused === 0) return pool;
    const why = (e: Engine) => whyNot(e, input, output);
    if (refused === specs.length) {
      const e = specs.find((e) => why(e) !== undefined)!;
      return `${e.spec.role === "both" ? "" : `${e.spec.role} engines: `}${why(e)}`;
    }
    const ok = new Set(specs.filter((e) => why(e) === undefined).map(kindOf));
    return pool.filter((e) => ok.has(kindOf(e)));
  }

  /** Engine `index`'s load may have changed: its tree, if any, looks again at the next choice. */
  #touch(index: number): void {
    this.#treeOf[index]?.touch(this.#place[index]);
  }

  /**
   * `router`'s choice among `candidates`: its pool's tree when every engine of the pool can serve the request. The
   * engine chosen is marked with the run's count of choices (`Engine.routed`) and touched: the request it is about to
   * take changes its load.
   */
  #choose(router: ReturnType<typeof makeRouter>, candidates: Engine[], r: Request): Engine {
    const tree = this.#trees.get(candidates);
    const e = this.#engines[(tree ? tree.best() : router.choose(candidates, r)).index];
    e.routed = ++this.#routings;
    this.#touch(e.index);
    // Affinity is to the engine a session's turns enter by (the front pool's; under PD the decode engine is chosen
    // again at every hand-off).
    if (r.session && router === this.#router) r.session.engine = e.index;
    return e;
  }

  /** Sends as many backlogged requests as max_concurrency allows. */
  #pump(): void {
    const now = this.#now;
    while (this.#inflight < this.#w.maxConcurrency && this.#backlog.size > 0) {
      const r = this.#backlog.shift()!;
      r.send = now;
      let candidates = this.#eligible(this.#front, r.input, r.output);
      if (typeof candidates !== "string" && this.#decoders.length > 0 && r.output > 1) {
        const d = this.#eligible(this.#decoders, r.input, r.output);
        if (typeof d === "string") candidates = d;
      }
      if (typeof candidates === "string") {
        this.#unservable.set(candidates, (this.#unservable.get(candidates) ?? 0) + 1);
        this.#record(r);
        continue;
      }
      this.#inflight++;
      const e = this.#choose(this.#router, candidates, r);
      if (this.#ahead) this.#catchUp(e, now);
      const delay = e.spec.requestDelay ?? 0;
      if (delay > 0) {
        e.assign(r);
        let transit = this.#transit.get(delay);
        if (transit === undefined) this.#transit.set(delay, transit = new Deque());
        transit.push(r);
        this.#inTransit[e.index]++;
        this.#queue.push(now + delay, "REQUEST_IN", e.index);
      } else {
        r.queued = now;
        e.enqueue(r);
        this.#wake(e);
      }
    }
  }

  /** Starts the KV transfer of `r` from its prefill engine into decode engine `d` (blocks reserved). */
  #startTransfer(r: Request, d: Engine): void {
    const now = this.#now;
    const src = this.#engines[r.engine];
    const bytes = r.input * d.spec.kvTransferBytesPerToken;
    const latency = Math.round(Math.max(src.spec.linkLatency, d.spec.linkLatency) * 1e6);
    for (const t of this.#transfers.start(r, src.index, d.index, bytes, latency, now)) {
      this.#queue.push(this.#transfers.finishTime(t, now), "TRANSFER_END", t.id, t.version);
    }
  }

  /** Places a prompt-done request on a decode engine; it waits there if the engine has no room. */
  #handOff(r: Request): void {
    const pool = this.#eligible(this.#decoders, r.input, r.output) as Engine[];
    const d = this.#choose(this.#decodeRouter, pool, r);
    if (d.pendingKv.size === 0 && reserveIncoming(d, r)) this.#startTransfer(r, d);
    else {
      d.kvWaits++;
      d.pendingKv.push(r);
    }
  }

  /** Starts the transfers that now fit on decode engine `d`, oldest first. */
  #drainPending(d: Engine): void {
    while (d.pendingKv.size > 0 && reserveIncoming(d, d.pendingKv.peek()!)) {
      const r = d.pendingKv.shift()!;
      d.kvWaitTime += this.#now - r.handoffAt;
      this.#startTransfer(r, d);
    }
  }

  /**
   * Every request has left: only unreferenced prefix-cache blocks may still
   * be in use, nothing may still be set aside, and no work or request may
   * still be counted against an engine (the routers' measures).
   */
  #checkEnd(): void {
    const w = this.#w;
    if (this.#transfers.active > 0) throw new RangeError(`${this.#transfers.active} KV transfers never finished`);
    if (this.#done !== w.numRequests) {
      throw new RangeError(`simulation stalled: ${this.#done} of ${w.numRequests} requests accounted for`);
    }
    for (const e of this.#engines) {
      const cached = e.ledger.cache?.size ?? 0;
      if ((e.ledger.cache?.referenced ?? 0) !== 0) {
        throw new RangeError(`engine ${e.spec.label}: ${e.ledger.cache!.referenced} prefix-cache references left over`);
      }
      if (e.ledger.pool.used !== cached || e.ledger.reserved !== 0) {
        throw new RangeError(
          `engine ${e.spec.label}: ${
            e.ledger.pool.used - cached
          } KV blocks and ${e.ledger.reserved} reserved blocks leaked`,
        );
      }
      if (e.outstanding !== 0 || e.active !== 0) {
        throw new RangeError(
          `engine ${e.spec.label}: ${e.outstanding} tokens of work and ${e.active} requests left over`,
        );
      }
    }
  }
}
