#!/usr/bin/env python3
"""Record (or check) the vllm_v0 conformance streams by running vLLM's own V0
scheduler (vllm/core/scheduler.py with its SelfAttnBlockSpaceManager) on CPU,
without a model.

Each stream file in tests/conformance/vllm_v0/*.json holds `settings` and
`requests`. This script builds vLLM's own `LLMEngine` object without its
__init__ (no model, tokenizer or GPU): the attributes __init__ would set for a
decoder-only text model are set by hand, with a real `SchedulerConfig`,
`CacheConfig` (LoRA None), `vllm.core.scheduler.Scheduler` and
`SingleStepOutputProcessor` + `StopChecker`, and a fake model executor that
returns one sampled token (never EOS) per sampling sequence group and an
empty output for a partial prefill chunk, as V0's Sampler does. Requests
enter through the engine's `_add_processed_request` (token prompt,
max_tokens = output_tokens, ignore_eos) and each step is one call of the
engine's own `step()`: `schedule()`, the fake forward pass, then vLLM's
`_process_model_outputs` (update_num_computed_tokens, append token, stop
check, `free_finished_seq_groups`) — synchronously, or, with the setting
`async_output_proc`, through the async callback and `_advance_to_next_step`
exactly as on a CUDA-graph GPU. What the scheduler did is written into the
file's `steps` (and `source`). With --check it compares instead of writing
and exits 1 on any difference.

Nothing of vLLM is copied here: the script imports vLLM from a source tree
given with --vllm-src (a `git archive` of the commit named in --commit; see
tests/conformance/README.md for the exact commands). Modules that vLLM
imports but that play no part in scheduling and are not installable on this
machine (listed in STUBBED) are replaced by inert stand-ins.

Usage:
  python record_vllm_v0.py --vllm-src /tmp/vllm-src-v0 --commit <sha> [--check] [FILE...]
"""
from __future__ import annotations

import os
import sys
import types
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
FAMILY_DIR = os.path.join(HERE, "vllm_v0")
sys.path.insert(0, HERE)

# Shared with the V1 recorder: the inert-module finder and the request token ids;
# with every stream script, the loop over the stream files.
from _streams import record_main  # noqa: E402
from record_vllm_v1 import _kwargs_for, _StubFinder, prompt_token_ids  # noqa: E402

# Imported by vLLM's package tree (vllm.multimodal.hasher at 0.7.x,
# vllm.transformers_utils.tokenizers.mistral at 0.6.x), used by nothing the
# scheduler runs, and not installable here. Stubbed only when missing.
STUBBED = ["blake3", "mistral_common", "setproctitle", "pybase64", "compressed_tensors", "gguf"]

# A token id that is never an end-of-sequence token (ignore_eos is also set).
SAMPLED_TOKEN = 7
EOS_TOKEN_ID = 2


class _FakeExecutor:
    """Stands in for the model executor: returns one SamplerOutput holding one
    sampled SAMPLED_TOKEN for each scheduled group that samples (do_sample;
    false for a partial prefill chunk) and an empty output for the others, as
    V0's Sampler does (`_build_sampler_output`). Like the GPU model runner
    (worker/model_runner.py, `model_input.async_callback()` after the forward
    pass), it first runs the engine's async output callback when one is set."""

    def execute_model(self, execute_model_req):
        from vllm.model_executor.layers.sampler import SamplerOutput
        from vllm.sequence import CompletionSequenceGroupOutput, Logprob, SequenceOutput

        if getattr(execute_model_req, "async_callback", None) is not None:
            execute_model_req.async_callback()
        outs = []
        for meta in execute_model_req.seq_group_metadata_list:
            samples = []
            if meta.do_sample:
                for seq_id in meta.seq_data:
                    samples.append(SequenceOutput(seq_id, SAMPLED_TOKEN,
                                                  {SAMPLED_TOKEN: Logprob(logprob=0.0)}))
            outs.append(CompletionSequenceGroupOutput(samples=samples, prompt_logprobs=None))
        return [SamplerOutput(outputs=outs)]

    def stop_remote_worker_execution_loop(self):
        pass

    def shutdown(self):
        pass


