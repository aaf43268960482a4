"""PO403 cuda-graph-sizes-meaning-changed."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, messages, scheduler


class CudaGraphSizesMeaningChanged(Rule):
    """
    ## What it does
    Flags `cuda_graph_sizes` with a single value on vLLM 0.12 and later.

    ## Why is this bad?
    Up to 0.11, `--cuda-graph-sizes 512` meant "capture 1, 2, 4, 8, ..., 512". From 0.12 the
    value is copied verbatim into `cudagraph_capture_sizes`, so it means "capture only 512":
    every decode batch is padded up to 512 tokens before the graph replays, and sizes above
    max_num_batched_tokens are dropped. vLLM only logs a deprecation warning.

    ## Fix
    For the old meaning use `max_cudagraph_capture_size: N`; for an exact list use
    `cudagraph_capture_sizes: [...]`.
    """

    code = "PO403"
    name = "cuda-graph-sizes-meaning-changed"
    severity = "warning"
    versions = ">=0.12"
    needs = Needs(optional=("hardware.compute_capability", "hardware.memory_gib", "hardware.name",
                            "hardware.platform", "model"))
    vllm_message = messages.CUDA_GRAPH_SIZES_DEPRECATED
    VALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.12.0}\n"
                "args:\n"
                "  max-cudagraph-capture-size: 512\n", vllm="0.12.0"),
        Example("vllm serve /models/Qwen2.5-7B-Instruct --cuda-graph-sizes 512\n",
                vllm="0.11.0", kind="command"),
        Example("vllm serve /models/Qwen2.5-7B-Instruct --cuda-graph-sizes 1 2 4 8\n",
                vllm="0.12.0", kind="command"),
    ]
    INVALID = [
        Example("vllm serve /models/Qwen2.5-7B-Instruct --cuda-graph-sizes 512\n",
                vllm="0.12.0", kind="command", at=(1, 40)),
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.12.0}\n"
                "hardware: {gpus: 1, memory_gib: 80, compute_capability: 9.0}\n"
                "args:\n"
                "  cuda-graph-sizes: [256]\n"
                "workload:\n"
                "  concurrency: [1, 8, 32]\n", vllm="0.12.0", at=(5, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        found = inputs.setting(cfg, "cuda_graph_sizes")
        if found is None:
            return
        sizes = inputs.to_int_list(found.value)
        if not sizes or len(sizes) != 1 or inputs.enforce_eager(cfg, facts).value:
            return
        n = sizes[0]
        budget = scheduler.max_num_batched_tokens(cfg, facts).value
        dropped = isinstance(budget, int) and n > budget
        effect = (f"{n} is above max_num_batched_tokens ({budget}), so it is dropped and no size is "
                  "captured" if dropped else
                  f"every smaller decode batch is padded up to {n} tokens before the graph replays")
        yield self.diagnostic(
            cfg, found,
            f"cuda_graph_sizes ({n}) means \"capture only batch size {n}\" on vLLM {facts.version}",
            explanation=f"before 0.12 it meant \"1, 2, 4, 8, ..., {n}\"; now {effect}",
            fields=("cuda_graph_sizes",),
            fix=f"use max-cudagraph-capture-size: {n} for the old meaning, or "
                f"cudagraph-capture-sizes: [...] for an exact list")
