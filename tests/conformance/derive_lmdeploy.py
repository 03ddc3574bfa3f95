#!/usr/bin/env python3
"""Derivation aid for the lmdeploy conformance streams (TurboMind engine).

LMDeploy's TurboMind engine (C++, CUDA) cannot be built or run here, so the
expected steps in tests/conformance/lmdeploy/*.json are derived from the
rules of its batch loop (src/turbomind/models/llama/LlamaBatch.cc) and its
block scheduler (src/turbomind/models/llama/SequenceManager.cc,
BlockManager.cc) at InternLM/lmdeploy v0.10.2, as listed with file:line
citations in tests/conformance/README.md, section "lmdeploy". This script
states those rules in this project's own words and structure to do each
stream's arithmetic without slips; every stream was then read through by
hand against the cited lines. It is not LMDeploy code and contains none.

Scope (the settings every stream states): TurboMind, one rank (tp 1, dp 1),
stateless requests (sequence_start and sequence_end both true, as the
OpenAI server and the pipeline send them), prefix caching off,
cache_chunk_size -1 (every block allocated up front), cache_max_entry_count
given as a block count, no EOS / stop words, every request generating
exactly output_tokens tokens. TurboMind's length check lets a request with
max_new_tokens = n produce n + 1 tokens, so each request also states
max_new_tokens = output_tokens - 1 (README, rule 10).

One step is one pass of LlamaBatch::InternalThreadEntry's loop: take
requests from the gateway queue into free batch slots, Initialize
(SequenceManager::Materialize decides which sequences run, with how many
tokens, and who loses its blocks), Forward, Finish.

Usage: python derive_lmdeploy.py [--check] [FILE...]
  without --check it (re)writes each file's `steps`; with --check it compares
  and exits 1 on a difference.
"""
from __future__ import annotations

import os
import sys
from collections import deque

HERE = os.path.dirname(os.path.abspath(__file__))
FAMILY_DIR = os.path.join(HERE, "lmdeploy")

# Sequence states (Sequence::Status): blocks unlocked and evictable / held but
# not running this step / running this step.
CACHED, LOCKED, ACTIVE = "cached", "locked", "active"


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


class Seq:
    def __init__(self, d: dict):
        self.rid = d["id"]
        self.arrival = d["arrival_step"]
        self.prompt = d["prompt_tokens"]
        self.total_out = d["output_tokens"]
        self.uid = None  # priority, given when taken from the gateway queue
        self.ctx = self.prompt  # context length: prompt + generated tokens
        self.cache_len = 0  # tokens whose KV is computed
        self.blocks = 0  # blocks held (locked, or cached after a preemption)
        self.status = CACHED  # a new Sequence starts as kCached with no blocks
        self.generated = 0
        self.input_len = 0  # tokens computed in the current step
        self.ever_active = False
        self.preempted = False  # lost its blocks since it last ran


