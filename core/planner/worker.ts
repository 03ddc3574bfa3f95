/**
 * A Web Worker that plans candidates for {@link planInWorkers}: it receives
 * the request and the positions of its candidates (plain data, no class
 * instances), plans each with the file system of the process, and posts
 * each outcome as it is done.
 *
 * @module
 */
/// <reference lib="deno.worker" />
import { InputError } from "../config/errors.ts";
import type { SourceLocation } from "../config/errors.ts";
import { candidateList, planCandidateAt } from "./planner.ts";
import type { CandidateOutcome, PlanRequest } from "./planner.ts";

/** What the worker is asked to do. */
export interface WorkerTask {
  /** The search. */
  readonly request: PlanRequest;
  /** Positions (in {@link candidateList} order) of the candidates to plan. */
  readonly positions: readonly number[];
}

/** What the worker posts: one outcome, or the error that stopped it. */
export type WorkerMessage =
  | { readonly kind: "outcome"; readonly position: number; readonly outcome: CandidateOutcome }
  | { readonly kind: "input-error"; readonly location: SourceLocation; readonly detail: string }
  | { readonly kind: "error"; readonly message: string };

self.onmessage = (e: MessageEvent<WorkerTask>) => {
  const { request, positions } = e.data;
  try {
    const all = candidateList(request);
    for (const position of positions) {
      const outcome = planCandidateAt(request, all[position]);
      self.postMessage({ kind: "outcome", position, outcome } satisfies WorkerMessage);
    }
  } catch (err) {
    self.postMessage(
      err instanceof InputError ? { kind: "input-error", location: err.location, detail: err.detail } : {
        kind: "error",
        message: err instanceof Error ? err.stack ?? err.message : String(err),
      } satisfies WorkerMessage,
    );
  }
  self.close();
};
