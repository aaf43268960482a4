"""PO318 sliding-window-off-with-rope-scaling."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, messages, model_len

YARN = {"model_type": "qwen2", "num_attention_heads": 28, "max_position_embeddings": 32768,
        "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}
LLAMA31 = {"model_type": "llama", "num_attention_heads": 32, "max_position_embeddings": 131072,
           "rope_scaling": {"rope_type": "llama3", "factor": 8.0}}


class SlidingWindowOffWithRopeScaling(Rule):
    """
    ## What it does
    Flags `--disable-sliding-window` on a model whose config.json has a rope scaling vLLM
    applies to the length (YaRN, linear, dynamic: any type outside the copy's unscaled ones,
    such as llama3 and longrope). `_get_and_verify_max_len` refuses the pair in 0.6.3-0.11
    (the raise is read from the copy); 0.12+ accept it.

    ## Why is this bad?
    vLLM raises NotImplementedError while deriving max_model_len: "Disabling sliding window is
    not supported for models with rope_scaling. Please raise an issue so we can investigate."

    ## Fix
    Drop `--disable-sliding-window` (it only matters for models with a sliding window), or
    remove the rope scaling from config.json if you do not need the longer context.
    """

    code = "PO318"
    name = "sliding-window-off-with-rope-scaling"
    severity = "error"
    versions = "<0.12"  # the raise is gone from 0.12 (read from the copy: max_len facts)
    vllm_message = messages.SLIDING_WINDOW_OFF_WITH_ROPE_SCALING
    needs = Needs(model=True)
    VALID = [
        Example("model: org/qwen-yarn\nargs:\n  max-model-len: 32768\n", model=YARN, vllm="0.10.1.1"),
        Example("model: org/llama\nargs:\n  disable-sliding-window: true\n", model=LLAMA31, vllm="0.10.1.1"),
        Example("model: org/qwen-yarn\nargs:\n  disable-sliding-window: true\n", model=YARN, vllm="0.33.0"),
    ]
    INVALID = [
        Example("model: org/qwen-yarn\nargs:\n  disable-sliding-window: true\n", model=YARN,
                vllm="0.10.1.1", at=(3, 3)),
        Example("vllm serve org/qwen-yarn --disable-sliding-window\n", kind="command", model=YARN,
                vllm="0.8.5", at=(1, 26)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        model = cfg.model_facts
        found = inputs.bool_setting(cfg, "disable_sliding_window")
        if model is None or found is None or not inputs.bool_value(cfg, "disable_sliding_window"):
            return
        rope = model_len.sliding_window_off_refused(model, facts.max_len)
        if rope is None:
            return
        yield self.diagnostic(
            cfg, found, f"disable-sliding-window on a model with {rope!r} rope scaling",
            explanation=f"config.json sets the rope scaling; vLLM {facts.version} refuses to derive "
            "max_model_len and exits",
            fields=("disable_sliding_window",), fix="drop --disable-sliding-window")
