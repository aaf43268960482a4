"""PO705 expert-parallel-without-experts."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, messages

LLAMA = {"model_type": "llama", "num_attention_heads": 32, "max_position_embeddings": 8192}
QWEN3_MOE = {"model_type": "qwen3_moe", "num_attention_heads": 32, "num_experts": 128,
             "max_position_embeddings": 40960}


class ExpertParallelWithoutExperts(Rule):
    """
    ## What it does
    Flags `--enable-expert-parallel` on a model whose config.json names no experts
    (`moe_num_experts`, `num_experts`, `n_routed_experts`, `num_local_experts`, all 0 or
    absent), on releases whose `ModelConfig` has this guard (0.8.5+, read from the copy).

    ## Why is this bad?
    vLLM refuses to build its config: "Number of experts in the model must be greater than 0
    when expert parallelism is enabled." Expert parallelism only means something for
    mixture-of-experts models.

    ## Fix
    Drop `--enable-expert-parallel` for dense models.
    """

    code = "PO705"
    name = "expert-parallel-without-experts"
    severity = "error"
    versions = ">=0.8"  # enable_expert_parallel and its MoE check arrive in 0.8
    vllm_message = messages.EXPERT_PARALLEL_WITHOUT_EXPERTS
    needs = Needs(model=True)
    explains = (messages.EXPERTS_NEEDED_CHECK,)
    VALID = [
        Example("model: org/qwen3-moe\nargs:\n  enable-expert-parallel: true\n", model=QWEN3_MOE),
        Example("model: org/llama\nargs:\n  tensor-parallel-size: 2\n", model=LLAMA),
    ]
    INVALID = [
        Example("model: org/llama\nargs:\n  enable-expert-parallel: true\n", model=LLAMA, at=(3, 3)),
        Example("vllm serve org/llama --enable-expert-parallel\n", kind="command", vllm="0.33.0",
                model=LLAMA, at=(1, 22)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        model = cfg.model_facts
        found = inputs.bool_setting(cfg, "enable_expert_parallel")
        if model is None or found is None or not inputs.bool_value(cfg, "enable_expert_parallel") \
                or facts.guards.expert_parallel_needs_experts is None or model.num_experts > 0:
            return
        yield self.diagnostic(
            cfg, found, "expert parallelism is on for a model without experts",
            explanation=f"the model's config.json names no experts; vLLM {facts.version} refuses to start",
            fields=("enable_expert_parallel",), fix="drop --enable-expert-parallel for a dense model")
