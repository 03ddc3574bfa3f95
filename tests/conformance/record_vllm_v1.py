#!/usr/bin/env python3
"""Record (or check) the vllm_v1 conformance streams by running vLLM's own V1
scheduler (vllm/v1/core/sched/scheduler.py with its KVCacheManager) on CPU,
without a model.

Each stream file in tests/conformance/vllm_v1/*.json holds `settings` and
`requests`; this script feeds the requests to a real `Scheduler`, calls
`schedule()` once per engine step, answers each step with a fake
`ModelRunnerOutput` (one sampled token for every request whose scheduled
tokens reach the end of its known tokens, none for a partial prefill chunk,
never EOS), calls `update_from_output()`, and writes what the scheduler did
into the file's `steps` (and `source`). With --check it compares instead of
writing and exits 1 on any difference.

Nothing of vLLM is copied here: the script imports vLLM from a source tree
given with --vllm-src (a `git archive` of the commit named in --commit; see
tests/conformance/README.md for the exact commands). Modules that vLLM
imports but that play no part in scheduling and are not installable on this
machine (listed in STUBBED) are replaced by inert stand-ins.

Usage:
  python record_vllm_v1.py --vllm-src /tmp/vllm-src --commit <sha> [--check] [FILE...]
"""
from __future__ import annotations

import dataclasses
import importlib.abc
import importlib.machinery
import inspect
import os
import sys
import types
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
FAMILY_DIR = os.path.join(HERE, "vllm_v1")
sys.path.insert(0, HERE)
from _streams import record_main  # noqa: E402

# Imported by vLLM's package tree, used by nothing the scheduler runs, and not
# installable here (no wheel in this machine's package store).
STUBBED = ["setproctitle", "blake3", "openai_harmony", "pybase64"]

# A token id that is never an end-of-sequence token (ignore_eos is also set).
SAMPLED_TOKEN = 7
EOS_TOKEN_ID = 2


# ---------------------------------------------------------------- stubs ----
class _StubMeta(type):
    def __getattr__(cls, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return mock.MagicMock(name=f"{cls.__name__}.{attr}")


class _StubClass(metaclass=_StubMeta):
    @classmethod
    def __get_pydantic_core_schema__(cls, source, handler):
        from pydantic_core import core_schema
        return core_schema.any_schema()


class _StubModule(types.ModuleType):
    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        value = type(attr, (_StubClass,), {}) if attr[:1].isupper() else mock.MagicMock(
            name=f"{self.__name__}.{attr}")
        setattr(self, attr, value)
        return value


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, names):
        self.names = set(names)

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in self.names:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


# -------------------------------------------------------------- helpers ----
def _kwargs_for(fn, **candidates):
    """The candidates that `fn` accepts (vLLM's signatures move between versions)."""
    params = inspect.signature(fn).parameters
    return {k: v for k, v in candidates.items() if k in params}


def prompt_token_ids(req: dict, index: int) -> list[int]:
    """Token ids of a request's prompt: the first `shared_prefix` tokens are the
    same for every request naming the same `prefix_group`; the rest are unique
    to the request. Ids only matter for prefix-cache equality."""
    n = req["prompt_tokens"]
    shared = req.get("shared_prefix", 0)
    group = req.get("prefix_group", "")
    group_base = 10_000 + (sum(map(ord, group)) % 1000) * 100
    ids = [group_base + i for i in range(shared)]
    ids += [100_000 + index * 1000 + i for i in range(n - shared)]
    return ids


