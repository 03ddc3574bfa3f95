/**
 * Plans a search's candidates on Web Workers, one per core: each worker gets
 * the request and its candidates' positions as plain data and posts each
 * outcome back. Every outcome depends on the request alone, so the plan
 * equals the in-process one ({@link planShard}) byte for byte, in any
 * order the workers finish.
 *
 * @module
 */
import { InputError } from "../config/errors.ts";
import { candidateList, PLAN_REQUEST, PlanRequestError } from "./planner.ts";
import type { CandidateOutcome, PlanRequest, PlanShard, ShardOutcome } from "./planner.ts";
import type { WorkerMessage, WorkerTask } from "./worker.ts";

/**
 * Plans the candidates of `shard` on `workers` Web Workers (the files are
 * read from disk, with the process's permissions).
 *
 * @param req what to plan for
 * @param shard which share of the candidates
 * @param workers how many workers at most (one per candidate at most)
 * @param onProgress called as outcomes arrive, with how many of the shard's are done
 */
export async function planInWorkers(
  req: PlanRequest,
  shard: PlanShard,
  workers: number,
  onProgress?: (done: number, total: number) => void,
): Promise<ShardOutcome> {
  const mine = candidateList(req).map((_, position) => position).filter((p) => p % shard.count === shard.index);
  const n = Math.max(1, Math.min(workers, mine.length));
  // Candidates dealt round-robin, so that each worker gets a mix of cheap and dear ones.
  const shares = Array.from({ length: n }, (_, w) => mine.filter((_, i) => i % n === w));
  const outcomes = new Map<number, CandidateOutcome>();
  const started = shares.map((positions) => {
    const worker = new Worker(new URL("./worker.ts", import.meta.url), { type: "module" });
    return new Promise<void>((resolve, reject) => {
      let left = positions.length;
      const done = (error?: Error) => {
        worker.terminate();
        if (error) reject(error);
        else resolve();
      };
      worker.onmessage = (e: MessageEvent<WorkerMessage>) => {
        const m = e.data;
        if (m.kind === "outcome") {
          outcomes.set(m.position, m.outcome);
          onProgress?.(outcomes.size, mine.length);
          if (--left === 0) done();
        } else if (m.kind === "input-error") {
          // A request's own value (see PlanRequestError) stays one, so that the CLI names its flag.
          done(
            m.location.file === PLAN_REQUEST
              ? new PlanRequestError(m.location.keyPath as keyof PlanRequest, m.detail)
              : new InputError(m.location, m.detail),
          );
        } else done(new Error(`planner worker: ${m.message}`));
      };
      worker.onerror = (e) => {
        e.preventDefault();
        done(new Error(`planner worker: ${e.message}`));
      };
      if (positions.length === 0) done();
      else worker.postMessage({ request: req, positions } satisfies WorkerTask);
    });
  });
  await Promise.all(started);
  return {
    request: req,
    shard,
    outcomes: mine.map((p) => {
      const o = outcomes.get(p);
      if (!o) throw new Error(`planner: no outcome for candidate ${p}`);
      return [p, o] as const;
    }),
  };
}
