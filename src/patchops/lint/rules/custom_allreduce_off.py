"""PO507 custom-allreduce-off."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, messages, platforms


class CustomAllreduceOff(Rule):
    """
    ## What it does
    Says when vLLM will turn its custom all-reduce kernel off by itself: a
    `tensor_parallel_size` outside the copy's `CustomAllreduce._SUPPORTED_WORLD_SIZES` (read
    from the copy: [2, 4, 6, 8] up to 0.25, 16 added by 0.30), or a platform whose
    `use_custom_allreduce()` is False (CPU, TPU, XPU and other non-CUDA platforms; ROCm
    GPUs other than MI300-class).

    ## Why is this bad?
    Nothing fails: the tensor-parallel all-reduce goes through NCCL (RCCL) instead, which is
    slower for the small messages of decoding, so tokens per second drop. For the world size
    vLLM logs one warning per worker at start-up ("Custom allreduce is disabled due to an
    unsupported world size: 3. ..."); for the platform it says nothing (ParallelConfig sets
    `disable_custom_all_reduce = True`). Start-up checks the config cannot see (GPUs across
    nodes, more than two PCIe-only GPUs, a failing P2P test) can turn it off too.

    Severity: warning for the world size, info for the platform. Stage: later (worker start-up).

    ## Fix
    Use a supported `tensor_parallel_size`, or say `--disable-custom-all-reduce` so the
    choice is explicit.
    """

    code = "PO507"
    name = "custom-allreduce-off"
    severity = "warning"
    stage = "later"
    versions = ">=0"
    needs = Needs(optional=("hardware.name", "hardware.platform"))
    vllm_message = messages.CUSTOM_ALLREDUCE_WORLD_SIZE
    VALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\nhardware: {gpus: 4}\nargs:\n  tensor-parallel-size: 4\n"),
        Example("model: /models/Qwen2.5-7B-Instruct\nhardware: {gpus: 4}\nargs:\n  tensor-parallel-size: 3\n"
                "  disable-custom-all-reduce: true\n"),
        # 0.33.0 supports 16
        Example("model: /models/Qwen2.5-7B-Instruct\nhardware: {gpus: 16}\nargs:\n  tensor-parallel-size: 16\n",
                vllm="0.33.0"),
        Example("model: /models/Qwen2.5-7B-Instruct\nhardware: {platform: rocm, name: AMD Instinct MI300X, gpus: 2}\n"
                "args:\n  tensor-parallel-size: 2\n"),
    ]
    INVALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\nhardware: {gpus: 4}\nargs:\n  tensor-parallel-size: 3\n",
                at=(4, 3)),
        Example("model: /models/Qwen2.5-7B-Instruct\nhardware: {gpus: 16}\nargs:\n  tensor-parallel-size: 16\n",
                vllm="0.10.1.1", at=(4, 3)),
        Example("model: /models/Qwen2.5-7B-Instruct\nhardware: {platform: rocm, name: AMD Instinct MI250X, gpus: 2}\n"
                "args:\n  tensor-parallel-size: 2\n", at=(4, 3), severity="info"),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        tp = platforms.tensor_parallel_size(cfg)
        if tp <= 1 or inputs.bool_value(cfg, "disable_custom_all_reduce") is not None:
            return
        if "disable_custom_all_reduce" in facts.hardcoded:
            return  # PO611 flag-hardcoded-by-fork says it
        why = platforms.platform_without_custom_allreduce(cfg)
        at = inputs.setting(cfg, "tensor_parallel_size")
        if why is not None:
            yield self.diagnostic(
                cfg, at, f"custom all-reduce is off for tensor_parallel_size {tp} on this platform",
                explanation=f"{why}; the all-reduce goes through NCCL/RCCL, silently (ParallelConfig "
                "sets disable_custom_all_reduce)",
                severity="info", fields=("tensor_parallel_size", "hardware.platform"), vllm_message=None,
                fix="pass --disable-custom-all-reduce to make it explicit")
            return
        sizes = list(facts.custom_allreduce.world_sizes or ())   # vLLM prints its list
        if not sizes or tp in sizes:
            return
        yield self.diagnostic(
            cfg, at, f"custom all-reduce is off for tensor_parallel_size {tp}: vLLM {facts.version} "
            f"supports {sizes}",
            explanation=f"vLLM supports world sizes {sizes} (CustomAllreduce._SUPPORTED_WORLD_SIZES), so "
            "the all-reduce goes through NCCL, slower for decoding's small messages",
            fields=("tensor_parallel_size",),
            vllm_message=messages.CUSTOM_ALLREDUCE_WORLD_SIZE.format(tp=tp, sizes=sizes),
            fix=f"use a tensor_parallel_size in {sizes}, or pass --disable-custom-all-reduce to choose NCCL "
                "explicitly")
