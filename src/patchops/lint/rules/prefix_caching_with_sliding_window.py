"""PO621 prefix-caching-with-sliding-window."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import architectures, inputs, messages, routing

MISTRAL = {"model_type": "mistral", "num_attention_heads": 32, "max_position_embeddings": 32768,
           "sliding_window": 4096}
GEMMA2 = {"model_type": "gemma2", "num_attention_heads": 16, "max_position_embeddings": 8192,
          "sliding_window": 4096}


class PrefixCachingWithSlidingWindow(Rule):
    """
    ## What it does
    Flags `--enable-prefix-caching` on a model with a sliding window (Mistral 7B v0.1: 4096)
    where `CacheConfig._verify_prefix_caching` refuses the pair: always in 0.6.3-0.7.3, on the
    V0 engine only in 0.8.5-0.11 (the copy's guard says which), gone from 0.12. A window
    interleaved with full-attention layers (Gemma 2, per-layer `layer_types`) never reaches
    the cache config, so it is not refused.

    ## Why is this bad?
    vLLM raises NotImplementedError at config time: "Prefix caching is not supported with
    sliding window. Run with --disable-sliding-window to use prefix caching."

    ## Fix
    Add `--disable-sliding-window` (the context is then capped at the window), drop prefix
    caching, or run the V1 engine.
    """

    code = "PO621"
    name = "prefix-caching-with-sliding-window"
    severity = "error"
    versions = ">=0.7,<0.11"  # the guard exists from 0.7 to 0.10.x (V1 handles sliding windows from 0.11)
    vllm_message = messages.PREFIX_CACHING_WITH_SLIDING_WINDOW
    needs = Needs(model=True, optional=("hardware.compute_capability", "hardware.platform"))
    VALID = [
        Example("model: org/mistral\nargs:\n  enable-prefix-caching: true\n", model=MISTRAL),   # V1
        Example("model: org/mistral\nenv:\n  VLLM_USE_V1: '0'\nargs:\n  enable-prefix-caching: true\n"
                "  disable-sliding-window: true\n", model=MISTRAL),
        # Gemma 2 interleaves its window with full attention (0.8.5's interleaved_attn_models):
        # the cache config gets no sliding window
        Example("model: /models/gemma-2-9b-it\nenv:\n  VLLM_USE_V1: '0'\nargs:\n  enable-prefix-caching: true\n",
                model=GEMMA2),
    ]
    INVALID = [
        Example("model: org/mistral\nenv:\n  VLLM_USE_V1: '0'\nargs:\n  enable-prefix-caching: true\n",
                model=MISTRAL, at=(5, 3)),
        Example("model: org/mistral\nargs:\n  enable-prefix-caching: true\n", vllm="0.7.3",
                model=MISTRAL, at=(3, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        model = cfg.model_facts
        guard = facts.guards.prefix_caching_sliding_window
        found = inputs.bool_setting(cfg, "enable_prefix_caching")
        if model is None or guard is None or found is None or not inputs.bool_value(cfg, "enable_prefix_caching"):
            return
        if model.sliding_window is None or inputs.bool_value(cfg, "disable_sliding_window") \
                or architectures.interleaved_window(cfg, facts):
            return
        if guard == "v0":
            engine = routing.engine(cfg, facts)
            if engine.value != routing.V0 or engine.error:
                return
            why = f"on the V0 engine: {engine.reason}"
        else:
            why = ""
        yield self.diagnostic(
            cfg, found, f"prefix caching with the model's sliding window ({model.sliding_window}): "
            f"vLLM {facts.version} refuses to start", explanation=why or None,
            fields=("enable_prefix_caching", "disable_sliding_window"),
            fix="add --disable-sliding-window, or drop --enable-prefix-caching")
