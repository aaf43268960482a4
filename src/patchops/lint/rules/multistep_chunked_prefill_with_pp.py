"""PO305 multistep-chunked-prefill-with-pp."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, routing, scheduler


class MultistepChunkedPrefillWithPp(Rule):
    """
    ## What it does
    Flags multi-step scheduling with chunked prefill on and `pipeline_parallel_size` > 1
    (vLLM 0.6.3-0.10.0). Chunked prefill counts when set, and when V0 switches it on by
    itself for max_model_len > 32768.

    ## Why is this bad?
    `EngineArgs.create_engine_config` refuses the combination before anything loads:
    "Multi-Step Chunked-Prefill is not supported for pipeline-parallel-size > 1". The
    automatic switch makes this surprising: raising max_model_len past 32K breaks a config
    that worked.

    ## Fix
    Remove `num_scheduler_steps`, use tensor parallelism instead of pipeline parallelism, or
    keep chunked prefill off (max_model_len <= 32768 or disable it explicitly; then
    max_num_batched_tokens must cover max_model_len).
    """

    code = "PO305"
    name = "multistep-chunked-prefill-with-pp"
    severity = "error"
    versions = ">=0.6.3,<0.10.1"
    needs = Needs(optional=("hardware.platform", "model"))
    vllm_message = "Multi-Step Chunked-Prefill is not supported for pipeline-parallel-size > 1"
    VALID = [
        Example("model: /models/Qwen2.5-72B-Instruct\n"
                "vllm: {version: 0.6.3.post1}\n"
                "args:\n"
                "  pipeline-parallel-size: 2\n"
                "  num-scheduler-steps: 8\n"
                "  max-model-len: 16384\n", vllm="0.6.3.post1"),
        Example("model: /models/Qwen2.5-72B-Instruct\n"
                "tensor-parallel-size: 4\n"
                "num-scheduler-steps: 8\n"
                "max-model-len: 65536\n", vllm="0.7.3", kind="config"),
    ]
    INVALID = [
        Example("model: /models/Qwen2.5-72B-Instruct\n"
                "vllm: {version: 0.6.3.post1}\n"
                "hardware: {platform: cuda, gpus: 4, compute_capability: 8.0}\n"
                "args:\n"
                "  tensor-parallel-size: 2\n"
                "  pipeline-parallel-size: 2\n"
                "  num-scheduler-steps: 8\n"
                "  enable-chunked-prefill: true\n"
                "  max-model-len: 16384\n", vllm="0.6.3.post1", at=(6, 3)),
        # No chunked-prefill setting: V0 turns it on for max_model_len 65536 > 32768.
        Example("model: /models/Qwen2.5-72B-Instruct\n"
                "pipeline-parallel-size: 2\n"
                "num-scheduler-steps: 8\n"
                "max-model-len: 65536\n", vllm="0.7.3", kind="config", at=(2, 1), severity="warning"),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        if inputs.v0_multistep_setting(cfg, facts) is None:
            return
        steps = inputs.num_scheduler_steps(cfg)
        pp_setting = inputs.setting(cfg, "pipeline_parallel_size")
        pp = inputs.to_int(pp_setting.value) if pp_setting is not None else None
        if pp is None or pp <= 1:
            return
        eng = routing.engine(cfg, facts)
        chunked = scheduler.chunked_prefill(cfg, facts, eng)
        if True not in chunked.candidates:
            return
        certain = chunked.value is True and chunked.certain
        what = "will refuse to start" if certain else "possibly refuses to start"
        yield self.diagnostic(
            cfg, pp_setting,
            f"pipeline_parallel_size {pp} with num_scheduler_steps {steps} and chunked prefill on",
            explanation=f"vLLM {facts.version} {what}; chunked prefill is on: {chunked.reason}",
            severity=None if certain else "warning",
            fields=("pipeline_parallel_size", "num_scheduler_steps") + chunked.fields,
            fix="remove num-scheduler-steps, use tensor-parallel-size instead of pipeline "
                "parallelism, or keep chunked prefill off")
