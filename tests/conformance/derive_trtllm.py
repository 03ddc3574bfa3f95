#!/usr/bin/env python3
"""Derivation aid for the trtllm conformance streams.

TensorRT-LLM's batch manager (C++, CUDA) cannot be built or run here, so the
expected steps in tests/conformance/trtllm/*.json are derived from the rules
of its capacity and micro-batch schedulers as listed, with their sources, in
tests/conformance/README.md, section "trtllm". This script writes those rules
out in this project's own words and structure to do each stream's arithmetic
without slips; every stream was then read through by hand. It is not
TensorRT-LLM code and contains none.

Scope (the settings every stream states): PyTorch backend executor loop, one
rank, beam width 1, no draft tokens, no KV block reuse, no LoRA, context
chunking FIRST_COME_FIRST_SERVED when enabled, every request generating
exactly output_tokens tokens.

Usage: python derive_trtllm.py [--check] [FILE...]
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FAMILY_DIR = os.path.join(HERE, "trtllm")


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


class Req:
    def __init__(self, d: dict):
        self.rid = d["id"]
        self.arrival = d["arrival_step"]
        self.prompt = d["prompt_tokens"]  # mPromptLen (grows when paused)
        self.max_new = d["output_tokens"]  # mMaxNewTokens (shrinks when paused)
        self.total_out = d["output_tokens"]
        self.generated = 0  # tokens generated since the last (re)start of the context phase
        self.emitted = 0  # tokens delivered in all
        self.ctx_pos = 0  # context tokens already computed
        self.kv_tokens = 0  # tokens held in the KV sequence
        self.blocks = 0
        self.ever = False
        self.paused_once = False

    @property
    def in_context(self) -> bool:
        return self.generated == 0

    @property
    def first_chunk(self) -> bool:
        return self.ctx_pos == 0


class Model:
    def __init__(self, s: dict):
        self.s = s
        self.tpb = s["tokens_per_block"]
        self.total_blocks = s["num_kv_blocks"]
        self.free = self.total_blocks
        self.max_batch = s["max_batch_size"]
        self.max_tokens = s["max_num_tokens"]
        self.policy = s["capacity_scheduler_policy"]
        self.chunking = s["enable_chunked_prefill"]
        self.active: list[Req] = []

    # KVCacheManager::getRemainingBlocksToCompletion (beam 1, no window limit)
    def remaining_to_completion(self, r: Req) -> int:
        ctx_blocks = r.prompt // self.tpb
        total = cdiv(r.prompt + r.max_new, self.tpb)
        gen = total - ctx_blocks
        if r.blocks < ctx_blocks:
            return ctx_blocks - r.blocks + gen
        return total - r.blocks

    # KVCacheManager::getNeededBlocksOneStep (beam 1, no draft tokens, one step)
    def needed_one_step(self, r: Req) -> int:
        if r.in_context and r.first_chunk:
            return cdiv(r.prompt, self.tpb)
        if not r.in_context:
            cur = r.prompt + r.generated - 1
            nxt = cur + min(1, r.max_new - r.generated + 1)
            return cdiv(nxt, self.tpb) - cdiv(cur, self.tpb)
        return 0

    def capacity(self):
        paused = []
        if self.policy == "GUARANTEED_NO_EVICT":
            avail = self.free
            sched, pending = [], []
            for r in self.active:
                if len(sched) >= self.max_batch:
                    break
                if not r.in_context:
                    sched.append(r)
                    avail -= self.remaining_to_completion(r)
                else:
                    pending.append(r)
            for r in pending:
                if len(sched) >= self.max_batch:
                    break
                need = self.remaining_to_completion(r)
                if need <= avail:
                    sched.append(r)
                    avail -= need
                else:
                    break
            return sched, paused
        # MAX_UTILIZATION
        sched_free = self.free
        scheduled_blocks = 0
        sched = []
        lst = list(self.active)
        end = len(lst)
        i = 0
        while i < end:
            r = lst[i]
            need = self.needed_one_step(r)
            if len(sched) < self.max_batch and scheduled_blocks + need <= sched_free:
                scheduled_blocks += need
                sched.append(r)
                i += 1
                continue
            victim = None
            for j in range(end - 1, i - 1, -1):
                q = lst[j]
                if (q.in_context and not q.first_chunk) or not q.in_context:
                    victim = j
                    break
            if victim is None:
                break
            sched_free += lst[victim].blocks
            paused.append(lst[victim])
            end = victim
        return sched, paused

    def micro_batch(self, fitting: list[Req]):
        ctx, gen, tokens, n = [], [], 0, 0
        chunked = []
        for r in fitting:
            if r.in_context:
                remaining = r.prompt - r.ctx_pos
                if not self.chunking:
                    if tokens + remaining > self.max_tokens:
                        break
                    ctx.append((r, remaining))
                    tokens += remaining
                else:
                    chunked.append(r)
            else:
                if tokens + 1 > self.max_tokens:
                    break
                gen.append(r)
                tokens += 1
            n += 1
            if n >= self.max_batch:
                break
        if self.chunking and chunked:
            want = sum(r.prompt - r.ctx_pos for r in chunked)
            if want <= self.max_tokens - tokens:
                for r in chunked:
                    ctx.append((r, r.prompt - r.ctx_pos))
                    tokens += r.prompt - r.ctx_pos
            else:
                cap = self.max_tokens - tokens
                for r in chunked:  # FIRST_COME_FIRST_SERVED, unit = tokens_per_block
                    rem = r.prompt - r.ctx_pos
                    size = min(cap, rem)
                    if size != rem:
                        size = size // self.tpb * self.tpb
                    cap -= size
                    if size > 0:
                        ctx.append((r, size))
                        tokens += size
        return ctx, gen

    def step(self, step: int) -> dict:
        fitting, paused = self.capacity()
        paused_ids = []
        for r in paused:  # PyExecutor._pause_requests: LlmRequest::pause + free the KV
            self.free += r.blocks
            r.blocks = 0
            r.kv_tokens = 0
            r.prompt = r.prompt + r.generated
            r.max_new -= r.generated
            r.generated = 0
            r.ctx_pos = 0
            r.paused_once = True
            paused_ids.append(r.rid)
        fitting = [r for r in fitting if r not in paused]
        ctx, gen = self.micro_batch(fitting)
        sched, admitted, resumed, finished = {}, [], [], []
        for r, size in ctx:
            if not r.ever:
                admitted.append(r.rid)
                r.ever = True
            elif r.first_chunk and r.paused_once:
                resumed.append(r.rid)
            r.ctx_pos += size
            r.kv_tokens += size
            sched[r.rid] = size
        for r in gen:
            r.kv_tokens += 1
            sched[r.rid] = 1
        # KV blocks for this step's tokens
        for r in [x for x, _ in ctx] + gen:
            need = cdiv(r.kv_tokens, self.tpb) - r.blocks
            self.free -= need
            r.blocks += need
        assert self.free >= 0, f"step {step}: KV overcommitted"
        for r, _ in ctx:
            if r.ctx_pos >= r.prompt:
                r.generated += 1
                r.emitted += 1
        for r in gen:
            r.generated += 1
            r.emitted += 1
        for r in [x for x, _ in ctx] + gen:
            if r.emitted >= r.total_out:
                finished.append(r.rid)
                self.free += r.blocks
                r.blocks = 0
                self.active.remove(r)
        return {
            "step": step,
            "scheduled": sched,
            "context": [r.rid for r, _ in ctx],
            "generation": [r.rid for r in gen],
            "admitted": admitted,
            "resumed": resumed,
            "paused": paused_ids,
            "finished": finished,
            "active": [r.rid for r in self.active],
            "free_blocks": self.free,
        }

    def run(self, stream: dict) -> list[dict]:
        reqs = [Req(d) for d in stream["requests"]]
        steps = []
        for step in range(stream.get("max_steps", 40)):
            for r in reqs:
                if r.arrival == step:
                    self.active.append(r)
            steps.append(self.step(step))
            if all(r.emitted >= r.total_out for r in reqs):
                break
        return steps


def main() -> int:
    sys.path.insert(0, HERE)
    from _streams import derive_main  # noqa: E402
    return derive_main(__doc__, FAMILY_DIR, lambda stream: Model(stream["settings"]).run(stream))


if __name__ == "__main__":
    sys.exit(main())
