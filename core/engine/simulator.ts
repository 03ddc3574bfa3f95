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
import { makeRouter } from "../policy/mod.ts";
import { SyntheticSource } from "../workload/source.ts";
import type { RequestDraw } from "../workload/source.ts";
import { Deque } from "./deque.ts";
import { Engine } from "./engine.ts";
import { EventQueue } from "./event_queue.ts";
import { Request } from "./request.ts";
import { TransferManager } from "./transfer.ts";
import type { RequestTable, SimulationInput, SimulationOptions, SimulationResult } from "./types.ts";

function newTable(n: number): RequestTable {
  const times = () => new Float64Array(n).fill(-1);
  return {
    count: n,
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

/**
 * Runs one simulation to completion.
 *
 * @param input engines, workload and routing policy
 * @param options profiling and progress hooks (they do not change results)
 * @returns per-request times, per-engine counters and unservable requests
 */
export function simulate(input: SimulationInput, options: SimulationOptions = {}): SimulationResult {
  const { workload: w } = input;
  if (input.engines.length === 0) throw new RangeError("simulate: no engines");
  const engines = input.engines.map((spec, i) => new Engine(i, spec));
  const router = makeRouter(input.routing, w.seed);
  // PD-disaggregated: requests go to prefill engines first, then to decode engines.
  const front = engines.filter((e) => e.spec.role !== "decode");
  const decoders = engines.filter((e) => e.spec.role === "decode");
  const decodeRouter = makeRouter(input.routing, w.seed + 1);
  const transfers = new TransferManager(
    engines.map((e) => ({ out: e.spec.linkBandwidth / 1e6, in: e.spec.linkBandwidth / 1e6 })),
  );
  const source = w.source?.() ?? new SyntheticSource(
    w.numRequests,
    w.arrival,
    w.classes ??
      [{ name: "default", weight: 1, input: w.input, output: w.output, sharedPrefixTokens: 0, prefixGroups: 1 }],
    w.seed,
  );
  if (source.count !== w.numRequests) {
    throw new RangeError(`source yields ${source.count} of ${w.numRequests} requests`);
  }
  const queue = new EventQueue();
  const table = newTable(w.numRequests);
  const unservable = new Map<string, number>();
  const backlog = new Deque<Request>();
  // Requests on their way to each engine (the per-request latency is constant per engine: first in, first out).
  const transit = engines.map(() => new Deque<Request>());
  const { onStep, onProgress, onTransfer, onArrival } = options;
  let next: RequestDraw | undefined; // the next request to arrive
  let now = 0;
  let arrived = 0;
  let inflight = 0;
  let done = 0;

  const record = (r: Request) => {
    const id = r.id;
    table.send[id] = r.send;
    table.firstToken[id] = r.firstToken;
    table.finish[id] = r.finish;
    table.preemptions[id] = r.preemptions;
    table.engine[id] = r.engine;
    done++;
  };

  const wake = (e: Engine) => {
    if (!e.busy && !e.wakePending) {
      e.wakePending = true;
      queue.push(now, "ENGINE_WAKE", e.index);
    }
  };

  // The engines of `pool` that can serve a request of these lengths, or why none can.
  const eligible = (pool: Engine[], input: number, output: number): Engine[] | string => {
    const ok = [];
    let reason = "";
    for (const e of pool) {
      // A prefill engine holds only the prompt (and computes the first token).
      const why = e.whyUnservable(input, e.spec.role === "prefill" ? 1 : output);
      if (why === undefined) ok.push(e);
      else reason ||= `${e.spec.role === "both" ? "" : `${e.spec.role} engines: `}${why}`;
    }
    return ok.length ? ok : reason;
  };

  // Sends as many backlogged requests as max_concurrency allows.
  const pump = () => {
    while (inflight < w.maxConcurrency && backlog.size > 0) {
      const r = backlog.shift()!;
      r.send = now;
      let candidates = eligible(front, r.input, r.output);
      if (typeof candidates !== "string" && decoders.length > 0 && r.output > 1) {
        const d = eligible(decoders, r.input, r.output);
        if (typeof d === "string") candidates = d;
      }
      if (typeof candidates === "string") {
        unservable.set(candidates, (unservable.get(candidates) ?? 0) + 1);
        record(r);
        continue;
      }
      inflight++;
      const e = engines[router.choose(candidates).index];
      const delay = e.spec.requestDelay ?? 0;
      if (delay > 0) {
        e.assign(r);
        transit[e.index].push(r);
        queue.push(now + delay, "REQUEST_IN", e.index);
      } else {
        e.enqueue(r);
        wake(e);
      }
    }
  };

  // Starts the KV transfer of `r` from its prefill engine into decode engine `d` (blocks reserved).
  const startTransfer = (r: Request, d: Engine) => {
    const src = engines[r.engine];
    const bytes = r.input * d.spec.kvTransferBytesPerToken;
    const latency = Math.round(Math.max(src.spec.linkLatency, d.spec.linkLatency) * 1e6);
    for (const t of transfers.start(r, src.index, d.index, bytes, latency, now)) {
      queue.push(transfers.finishTime(t, now), "TRANSFER_END", t.id, t.version);
    }
  };

  // Places a prompt-done request on a decode engine; waits there if it has no room.
  const handOff = (r: Request) => {
    const pool = eligible(decoders, r.input, r.output) as Engine[];
    const d = engines[decodeRouter.choose(pool).index];
    if (d.pendingKv.size === 0 && d.reserveIncoming(r)) startTransfer(r, d);
    else {
      d.kvWaits++;
      d.pendingKv.push(r);
    }
  };

  // Starts the transfers that now fit on decode engine `d`, oldest first.
  const drainPending = (d: Engine) => {
    while (d.pendingKv.size > 0 && d.reserveIncoming(d.pendingKv.peek()!)) {
      const r = d.pendingKv.shift()!;
      d.kvWaitTime += now - r.handoffAt;
      startTransfer(r, d);
    }
  };

  if (w.numRequests > 0) {
    next = source.next();
    queue.push(next.arrival, "ARRIVAL");
  }
  for (let ev = queue.pop(); ev; ev = queue.pop()) {
    if (ev.time < now) throw new RangeError(`clock went back from ${now} to ${ev.time} µs`);
    now = ev.time;
    switch (ev.kind) {
      case "ARRIVAL": {
        const d = next!;
        onArrival?.(d);
        const r = new Request(arrived, d.input, d.output, now, d.prefix);
        table.arrival[arrived] = now;
        table.input[arrived] = r.input;
        table.output[arrived] = r.output;
        arrived++;
        backlog.push(r);
        if (arrived < w.numRequests) {
          next = source.next();
          if (next.arrival < now) throw new RangeError(`request ${arrived} arrives before request ${arrived - 1}`);
          queue.push(next.arrival, "ARRIVAL");
        }
        pump();
        break;
      }
      case "REQUEST_IN": {
        const e = engines[ev.target];
        e.receive(transit[ev.target].shift()!);
        wake(e);
        break;
      }
      case "ENGINE_WAKE": {
        const e = engines[ev.target];
        e.wakePending = false;
        if (!e.busy && e.schedule()) {
          e.busy = true;
          e.stepStart = now;
          const dt = Math.max(1, Math.round(e.spec.cost.stepTime(e.shape) * 1e6));
          if (!(dt < Number.MAX_SAFE_INTEGER)) {
            throw new RangeError(`engine ${e.spec.label}: step time is not finite (${dt} µs)`);
          }
          e.account(dt);
          onStep?.({
            engine: e.index,
            start: now,
            duration: dt,
            seqs: e.shape.seqs,
            prefillTokens: e.shape.prefillTokens,
            decodeTokens: e.shape.decodeSeqs,
            kvBlocks: e.kv.used,
            reservedBlocks: e.reserved,
            waiting: e.waiting.size,
          });
          queue.push(now + dt, "STEP_END", e.index);
        }
        break;
      }
      case "STEP_END": {
        const e = engines[ev.target];
        const finished = e.completeStep(now);
        for (const r of finished) {
          inflight--;
          record(r);
        }
        if (e.handoff.length) {
          for (const r of e.handoff) handOff(r);
          e.handoff.length = 0;
        }
        if (finished.length) {
          if (e.spec.role === "decode") drainPending(e);
          onProgress?.(done, w.numRequests);
          pump();
        }
        if (e.hasWork) wake(e);
        break;
      }
      case "TRANSFER_END": {
        const t = transfers.get(ev.target);
        if (!t || t.version !== ev.version) break; // re-planned since
        const r = t.request;
        const src = engines[t.from];
        const dst = engines[t.to];
        for (const x of transfers.finish(t, now)) {
          queue.push(transfers.finishTime(x, now), "TRANSFER_END", x.id, x.version);
        }
        src.releaseHeld(r);
        src.transfers++;
        dst.transfers++;
        src.transferBytes += t.bytes;
        dst.transferBytes += t.bytes;
        src.transferTime += now - t.started;
        dst.transferTime += now - t.started;
        onTransfer?.({ request: r.id, from: t.from, to: t.to, start: t.started, end: now, bytes: t.bytes });
        dst.landed(r);
        wake(dst);
        if (src.hasWork) wake(src);
        break;
      }
    }
  }
  if (transfers.active > 0) throw new RangeError(`${transfers.active} KV transfers never finished`);
  if (done !== w.numRequests) {
    throw new RangeError(`simulation stalled: ${done} of ${w.numRequests} requests accounted for`);
  }
  // Every request has left: only unreferenced prefix-cache blocks may still
  // be in use, nothing may still be set aside, and no work or request may
  // still be counted against an engine (the routers' measures).
  for (const e of engines) {
    const cached = e.cache?.size ?? 0;
    if ((e.cache?.referenced ?? 0) !== 0) {
      throw new RangeError(`engine ${e.spec.label}: ${e.cache!.referenced} prefix-cache references left over`);
    }
    if (e.kv.used !== cached || e.reserved !== 0) {
      throw new RangeError(
        `engine ${e.spec.label}: ${e.kv.used - cached} KV blocks and ${e.reserved} reserved blocks leaked`,
      );
    }
    if (e.outstanding !== 0 || e.active !== 0) {
      throw new RangeError(
        `engine ${e.spec.label}: ${e.outstanding} tokens of work and ${e.active} requests left over`,
      );
    }
  }
  return { requests: table, unservable, endTime: now, engines: engines.map((e) => e.stats()) };
}
