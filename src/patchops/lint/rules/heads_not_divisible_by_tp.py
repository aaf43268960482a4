"""PO701 heads-not-divisible-by-tp."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, messages

LLAMA_8B = {"model_type": "llama", "num_attention_heads": 32, "num_key_value_heads": 8,
            "hidden_size": 4096, "num_hidden_layers": 32, "max_position_embeddings": 131072}


class HeadsNotDivisibleByTp(Rule):
    """
    ## What it does
    Flags a `tensor_parallel_size` that does not divide the model's attention heads
    (`num_attention_heads` of config.json, of its `text_config` for multimodal models).

    ## Why is this bad?
    `ModelConfig.verify_with_parallel_config` refuses to build the engine config: "Total number
    of attention heads (32) must be divisible by tensor parallel size (3)." Every release
    checks this, before any GPU work.

    ## Fix
    Use a tensor-parallel size that divides the head count (for 32 heads: 1, 2, 4, 8, 16, 32),
    and spread the rest with pipeline parallelism.
    """

    code = "PO701"
    name = "heads-not-divisible-by-tp"
    severity = "error"
    versions = ">=0"
    vllm_message = messages.HEADS_NOT_DIVISIBLE_BY_TP
    needs = Needs(model=True)
    explains = (messages.HEADS_DIVISIBLE_CHECK,)
    VALID = [
        Example("model: org/llama\nargs:\n  tensor-parallel-size: 4\n", model=LLAMA_8B),
        Example("vllm serve org/llama -tp 8\n", kind="command", vllm="0.33.0", model=LLAMA_8B),
    ]
    INVALID = [
        Example("model: org/llama\nargs:\n  tensor-parallel-size: 3\n", model=LLAMA_8B, at=(3, 3)),
        # The last of two keys wins, so it is the one checked.
        Example("model: org/llama\nargs:\n  tensor-parallel-size: 2\n  tensor-parallel-size: 6\n",
                vllm="0.10.1.1", model=LLAMA_8B, at=(4, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        model = cfg.model_facts
        found = inputs.setting(cfg, "tensor_parallel_size")
        tp = inputs.to_int(found.value) if found is not None else None
        if model is None or tp is None or tp < 0:
            return
        heads = model.num_attention_heads or 0   # vLLM: getattr(hf_text_config, "num_attention_heads", 0)
        if tp == 0:
            if "tensor_parallel_size" in facts.value_ranges:
                return   # a pydantic bound (ge=1) refuses it first: value-out-of-range
            yield self.diagnostic(cfg, found, f"tensor_parallel_size 0 divides nothing; vLLM {facts.version} "
                                  "fails with ZeroDivisionError", fields=("tensor_parallel_size",),
                                  fix="use a tensor-parallel size of 1 or more",
                                  vllm_message="integer modulo by zero")
            return
        if heads % tp == 0:
            return
        fits = [n for n in range(1, tp + 1) if heads and heads % n == 0]
        yield self.diagnostic(
            cfg, found,
            f"tensor_parallel_size {tp} does not divide the model's {heads} attention heads",
            explanation=f"vLLM {facts.version} will refuse to start",
            fields=("tensor_parallel_size",),
            fix=f"use a tensor-parallel size that divides {heads}" +
                (f", such as {fits[-1]}" if fits else ""),
            vllm_message=messages.HEADS_NOT_DIVISIBLE_BY_TP.format(heads=heads, tp=tp))