def make_engine(settings: dict):
    """A vllm.engine.llm_engine.LLMEngine whose attributes are set as its
    __init__ sets them for a decoder-only text model on one GPU (no tokenizer,
    no stats, no tracing), with _FakeExecutor as model executor. step(),
    _add_processed_request(), _process_model_outputs() and
    _advance_to_next_step() are vLLM's own."""
    from functools import partial

    from vllm.config import CacheConfig, SchedulerConfig
    from vllm.engine.llm_engine import LLMEngine, SchedulerContext, SchedulerOutputState
    from vllm.engine.output_processor.interfaces import SequenceGroupOutputProcessor
    from vllm.engine.output_processor.stop_checker import StopChecker
    from vllm.utils import Counter, weak_bind

    s = settings
    scheduler_config = SchedulerConfig(**_kwargs_for(
        SchedulerConfig,
        runner_type="generate",
        task="generate",  # 0.6.x name of runner_type
        max_num_batched_tokens=s["max_num_batched_tokens"],
        max_num_seqs=s["max_num_seqs"],
        max_model_len=s["max_model_len"],
        enable_chunked_prefill=s["chunked_prefill"],
        preemption_mode=None,  # the default: V0 picks recompute for single-sequence groups
        policy=s.get("policy", "fcfs"),
    ))
    cache_config = CacheConfig(**_kwargs_for(
        CacheConfig,
        block_size=s["block_size"],
        gpu_memory_utilization=0.9,
        swap_space=0,
        cache_dtype="auto",
        enable_prefix_caching=s.get("prefix_caching", False),
    ))
    # What LLMEngine._initialize_kv_caches sets after profiling the GPU.
    cache_config.num_gpu_blocks = s["num_gpu_blocks"]
    cache_config.num_cpu_blocks = 0

    e = object.__new__(LLMEngine)
    e.scheduler_config = scheduler_config
    e.cache_config = cache_config
    e.lora_config = None
    e.speculative_config = None
    e.prompt_adapter_config = None
    e.parallel_config = types.SimpleNamespace(pipeline_parallel_size=1)
    # Async output processing is on by default on CUDA with CUDA graphs
    # (ModelConfig.verify_async_output_proc); a setting here.
    e.model_config = types.SimpleNamespace(
        runner_type="generate", task="generate", use_async_output_proc=bool(s.get("async_output_proc", False)),
        is_multimodal_model=False, max_logprobs=20, max_model_len=s["max_model_len"])
    e.log_stats = False
    e.tracer = None
    e.use_cached_outputs = False
    e.seq_counter = Counter()
    e.generation_config_fields = {}
    e.seq_id_to_seq_group = {}
    e.input_preprocessor = types.SimpleNamespace(get_eos_token_id=lambda lora_request=None: EOS_TOKEN_ID)
    e.model_executor = _FakeExecutor()
    e.cached_scheduler_outputs = [SchedulerOutputState()]
    e.scheduler_contexts = [SchedulerContext(multi_step_stream_outputs=False)]
    if e.model_config.use_async_output_proc:
        process_model_outputs = weak_bind(e._process_model_outputs)
        e.async_callbacks = [partial(process_model_outputs, ctx=e.scheduler_contexts[0])]
    else:
        e.async_callbacks = []
    e.process_request_outputs_callback = None
    # scheduler_cls (0.7.2+) defaults to "vllm.core.scheduler.Scheduler".
    from vllm.core.scheduler import Scheduler as sched_cls
    e.scheduler = [sched_cls(**_kwargs_for(
        sched_cls.__init__,
        scheduler_config=scheduler_config,
        cache_config=cache_config,
        lora_config=None,
        pipeline_parallel_size=1,
        output_proc_callback=e.async_callbacks[0] if e.model_config.use_async_output_proc else None,
    ))]
    get_tokenizer_for_seq = lambda seq: None  # noqa: E731 (detokenize=False: never called)
    e.output_processor = SequenceGroupOutputProcessor.create_output_processor(
        scheduler_config, None, e.scheduler, e.seq_counter, get_tokenizer_for_seq,
        StopChecker(scheduler_config.max_model_len, get_tokenizer_for_seq))
    return e


