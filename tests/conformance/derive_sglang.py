#!/usr/bin/env python3
"""Derivation aid for the sglang conformance streams.

SGLang's scheduler cannot be run here without a model and a GPU worker, so the
expected steps in tests/conformance/sglang/*.json are derived from the rules
of SGLang's scheduler source as listed (with file:line citations) in
tests/conformance/README.md, section "sglang". This script is a written-out
statement of those rules, in this project's own words and structure, used to
do the arithmetic of each stream without slips; each stream was then read
through by hand against the cited lines. It is not SGLang code and contains
none.

Scope (the settings every stream states): page_size 1, radix cache disabled
(ChunkCache), overlap scheduling disabled (event_loop_normal), mixed chunked
prefill off, FCFS, no speculative decoding, no priority scheduling, one
engine (no DP attention), every request generates exactly output_tokens
tokens (no EOS).

Usage: python derive_sglang.py [--check] [FILE...]
  without --check it (re)writes each file's `steps`; with --check it compares
  and exits 1 on a difference.
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FAMILY_DIR = os.path.join(HERE, "sglang")
CLIP_MAX_NEW_TOKENS = 4096  # SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION default
IGNORE_EOS_RESERVE_TOKENS = 1


class Req:
    def __init__(self, d: dict):
        self.rid = d["id"]
        self.arrival = d["arrival_step"]
        self.prompt = d["prompt_tokens"]
        self.max_new = d["output_tokens"]
        self.out = 0  # len(output_ids)
        self.kv = 0  # KV token slots held
        self.extend = 0  # extend_input_len for the round being scheduled
        self.is_chunked = 0
        self.finished = False
        self.ever_run = False
        self.retracted = False


class Model:
    def __init__(self, s: dict):
        self.s = s
        self.pool = s["max_total_num_tokens"]
        self.free = self.pool
        self.max_running = s["max_running_requests"]
        self.chunk_size = s["chunked_prefill_size"]  # None: chunked prefill off
        self.max_prefill = s["max_prefill_tokens"]
        self.ignore_eos = s.get("ignore_eos", False)
        init = min(s["init_new_token_ratio"] * s["schedule_conservativeness"], 1.0)
        self.min_ratio = min(init * s["min_new_token_ratio_factor"], 1.0)
        self.decay = (init - self.min_ratio) / s["new_token_ratio_decay_steps"]
        self.ratio = init
        self.retract_steps = s["retract_decode_steps"]
        self.waiting: list[Req] = []
        self.running: list[Req] = []  # running_batch.reqs (may hold finished reqs until filtered)
        self.batch_is_full = False
        self.chunked: Req | None = None
        self.last_batch: list[Req] | None = None
        self.last_was_extend = False

    # ---- PrefillAdder (schedule_policy.py) ----
    def prefill(self):
        s = self
        if (s.batch_is_full or not s.waiting) and s.chunked is None:
            return None
        running_bs = len(s.running)
        if s.max_running - running_bs <= 0 and s.chunked is None:
            s.batch_is_full = True
            return None
        offset = 0 + sum([min(r.max_new - r.out, CLIP_MAX_NEW_TOKENS) * s.ratio for r in s.running])
        cur_offset = 0
        rem_input = s.max_prefill
        rem_chunk = s.chunk_size
        can_run: list[Req] = []
        new_chunked = None
        avail = lambda: s.free  # ChunkCache: nothing evictable
        rem_total = lambda: avail() - offset
        cur_rem = lambda: avail() - cur_offset

        def budget_state():
            if rem_total() <= 0 or cur_rem() <= 0:
                return "NO_TOKEN"
            if rem_input <= 0 or (rem_chunk is not None and rem_chunk <= 0):
                return "OTHER"
            return "CONTINUE"

        if s.chunked is not None:
            r = s.chunked
            r.extend = r.prompt + r.out - r.kv
            rem = min(rem_chunk, int(rem_total()))
            truncated = r.extend > rem
            r.extend = min(r.extend, rem)
            can_run.append(r)
            offset += r.extend + (min(r.max_new, CLIP_MAX_NEW_TOKENS) if not truncated else 0)
            cur_offset += r.extend
            rem_input -= r.extend
            rem_chunk -= r.extend
            s.chunked = r if truncated else None

        req_states = None
        for r in list(s.waiting):
            running_bs = len(s.running)
            if len(can_run) >= s.max_running - running_bs:
                s.batch_is_full = True
            if s.batch_is_full:
                break
            r.extend = r.prompt + r.out  # init_next_round_input: no prefix match
            if s.ignore_eos:
                # add_one_req_ignore_eos (taken when ignore_eos and the tree cache is disabled)
                if r.extend > min(cur_rem(), rem_total()):
                    res = "NO_TOKEN"
                else:
                    def state(q):
                        left = q.max_new * 1.0 - q.out  # ignore_eos requests use ratio 1.0
                        return (left, q.prompt + q.out) if left > 0 else None
                    if req_states is None:
                        req_states = [x for x in [state(r)] + [state(q) for q in s.running] + [state(q) for q in can_run] if x]
                        req_states.sort(key=lambda x: x[0])
                    else:
                        st = state(r)
                        if st:
                            i = 0
                            for i in range(len(req_states)):
                                if st[0] <= req_states[i][0]:
                                    break
                            req_states.insert(i, st)
                    c = cur_rem() - r.extend
                    freed = 0
                    res = None
                    for i, (left, occ) in enumerate(req_states):
                        bs = len(req_states) - i
                        if c + freed - left * bs <= IGNORE_EOS_RESERVE_TOKENS * bs:
                            res = "NO_TOKEN"
                            break
                        freed += occ
                    if res is None:
                        if rem_chunk is None or r.extend <= rem_chunk:
                            can_run.append(r)
                            offset += r.extend + min(r.max_new, CLIP_MAX_NEW_TOKENS)
                            cur_offset += r.extend
                            rem_input -= r.extend
                            if rem_chunk is not None:
                                rem_chunk -= r.extend
                        else:
                            if rem_chunk == 0:
                                res = "OTHER"
                            else:
                                r.extend = rem_chunk
                                can_run.append(r)
                                new_chunked = r
                                offset += r.extend
                                cur_offset += r.extend
                                rem_input -= r.extend
                                rem_chunk -= r.extend
                        if res is None:
                            res = budget_state()
            else:
                total = r.extend + min(max(r.max_new - r.out, 0), CLIP_MAX_NEW_TOKENS)
                if total >= rem_total():
                    res = "NO_TOKEN"
                elif r.extend >= rem_input and can_run:
                    res = "OTHER"
                elif rem_chunk is None or r.extend <= rem_chunk:
                    can_run.append(r)
                    offset += r.extend + min(r.max_new, CLIP_MAX_NEW_TOKENS)
                    cur_offset += r.extend
                    rem_input -= r.extend
                    if rem_chunk is not None:
                        rem_chunk -= r.extend
                    res = budget_state()
                else:
                    trunc = rem_chunk  # page_size 1
                    if trunc <= 0:
                        res = "OTHER"
                    else:
                        r.extend = trunc
                        can_run.append(r)
                        new_chunked = r
                        offset += trunc
                        cur_offset += trunc
                        rem_input -= trunc
                        rem_chunk -= trunc
                        res = budget_state()
            if res != "CONTINUE":
                if res == "NO_TOKEN":
                    s.batch_is_full = True
                break
        if not can_run:
            return None
        s.waiting = [x for x in s.waiting if x not in can_run]
        if new_chunked is not None:
            s.chunked = new_chunked
        if s.chunked is not None:
            s.chunked.is_chunked += 1
        return can_run

    def step(self, step: int) -> dict:
        s = self
        entry = {"step": step}
        # get_next_batch_to_run: merge the last prefill batch into the running batch
        if s.last_was_extend and s.last_batch is not None:
            kept = [r for r in s.last_batch if not r.finished and r is not s.chunked]
            if len(kept) < len(s.last_batch):
                s.batch_is_full = False
            if kept:
                if not s.running:
                    # the prefill batch becomes the running batch: a new batch
                    # object, whose batch_is_full is False
                    s.running = kept
                    s.batch_is_full = False
                else:
                    s.running += kept
        batch = s.prefill()
        admitted, readmitted, retracted, finished = [], [], [], []
        if batch is not None:
            entry["kind"] = "prefill"
            sched = {}
            for r in batch:
                sched[r.rid] = r.extend
                s.free -= r.extend
                r.kv += r.extend
                if not r.ever_run:
                    admitted.append(r.rid)
                elif r.retracted:
                    readmitted.append(r.rid)
                r.ever_run = True
                r.retracted = False
            for r in batch:  # process_batch_result_prefill
                if r.is_chunked > 0:
                    r.is_chunked -= 1
                    continue
                r.out += 1
                if r.out >= r.max_new:
                    r.finished = True
                    s.free += r.kv
                    r.kv = 0
                    finished.append(r.rid)
            s.last_batch, s.last_was_extend = batch, True
        elif s.running:
            # update_running_batch
            initial = len(s.running)
            s.running = [r for r in s.running if not r.finished]
            if not s.running:
                s.batch_is_full = False
                entry["kind"] = "idle"
                sched = {}
                s.last_batch, s.last_was_extend = None, False
            else:
                if s.free < len(s.running):  # check_decode_mem, page_size 1
                    order = sorted(range(len(s.running)),
                                   key=lambda i: (s.running[i].out, -s.running[i].prompt), reverse=True)
                    first = True
                    while first or s.free < len(order):
                        if len(order) == 1:
                            break
                        first = False
                        victim = s.running[order.pop()]
                        s.free += victim.kv
                        victim.kv = 0
                        victim.retracted = True
                        victim.is_chunked = 0
                        retracted.append(victim.rid)
                    # filter_batch(keep_indices=...) keeps the sorted order
                    s.running = [s.running[i] for i in order]
                    done = sum(r.out for r in s.running)
                    max_new = sum(r.max_new for r in s.running)
                    s.ratio = min(1.0, (done + s.retract_steps * len(s.running)) / (max_new + 1))
                    for rid in retracted:
                        s.waiting.append(next(r for r in self.all if r.rid == rid))
                else:
                    s.ratio = max(s.ratio - s.decay, s.min_ratio)
                if len(s.running) < initial:
                    s.batch_is_full = False
                entry["kind"] = "decode"
                sched = {}
                for r in s.running:
                    sched[r.rid] = 1
                    s.free -= 1
                    r.kv += 1
                for r in s.running:  # process_batch_result_decode
                    r.out += 1
                    if r.out >= r.max_new:
                        r.finished = True
                        s.free += r.kv
                        r.kv = 0
                        finished.append(r.rid)
                s.last_batch, s.last_was_extend = s.running, False
        else:
            entry["kind"] = "idle"
            sched = {}
            s.last_batch, s.last_was_extend = None, False
        entry["scheduled"] = sched
        entry["admitted"] = admitted
        entry["readmitted"] = readmitted
        entry["retracted"] = retracted
        entry["finished"] = finished
        entry["running"] = [r.rid for r in s.running if not r.finished] + (
            [r.rid for r in (s.last_batch or []) if s.last_was_extend and not r.finished and r is not s.chunked])
        entry["chunked"] = s.chunked.rid if s.chunked is not None else None
        entry["waiting"] = [r.rid for r in s.waiting]
        entry["free_tokens"] = s.free
        entry["new_token_ratio"] = round(s.ratio, 6)
        entry["batch_is_full"] = s.batch_is_full
        return entry

    def run(self, stream: dict) -> list[dict]:
        self.all = [Req(d) for d in stream["requests"]]
        steps = []
        for step in range(stream.get("max_steps", 40)):
            for r in self.all:
                if r.arrival == step:
                    self.waiting.append(r)
            steps.append(self.step(step))
            if all(r.finished for r in self.all):
                break
        return steps


def main() -> int:
    sys.path.insert(0, HERE)
    from _streams import derive_main  # noqa: E402
    return derive_main(__doc__, FAMILY_DIR, lambda stream: Model(stream["settings"]).run(stream))


if __name__ == "__main__":
    sys.exit(main())
