#!/usr/bin/env python3
"""Derivation aid for the mindie conformance streams.

MindIE-LLM's scheduler (C++, built against the Ascend toolchain) cannot be
built or run here, so the expected steps in tests/conformance/mindie/*.json
are derived from the rules of its scheduler, FCFS policy and block manager
as listed, with their sources (Ascend/MindIE-LLM at the commit pinned in
tests/conformance/README.md, section "mindie"), in that README. This script
states those rules in this project's own words and structure and does each
stream's arithmetic; every stream was then read through by hand. It is not
MindIE code and contains none.

Scope (the settings every stream states): PD mixed deployment (role PnD),
one DP rank, synchronous engine loop (one batch in flight), greedy, no
prefix cache, no speculative decoding, no beam search / parallel sampling,
no LoRA, stageSelectPolicy 0 unless supportSelectBatch is true, dynamic
batch size off, every request generating exactly output_tokens tokens.

Time: MindIE decides some things on the wall clock (maxQueueDelayMicroseconds,
maxFirstTokenWaitTime). The streams assume every executed step lasts
`assumed_step_ms` (longer than maxQueueDelayMicroseconds); a request reaches
the engine maxQueueDelayMicroseconds before the scheduling of its
arrival_step (so it is already due then), or, with "late_arrival": true,
just before it (so it is not yet due at that step). Scheduling rounds that
produce no batch take no step; they are listed in `empty_rounds`.

Usage: python derive_mindie.py [--check] [FILE...]
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FAMILY_DIR = os.path.join(HERE, "mindie")


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


class Req:
    def __init__(self, d: dict, seq: int):
        self.rid = d["id"]
        self.arrival = d["arrival_step"]
        self.prompt = d["prompt_tokens"]
        self.out = d["output_tokens"]
        self.late = bool(d.get("late_arrival", False))
        self.seq = seq  # sequence id: handed out in arrival order
        self.gen = 0  # tokens generated so far
        self.computed = 0  # tokens computed in the current prefill (chunked prefill)
        self.kv = 0  # tokens held in the request's block table
        self.blocks = 0  # NPU blocks held
        self.cpu_blocks = 0  # CPU blocks held while swapped out
        self.prefilling = True  # sequence stage PREFILL (fresh, or reset by a recompute)
        self.finished = False  # produced its last token, blocks not released yet
        self.due = False  # waited at least maxQueueDelayMicroseconds
        self.ever = False
        self.preempted_once = False

    def length(self) -> int:
        # prompt + generated tokens (the sequence length the block manager is asked about)
        return self.prompt + self.gen


class Engine:
    def __init__(self, s: dict):
        self.s = s
        self.bs = s["cacheBlockSize"]
        self.total = s["npuBlockNum"]
        self.free = self.total
        self.cpu_total = s.get("cpuBlockNum", 0)
        self.cpu_free = self.cpu_total
        self.max_prefill_tokens = s["maxPrefillTokens"]
        self.max_seq_len = s["maxSeqLen"]
        self.max_prefill_batch = s["maxPrefillBatchSize"] or s["maxBatchSize"]
        self.max_batch = s["maxBatchSize"]
        self.max_preempt = s["maxPreemptCount"]
        self.select_batch = s["supportSelectBatch"]
        self.prefill_ms = s["prefillTimeMsPerReq"]
        self.decode_ms = s["decodeTimeMsPerReq"]
        self.queue_delay_us = s["maxQueueDelayMicroseconds"]
        self.first_token_wait_ms = s["maxFirstTokenWaitTime"]
        self.chunked = s.get("enableChunkedPrefill", False)
        self.chunk_size = s.get("prefillChunkSize", 0)
        self.step_ms = s["assumed_step_ms"]
        assert self.step_ms * 1000 > self.queue_delay_us, "a step must outlast maxQueueDelayMicroseconds"
        self.waiting: list[Req] = []
        self.running: list[Req] = []
        self.swapped: list[Req] = []
        self.last_empty = False
        self.decode_waste = 0  # supportSelectBatch: accumulated decode waste (ms)
        self.new_request_first = False
        self.step_no = 0

    # ---- block accounting -------------------------------------------------
    def slots_needed(self, r: Req) -> int:
        """Blocks a running request needs for the tokens not yet in its block
        table (one per decode; none for a prompt already allocated)."""
        new = r.length() - r.kv if not r.prefilling else 0
        if new <= 0:
            return 0
        room = (self.bs - r.kv % self.bs) % self.bs
        if room >= new:
            return 0
        return cdiv(new - room, self.bs)

    def append_slots(self, r: Req):
        need = self.slots_needed(r)
        assert need <= self.free
        self.free -= need
        r.blocks += need
        if not r.prefilling:
            r.kv = r.length()

    def allocate(self, r: Req):
        need = cdiv(r.length(), self.bs)
        assert need <= self.free
        self.free -= need
        r.blocks = need
        r.kv = r.length()

    def release(self, r: Req):
        self.free += r.blocks
        r.blocks = 0
        r.kv = 0

    def waited_ms(self, r: Req) -> int:
        lead = 0 if r.late else self.queue_delay_us // 1000
        return (self.step_no - r.arrival) * self.step_ms + lead

    # ---- which kind of batch ----------------------------------------------
    def decide(self) -> str:
        if self.chunked:
            return "mixed"
        if self.last_empty and self.running:
            return "decode"
        if self.select_batch:
            if self.waiting:
                cost = self.prefill_ms * len(self.running)
                if len(self.running) <= self.max_batch:
                    self.decode_waste += self.decode_ms * (self.max_batch - len(self.running))
                if cost > self.decode_waste:
                    return "decode"
                self.decode_waste = 0
                return "prefill"
            self.decode_waste = 0
            return "decode"
        if self.swapped or not self.waiting or not self.waiting[0].due:
            return "decode"
        if self.free < int(0.05 * self.total):
            return "decode"
        return "prefill"

    # ---- rounds -------------------------------------------------------------
    def take_running(self, limit: int, out: dict) -> list[Req]:
        cand = []
        while self.running and len(cand) < limit:
            r = self.running.pop(0)
            if r.finished:
                self.release(r)
                r.done = True
                out["released"].append(r.rid)
                continue
            cand.append(r)
        return cand

    def preempt(self, v: Req, swap_num: list, out: dict, preempted: list, swapped_out: list):
        if swap_num[0] < self.max_preempt and self.cpu_free >= cdiv(v.length(), self.bs):
            swap_num[0] += 1
            self.free += v.blocks
            self.cpu_free -= v.blocks
            v.cpu_blocks, v.blocks = v.blocks, 0
            swapped_out.append(v)
            out["preempted"].append(v.rid)
            out["preemption_mode"][v.rid] = "swap"
        else:
            self.release(v)
            # the generated tokens are kept: the next prefill recomputes prompt + generated
            v.computed = 0
            v.prefilling = True
            preempted.append(v)
            out["preempted"].append(v.rid)
            out["preemption_mode"][v.rid] = "recompute"
        v.preempted_once = True
        self.new_request_first = False

    def apply_running(self, cand, budget, out, preempted, swapped_out, chunking):
        decodes, chunks = [], []
        swap_num = [0]
        while cand:
            r = cand[0]
            if r.prefilling:  # a partly prefilled request (chunked prefill only)
                n = min(r.length() - r.computed, budget["left"](), self.slot_cap())
                assert n > 0, "zero-token chunk: outside what the streams model"
            else:
                n = 1
            if not budget["fits"](n):
                break
            cand.pop(0)
            keep = True
            while self.slots_needed(r) > self.free or self.new_request_first:
                if cand:
                    v = cand.pop()
                else:
                    v, keep = r, False
                self.preempt(v, swap_num, out, preempted, swapped_out)
                if not keep:
                    break
            if keep:
                self.append_slots(r)
                budget["add"](n)
                (chunks if r.prefilling else decodes).append((r, n))
        return decodes, chunks, cand

    def apply_swapped(self, cand, budget, out):
        ins = []
        while cand:
            r = cand[0]
            need = cdiv(r.length(), self.bs)
            assert need <= self.total
            if need > self.free:
                break
            if not budget["fits"](1):
                break
            cand.pop(0)
            self.cpu_free += r.cpu_blocks
            self.free -= r.cpu_blocks
            r.blocks, r.cpu_blocks = r.cpu_blocks, 0
            self.append_slots(r)
            budget["tokens"] += 1  # swapped-in requests add tokens but not sequences
            ins.append((r, 1))
            out["resumed"].append(r.rid)
        return ins, cand

    def slot_cap(self) -> int:
        return self.chunk_size if self.chunk_size else self.max_prefill_tokens

    def apply_waiting(self, cand, budget, out, chunking):
        admitted = []
        while cand:
            r = cand[0]
            need = cdiv(r.length(), self.bs)
            if r.gen > 0 and not chunking and need == self.free:
                break  # a recompute never takes the last free blocks
            limit = self.max_seq_len if chunking else min(self.max_seq_len, budget["max_tokens"])
            assert r.gen > 0 or r.length() <= limit, "prompt over the limit (ignored request): not modelled"
            assert need <= self.total, "request can never fit"
            if need > self.free:
                if r.gen == 0 and self.waited_ms(r) > self.first_token_wait_ms:
                    self.new_request_first = True
                break
            n = min(r.length() - r.computed, budget["left"](), self.slot_cap()) if chunking else r.length()
            if n == 0 or not budget["fits"](n):
                break
            cand.pop(0)
            self.allocate(r)
            budget["add"](n)
            admitted.append((r, n))
            if r.ever:
                out["resumed"].append(r.rid)
            else:
                out["admitted"].append(r.rid)
                r.ever = True
        return admitted, cand

    def make_budget(self, max_tokens: int, max_seqs: int) -> dict:
        b = {"tokens": 0, "seqs": 0, "max_tokens": max_tokens}
        b["left"] = lambda: max(0, max_tokens - b["tokens"])
        b["fits"] = lambda n: b["tokens"] + n <= max_tokens and b["seqs"] + 1 <= max_seqs

        def add(n):
            b["tokens"] += n
            b["seqs"] += 1

        b["add"] = add
        return b

    def put_back(self, leftovers: list[Req]):
        """Unscheduled candidates return to the front of their queues in sequence-id order."""
        for r in sorted(leftovers, key=lambda x: x.seq, reverse=True):
            q = {"waiting": self.waiting, "running": self.running, "swapped": self.swapped}[r.state]
            q.insert(0, r)

    def settle(self, preempted, scheduled, swapped_out, left, scand, wleft):
        """After a decode or mixed round: the preempted wait again, the scheduled run (in this order), the swapped out
        swap, and the candidates left unscheduled (running, swapped, waiting) return to the front of their queues."""
        for r in preempted:
            r.state = "waiting"
            self.waiting.append(r)
        for r, _ in scheduled:
            r.state = "running"
            self.running.append(r)
        for r in swapped_out:
            r.state = "swapped"
            self.swapped.append(r)
        for r in left:
            r.state = "running"
        for r in scand:
            r.state = "swapped"
        for r in wleft:
            r.state = "waiting"
        self.put_back(left + scand + wleft)

    def round(self) -> dict:
        out = {"kind": None, "batch": [], "admitted": [], "resumed": [], "preempted": [],
               "preemption_mode": {}, "released": []}
        kind = self.decide()
        out["kind"] = kind
        token_budget = max(self.max_seq_len, self.max_prefill_tokens)
        if kind == "prefill":
            window = 2 * self.max_prefill_batch
            cand, self.waiting = self.waiting[:window], self.waiting[window:]
            cand = [r for r in cand if r.gen == 0] + [r for r in cand if r.gen > 0]
            budget = self.make_budget(token_budget, self.max_prefill_batch)
            admitted, left = self.apply_waiting(cand, budget, out, False)
            for r in left:
                r.state = "waiting"
            self.put_back(left)
            for r, _ in admitted:
                r.state = "running"
                self.running.append(r)
            out["batch"] = [(r, n, "prefill") for r, n in admitted]
        elif kind == "decode":
            window = 2 * self.max_batch
            cand = self.take_running(window, out)
            scand = []
            while self.swapped and len(scand) < window - len(cand):
                scand.append(self.swapped.pop(0))
            budget = self.make_budget(token_budget, self.max_batch)
            preempted, swapped_out = [], []
            decodes, _, left = self.apply_running(cand, budget, out, preempted, swapped_out, False)
            ins = []
            if not preempted and not swapped_out:
                ins, scand = self.apply_swapped(scand, budget, out)
            done = sorted(decodes + ins, key=lambda x: x[0].seq)
            self.settle(preempted, done, swapped_out, left, scand, [])
            out["batch"] = [(r, n, "decode") for r, n in done]
            out["swap_only"] = bool(swapped_out) and not done
        else:  # mixed: chunked prefill
            window = 2 * self.max_batch
            cand = self.take_running(window, out)
            wcand = []
            while self.waiting and len(wcand) < window - len(cand):
                wcand.append(self.waiting.pop(0))
            scand = []
            while self.swapped and len(scand) < window - len(cand) - len(wcand):
                scand.append(self.swapped.pop(0))
            budget = self.make_budget(self.max_prefill_tokens, self.max_batch)
            preempted, swapped_out = [], []
            decodes, chunks, left = self.apply_running(cand, budget, out, preempted, swapped_out, True)
            ins = []
            if not preempted and not swapped_out:
                ins, scand = self.apply_swapped(scand, budget, out)
            admitted, wleft = self.apply_waiting(wcand, budget, out, True)
            done = sorted(decodes + ins, key=lambda x: x[0].seq)
            self.settle(preempted, done + admitted + chunks, swapped_out, left, scand, wleft)
            out["batch"] = ([(r, n, "decode") for r, n in done] + [(r, n, "prefill") for r, n in admitted]
                            + [(r, n, "prefill") for r, n in chunks])
        out["empty"] = not out["batch"] and not out.get("swap_only")
        assert not out.get("swap_only"), "a swap-only batch: outside what the streams model"
        return out

    # ---- the loop ---------------------------------------------------------------
    def run(self, stream: dict) -> list[dict]:
        reqs = [Req(d, i) for i, d in enumerate(sorted(stream["requests"], key=lambda d: d["arrival_step"]))]
        for r in reqs:
            r.state = "new"
            r.done = False
        steps = []
        for step in range(stream.get("max_steps", 40)):
            self.step_no = step
            for r in reqs:
                if r.arrival == step:
                    r.state = "waiting"
                    r.due = not r.late
                    self.waiting.append(r)
            empty_rounds, released, preempted, modes = [], [], [], {}
            for _ in range(12):
                res = self.round()
                released += res["released"]
                preempted += res["preempted"]
                modes.update(res["preemption_mode"])
                if not res["empty"]:
                    self.last_empty = False
                    break
                self.last_empty = True
                empty_rounds.append(res["kind"])
                if not self.running and not self.swapped and self.waiting and not self.waiting[0].due:
                    # nothing to run: the engine idles in 1 ms rounds until the head has waited long enough
                    self.waiting[0].due = True
                    empty_rounds.append("wait")
            else:
                raise AssertionError(f"step {step}: no batch could be formed")
            sched, kinds = {}, set()
            finished = []
            for r, n, kind in res["batch"]:
                sched[r.rid] = n
                kinds.add(kind)
                if kind == "prefill":
                    r.computed += n
                    if r.computed >= r.length():
                        r.prefilling = False
                        r.computed = r.length()
                        r.gen += 1
                else:
                    r.gen += 1
                if not r.prefilling and r.gen >= r.out:
                    r.finished = True
                    finished.append(r.rid)
            kind = "mixed" if self.chunked else ("prefill" if kinds == {"prefill"} else "decode")
            rec = {
                "step": step,
                "kind": kind,
                "scheduled": sched,
                "admitted": res["admitted"],
                "resumed": res["resumed"],
                "preempted": preempted,
                "preemption_mode": modes,
                "finished": finished,
                "released": released,
                "empty_rounds": empty_rounds,
                "running": [r.rid for r in self.running],
                "waiting": [r.rid for r in self.waiting],
                "swapped": [r.rid for r in self.swapped],
                "free_blocks": self.free,
            }
            if self.cpu_total:
                rec["free_cpu_blocks"] = self.cpu_free
            steps.append(rec)
            for r in reqs:
                if r.state != "new":
                    r.due = True  # a step outlasts maxQueueDelayMicroseconds
            if all(r.gen >= r.out for r in reqs):
                break
        return steps


def main() -> int:
    sys.path.insert(0, HERE)
    from _streams import derive_main  # noqa: E402
    return derive_main(__doc__, FAMILY_DIR, lambda stream: Engine(stream["settings"]).run(stream))


if __name__ == "__main__":
    sys.exit(main())