class Engine:
    def __init__(self, s: dict):
        for key, want in (("enable_prefix_caching", False), ("cache_chunk_size", -1), ("tp", 1), ("dp", 1)):
            assert s[key] == want, f"{key} must be {want!r}"
        self.bs = s["cache_block_seq_len"]
        self.total_blocks = s["cache_max_entry_count"]
        assert isinstance(self.total_blocks, int) and self.total_blocks >= 1, "block count, not a memory ratio"
        self.max_bs = s["max_batch_size"]
        self.session_len = s["session_len"]
        prefill = s["max_prefill_token_num"]
        # turbomind.py _postprocess_config: with num_tokens_per_iter left at 0,
        # it becomes max_prefill_token_num and max_prefill_iters is derived.
        if s["num_tokens_per_iter"] == 0:
            self.tokens_per_iter = prefill
            self.prefill_iters = cdiv(self.session_len, prefill)
        else:
            self.tokens_per_iter = s["num_tokens_per_iter"]
            self.prefill_iters = s["max_prefill_iters"]
        # LlamaTritonModel: max_forward_token_num = max_prefill_token_num + max_batch_size
        self.max_forward = prefill + self.max_bs
        self.window: deque[int] = deque()  # GenerationState::min_input_count
        self.queue: list[Seq] = []  # gateway queue (FIFO)
        self.batch: list[Seq] = []  # TurboMind's batch slots, in state_ order
        self.next_uid = 0

    def free_blocks(self) -> int:
        return self.total_blocks - sum(q.blocks for q in self.batch)

    # LlamaBatch::AdjustMaxInputCount: the step's token budget
    def token_budget(self, seqs: list[Seq]) -> int:
        n = len(seqs)
        pending = sum(q.ctx - q.cache_len for q in seqs) - n
        per_iter = cdiv(pending, self.prefill_iters)
        if not self.window:
            self.window.extend([0] * self.prefill_iters)
        self.window.popleft()
        self.window.append(per_iter)
        for i, x in enumerate(self.window):
            self.window[i] = max(x, per_iter)
        return min(max(self.window[0] + n, self.tokens_per_iter), self.max_forward)

    def step(self, step: int) -> dict:
        # 1. Gateway: fill the free batch slots from the queue, in order; the
        #    monotonic id given here is the priority.
        room = self.max_bs - len(self.batch)
        incoming = self.queue[:room]
        self.queue = self.queue[room:]
        for q in incoming:
            q.uid = self.next_uid
            self.next_uid += 1
        order = self.batch + incoming
        assert order, f"step {step}: the engine would block waiting for requests (no idle steps in a stream)"
        past_status = {q.rid: q.status for q in order}

        # 2. Materialize: by priority; preempted sequences take back the
        #    blocks that were not reused (their prefix), cache_len capped.
        seqs = sorted(order, key=lambda q: q.uid)
        for q in seqs:
            if q.status == CACHED:
                q.cache_len = min(q.cache_len, q.blocks * self.bs)
                q.status = LOCKED
        budget = self.token_budget(seqs)
        required = [max(0, cdiv(q.ctx + 1, self.bs) - q.blocks) for q in seqs]
        free, cached = self.free_blocks(), 0
        remaining, last = budget, len(seqs)
        active: list[tuple[Seq, int]] = []
        victims: list[Seq] = []
        evict_total = 0
        i = 0
        while i < last:
            q = seqs[i]
            q.input_len = 0
            if remaining > 0:
                count = required[i]
                alloc = min(free, count)
                count -= alloc
                evict = min(cached, count)
                count -= evict
                taken, preempt, new_last = [], 0, last
                v = last - 1
                while count and v > i:  # newest first
                    taken.append(seqs[v])
                    preempt += seqs[v].blocks
                    if count <= preempt:
                        evict += count
                        count = 0
                        new_last = v
                        break
                    v -= 1
                if count == 0:
                    free -= alloc
                    cached += preempt - evict
                    evict_total += evict
                    victims += taken
                    last = new_last
                    active.append((q, required[i]))
                    q.input_len = min(q.ctx - q.cache_len, remaining)
                    remaining -= q.input_len
            i += 1
        for q in seqs[last:]:
            q.input_len = 0

        # Execute: victims' blocks become evictable (newest victim first,
        # each from its last block), the evictions needed are taken, the
        # rest stay with their owner; then blocks go to the active ones.
        preempted = []
        for q in victims:
            if q.blocks:
                preempted.append(q.rid)
                q.preempted = True
            q.status = CACHED
        for q in victims:
            take = min(q.blocks, evict_total)
            q.blocks -= take
            evict_total -= take
        assert evict_total == 0
        admitted, resumed = [], []
        active_ids = set()
        for q, need in active:
            q.blocks += need
            q.status = ACTIVE
            active_ids.add(q.rid)
            if not q.ever_active:
                admitted.append(q.rid)
                q.ever_active = True
            elif q.preempted:
                resumed.append(q.rid)
            q.preempted = False
        for q in seqs:
            if q.rid not in active_ids and q.status == ACTIVE:
                q.status = LOCKED
        assert self.free_blocks() >= 0, f"step {step}: KV overcommitted"

        # Initialize: the batch order (running ones first: those that ran
        # last step in their order, then newly running ones by input length,
        # the partial prefill last; then the rest in their previous order).
        def complete(q: Seq) -> bool:
            return q.cache_len + q.input_len == q.ctx

        act = [q for q in order if q.status == ACTIVE]
        rest = [q for q in order if q.status != ACTIVE]
        partial = [q for q in act if not complete(q)]
        assert len(partial) <= 1
        full = [q for q in act if complete(q)]
        before = [q for q in full if past_status[q.rid] == ACTIVE]
        swapped_in = sorted((q for q in full if past_status[q.rid] != ACTIVE), key=lambda q: q.input_len)
        act = before + swapped_in + partial
        if order:
            assert act, "No enough blocks."
        self.batch = act + rest

        # Forward + Finish: every active sequence computes its input; those
        # that completed their context sample one token.
        scheduled, finished = {}, []
        for q in act:
            scheduled[q.rid] = q.input_len
            done = complete(q)
            q.cache_len += q.input_len
            if done:
                q.ctx += 1
                q.generated += 1
                if q.generated >= q.total_out:
                    finished.append(q.rid)
        # Finished sequences leave the batch; their blocks are free for the next step.
        self.batch = [q for q in self.batch if q.rid not in finished]
        by_uid = sorted(self.batch, key=lambda q: q.uid)
        running = [q.rid for q in by_uid if q.status == ACTIVE]
        waiting = [q.rid for q in by_uid if q.status != ACTIVE] + [q.rid for q in self.queue]
        return {
            "step": step,
            "token_budget": budget,
            "scheduled": scheduled,
            "admitted": admitted,
            "resumed": resumed,
            "preempted": preempted,
            "finished": finished,
            "running": running,
            "waiting": waiting,
            "queued": [q.rid for q in self.queue],
            "blocks": {q.rid: q.blocks for q in by_uid if q.blocks},
            "free_blocks": self.free_blocks(),
        }

    def run(self, stream: dict) -> list[dict]:
        reqs = [Seq(d) for d in stream["requests"]]
        for d, q in zip(stream["requests"], reqs):
            assert d["max_new_tokens"] == d["output_tokens"] - 1, f"{q.rid}: max_new_tokens = output_tokens - 1"
            assert q.prompt + q.total_out <= self.session_len, f"{q.rid}: longer than session_len"
            assert cdiv(q.prompt + q.total_out, self.bs) <= self.total_blocks, f"{q.rid}: does not fit the cache"
        steps = []
        for step in range(stream.get("max_steps", 40)):
            for q in reqs:
                if q.arrival == step:
                    self.queue.append(q)
            steps.append(self.step(step))
            if all(q.generated >= q.total_out for q in reqs):
                break
        return steps


def main() -> int:
    sys.path.insert(0, HERE)
    from _streams import derive_main  # noqa: E402

    return derive_main(__doc__, FAMILY_DIR, lambda stream: Engine(stream["settings"]).run(stream))


if __name__ == "__main__":
    sys.exit(main())