class Recorder:
    def __init__(self, settings: dict):
        import torch
        from vllm.config import CacheConfig, ParallelConfig, SchedulerConfig
        from vllm.sampling_params import SamplingParams
        from vllm.v1.core.sched.scheduler import Scheduler
        from vllm.v1.kv_cache_interface import (FullAttentionSpec, KVCacheConfig,
                                                KVCacheGroupSpec)
        from vllm.v1.request import Request
        from vllm.v1.structured_output import StructuredOutputManager

        self.Request = Request
        self.SamplingParams = SamplingParams
        s = settings
        block_size = s["block_size"]
        num_blocks = s["num_gpu_blocks"]
        max_model_len = s["max_model_len"]
        scheduler_config = SchedulerConfig(**_kwargs_for(
            SchedulerConfig,
            max_num_seqs=s["max_num_seqs"],
            max_num_batched_tokens=s["max_num_batched_tokens"],
            max_model_len=max_model_len,
            enable_chunked_prefill=s["chunked_prefill"],
            long_prefill_token_threshold=s.get("long_prefill_token_threshold", 0),
            policy=s.get("policy", "fcfs"),
            async_scheduling=False,
        ))
        cache_config = CacheConfig(**_kwargs_for(
            CacheConfig,
            block_size=block_size,
            gpu_memory_utilization=0.9,
            swap_space=0,
            cache_dtype="auto",
            enable_prefix_caching=s.get("prefix_caching", False),
        ))
        cache_config.num_gpu_blocks = num_blocks
        # The scheduler reads only these attributes of the model config; a real
        # ModelConfig would load a Hugging Face config from the network.
        model_config = types.SimpleNamespace(
            is_encoder_decoder=False,
            is_multimodal_model=False,
            skip_tokenizer_init=True,
            max_model_len=max_model_len,
            runner_type="generate",
        )
        vllm_config = types.SimpleNamespace(
            scheduler_config=scheduler_config,
            cache_config=cache_config,
            model_config=model_config,
            parallel_config=ParallelConfig(),
            lora_config=None,
            kv_events_config=None,
            kv_transfer_config=None,
            speculative_config=None,
            observability_config=None,
            structured_outputs_config=None,
            ec_transfer_config=None,
        )
        spec = FullAttentionSpec(**_kwargs_for(
            FullAttentionSpec, block_size=block_size, num_kv_heads=1, head_size=1,
            dtype=torch.float32, use_mla=False))
        kv_cache_config = KVCacheConfig(**_kwargs_for(
            KVCacheConfig, num_blocks=num_blocks, kv_cache_tensors=[], tensors={},
            kv_cache_groups=[KVCacheGroupSpec(["layer"], spec)]))
        self.sched = Scheduler(**_kwargs_for(
            Scheduler.__init__,
            vllm_config=vllm_config,
            kv_cache_config=kv_cache_config,
            structured_output_manager=StructuredOutputManager(vllm_config),
            block_size=block_size,
            log_stats=False,
        ))
        self.block_hasher = None
        if s.get("prefix_caching", False):
            self.block_hasher = self._block_hasher(block_size)

    @staticmethod
    def _block_hasher(block_size):
        from vllm.v1.core import kv_cache_utils as u
        try:
            from vllm.utils import sha256
        except ImportError:  # later versions moved it
            from vllm.utils.hashing import sha256  # type: ignore
        u.init_none_hash(sha256)
        return u.get_request_block_hasher(block_size, sha256)

    def make_request(self, req: dict, index: int):
        params = self.SamplingParams(max_tokens=req["output_tokens"], ignore_eos=True)
        return self.Request(**_kwargs_for(
            self.Request.__init__,
            request_id=req["id"],
            prompt_token_ids=prompt_token_ids(req, index),
            sampling_params=params,
            pooling_params=None,
            eos_token_id=EOS_TOKEN_ID,
            arrival_time=float(req["arrival_step"]),
            block_hasher=self.block_hasher,
            mm_features=None,
            multi_modal_kwargs=None,
            multi_modal_hashes=None,
            multi_modal_placeholders=None,
        ))

    def model_output(self, out):
        from vllm.v1.outputs import ModelRunnerOutput
        req_ids = list(out.num_scheduled_tokens.keys())
        sampled = []
        for rid in req_ids:
            r = self.sched.requests[rid]
            # schedule() has already advanced num_computed_tokens; a request
            # samples a token only when it has caught up with all its tokens
            # (a partial prefill chunk samples nothing).
            sampled.append([SAMPLED_TOKEN] if r.num_computed_tokens >= r.num_tokens else [])
        fields = {f.name: f for f in dataclasses.fields(ModelRunnerOutput)}
        values = dict(req_ids=req_ids, req_id_to_index={r: i for i, r in enumerate(req_ids)},
                      sampled_token_ids=sampled, logprobs=None, prompt_logprobs_dict={},
                      pooler_output=[], spec_token_ids=None)
        return ModelRunnerOutput(**{k: v for k, v in values.items() if k in fields})

    def run(self, stream: dict) -> list[dict]:
        from vllm.v1.request import RequestStatus
        reqs = stream["requests"]
        objs = {}
        steps = []
        limit = stream.get("max_steps", 40)
        step = 0
        while step < limit:
            for i, r in enumerate(reqs):
                if r["arrival_step"] == step:
                    objs[r["id"]] = self.make_request(r, i)
                    self.sched.add_request(objs[r["id"]])
            pre_running = [r.request_id for r in self.sched.running]
            was_waiting_new = {rid for rid, o in objs.items() if o.status == RequestStatus.WAITING}
            out = self.sched.schedule()
            new_ids = [d.req_id for d in out.scheduled_new_reqs]
            cached = out.scheduled_cached_reqs
            resumed = []
            if hasattr(cached, "resumed_from_preemption"):
                resumed = [rid for rid, res in zip(cached.req_ids, cached.resumed_from_preemption) if res]
            # A request running before schedule() and PREEMPTED after it was
            # preempted in this step (no request is resumed in a step that
            # preempted, so none goes back before update_from_output).
            preempted = [rid for rid in pre_running if objs[rid].status == RequestStatus.PREEMPTED]
            # In the order the scheduler preempted them: FCFS preemption pops the
            # running list's tail, so the last of the running list goes first.
            preempted.sort(key=lambda rid: -pre_running.index(rid))
            engine_out = self.sched.update_from_output(out, self.model_output(out))
            finished = []
            for eco in engine_out.values():
                for o in eco.outputs:
                    if o.finish_reason is not None:
                        finished.append(o.request_id)
            entry = {
                "step": step,
                "scheduled": dict(out.num_scheduled_tokens),
                "admitted": [rid for rid in new_ids if rid in was_waiting_new],
                "resumed": resumed,
                "preempted": preempted,
                "finished": finished,
                "running": [r.request_id for r in self.sched.running],
                "waiting": [r.request_id for r in self.sched.waiting],
                "free_blocks": self.sched.kv_cache_manager.block_pool.get_num_free_blocks(),
            }
            if preempted:
                entry["preemption_mode"] = "recompute"
            steps.append(entry)
            step += 1
            if len(objs) == len(reqs) and not self.sched.running and not len(self.sched.waiting):
                break
        return steps


def main() -> int:
    return record_main(
        __doc__,
        FAMILY_DIR,
        "tests/conformance/record_vllm_v1.py",
        lambda: sys.meta_path.insert(0, _StubFinder(STUBBED)),
        Recorder,
    )


if __name__ == "__main__":
    sys.exit(main())
