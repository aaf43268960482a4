"""PO612 cuda-graphs-hang-on-corex."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import cuda_graphs, inputs, messages, platforms
from patchops.lint.vllm.platforms import COREX_EAGER_PATCHSET

COREX_TP4 = ("model: /models/Qwen2.5-7B-Instruct\nvllm: {version: 0.8.5}\n"
             "hardware: {platform: corex, gpus: 4, memory_gib: 32}\n")


class CudaGraphsHangOnCorex(Rule):
    """
    ## What it does
    Flags CUDA graphs with tensor parallelism and custom all-reduce on Iluvatar CoreX: the
    platform is `hardware.platform: corex`, or the copy is a CoreX build (its version says
    `corex`, or it lives under /usr/local/corex).

    ## Why is this bad?
    On CoreX, capturing CUDA graphs while custom all-reduce runs the tensor-parallel
    all-reduce hangs start-up: the log stops at "Waiting for pending NCCL work to finish
    before starting graph capture" and the server never comes up, with no error. Stock CoreX
    builds hardcode `enforce_eager=True` and `disable_custom_all_reduce=True`, so they never
    capture; once the `corex-eager-allreduce` patchset (or a build that honours the flags)
    gives the flags back, graphs and custom all-reduce are on by default again and the
    hang comes back unless `--enforce-eager` is passed explicitly.

    Stage: later (graph capture, after the model loads); vLLM's configuration accepts it.

    ## Fix
    Pass `--enforce-eager` explicitly, or `--disable-custom-all-reduce` to keep graphs with
    NCCL's all-reduce.
    """

    code = "PO612"
    name = "cuda-graphs-hang-on-corex"
    severity = "error"
    stage = "later"
    versions = ">=0"
    needs = Needs(optional=("hardware.compute_capability", "hardware.memory_gib", "hardware.name",
                            "hardware.platform", "model"))
    vllm_message = messages.COREX_GRAPH_CAPTURE_HANG
    VALID = [
        # a stock CoreX build: both keywords hardcoded, so it never captures
        Example(COREX_TP4 + "args:\n  tensor-parallel-size: 4\n",
                facts={"hardcoded": {"enforce_eager": "True", "disable_custom_all_reduce": "True"}}),
        Example(COREX_TP4 + "args:\n  tensor-parallel-size: 4\n  enforce-eager: true\n"),
        Example(COREX_TP4 + "args:\n  tensor-parallel-size: 4\n  disable-custom-all-reduce: true\n"),
        Example(COREX_TP4 + "args:\n  tensor-parallel-size: 1\n"),
        # not CoreX: CUDA captures with custom all-reduce
        Example("model: /models/Qwen2.5-7B-Instruct\nhardware: {gpus: 4}\nargs:\n  tensor-parallel-size: 4\n"),
    ]
    INVALID = [
        # patched CoreX: the flags decide again, and their defaults turn graphs on
        Example(COREX_TP4 + "args:\n  tensor-parallel-size: 4\n", at=(5, 3)),
        # detected from the copy's version, not stated
        Example("vllm serve /models/Qwen2.5-7B-Instruct -tp 2\n", kind="command", at=(1, 40),
                facts={"vendor": "corex", "version": "0.8.5-corex.4.2"}),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        corex = platforms.vendor(cfg, facts)
        if corex.value != platforms.COREX:
            return
        tp = platforms.tensor_parallel_size(cfg)
        allreduce = platforms.custom_allreduce(cfg, facts)
        if tp <= 1 or not allreduce.value:
            return
        graphs = cuda_graphs.capture_sizes(cfg, facts)
        if not graphs.value:
            return
        eager = inputs.enforce_eager(cfg, facts)
        restored = ("" if "enforce_eager" in facts.hardcoded else
                    "; this copy honours --enforce-eager (no hardcoded enforce_eager=True: the "
                    f"{COREX_EAGER_PATCHSET} patchset or a build without it), so graphs are on unless it "
                    "is passed")
        yield self.diagnostic(
            cfg, inputs.setting(cfg, "tensor_parallel_size"),
            f"tensor_parallel_size {tp} with CUDA graphs and custom all-reduce on CoreX hangs at start-up",
            explanation=f"CoreX: {corex.reason}. Start-up hangs in graph capture at "
            f"\"{messages.COREX_GRAPH_CAPTURE_HANG}\" and never serves, with no error ({eager.reason}; "
            f"{allreduce.reason}){restored}",
            fields=("tensor_parallel_size", "enforce_eager", "disable_custom_all_reduce") + corex.fields,
            fix="pass --enforce-eager explicitly (or --disable-custom-all-reduce to keep graphs on NCCL)")