class Recorder:
    def __init__(self, settings: dict):
        self.settings = settings
        self.engine = make_engine(settings)
        self.sched = self.engine.scheduler[0]

    def add_request(self, req: dict, index: int):
        """LLMEngine.add_request after input processing: a token prompt,
        max_tokens = output_tokens, ignore_eos, no detokenization (there is no
        tokenizer; it only matters for stop strings, and none are set)."""
        from vllm.inputs import token_inputs
        from vllm.sampling_params import SamplingParams

        params = SamplingParams(max_tokens=req["output_tokens"], ignore_eos=True, detokenize=False)
        self.engine._add_processed_request(**_kwargs_for(
            self.engine._add_processed_request,
            request_id=req["id"],
            processed_inputs=token_inputs(prompt_token_ids(req, index)),
            params=params,
            arrival_time=float(req["arrival_step"]),
            lora_request=None,
            prompt_adapter_request=None,
        ))

    def run(self, stream: dict) -> list[dict]:
        from vllm.sequence import SequenceStatus

        reqs = stream["requests"]
        known: set[str] = set()
        ever_scheduled: set[str] = set()
        steps = []
        limit = stream.get("max_steps", 40)
        sched = self.sched
        step = 0
        while step < limit:
            for i, r in enumerate(reqs):
                if r["arrival_step"] == step:
                    self.add_request(r, i)
                    known.add(r["id"])
            pre_running = [g.request_id for g in sched.running]
            pre_waiting = {g.request_id for g in sched.waiting}
            all_groups = {g.request_id: g for g in list(sched.running) + list(sched.waiting)}
            finished_before = {rid for rid, g in all_groups.items() if g.is_finished()}
            self.engine.step()
            ctx = self.engine.scheduler_contexts[0]
            sched_out = ctx.scheduler_outputs
            scheduled = {sg.seq_group.request_id: sg.token_chunk_size
                         for sg in sched_out.scheduled_seq_groups}
            from_waiting = [rid for rid in scheduled if rid in pre_waiting]
            admitted = [rid for rid in from_waiting if rid not in ever_scheduled]
            resumed = [rid for rid in from_waiting if rid in ever_scheduled]
            ever_scheduled.update(scheduled)
            waiting_now = [g.request_id for g in sched.waiting]
            # Preempted (recompute) groups leave the running queue for the
            # waiting queue. The scheduler takes victims from the running
            # queue's tail (and a group preempts itself last), so the order is
            # by descending position in the running queue before the step.
            preempted = [rid for rid in pre_running if rid in waiting_now]
            preempted.sort(key=lambda rid: -pre_running.index(rid))
            swapped = [g.request_id for g in sched.swapped]
            # Finished in this step: the stop checker marked them during this
            # step's output processing (with async output processing, that is
            # the step after the one that computed their last token).
            for sg in sched_out.scheduled_seq_groups:
                all_groups.setdefault(sg.seq_group.request_id, sg.seq_group)
            order = list(scheduled) + [rid for rid in all_groups if rid not in scheduled]
            finished = [rid for rid in order
                        if all_groups[rid].is_finished() and rid not in finished_before
                        and all_groups[rid].first_seq.status != SequenceStatus.FINISHED_IGNORED]
            ignored = [rid for rid, g in all_groups.items()
                       if g.first_seq.status == SequenceStatus.FINISHED_IGNORED and rid not in finished_before]
            entry = {
                "step": step,
                "scheduled": scheduled,
                "admitted": admitted,
                "resumed": resumed,
                "preempted": preempted,
                "finished": finished,
                "running": [g.request_id for g in sched.running],
                "waiting": [g.request_id for g in sched.waiting],
                "free_blocks": sched.block_manager.get_num_free_gpu_blocks(),
            }
            if preempted:
                entry["preemption_mode"] = "recompute"
            if swapped:
                entry["swapped"] = swapped
            if ignored:
                entry["ignored"] = ignored
            steps.append(entry)
            step += 1
            if len(known) == len(reqs) and not self.engine.has_unfinished_requests():
                break
        return steps


def _prepare() -> None:
    import importlib.util
    sys.meta_path.insert(0, _StubFinder([m for m in STUBBED if importlib.util.find_spec(m) is None]))
    warnings.filterwarnings("ignore")  # "Failed to read commit hash" from a git-archive tree


def main() -> int:
    return record_main(__doc__, FAMILY_DIR, "tests/conformance/record_vllm_v0.py", _prepare, Recorder)


if __name__ == "__main__":
    sys.exit(main())
