"""PO317 multimodal-limit-on-text-model."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.input.serve_config import parse_literal
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, messages

QWEN = {"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "num_attention_heads": 28,
        "max_position_embeddings": 32768}
QWEN_VL = {"model_type": "qwen2_vl", "architectures": ["Qwen2VLForConditionalGeneration"],
           "num_attention_heads": 28, "max_position_embeddings": 32768, "vision_config": {"depth": 32}}


class MultimodalLimitOnTextModel(Rule):
    """
    ## What it does
    Flags `--limit-mm-per-prompt` on a text-only model (config.json names no vision or audio
    parts) where `ModelConfig._init_multimodal_config` refuses it (0.6.3-0.9; the guard is
    read from the copy; checked from 0.8, whose value is JSON). Later releases ignore the setting for text models.

    ## Why is this bad?
    vLLM refuses to build its config: "`limit_mm_per_prompt` is only supported for multimodal
    models."

    ## Fix
    Remove `--limit-mm-per-prompt`, or serve the multimodal model you meant.
    """

    code = "PO317"
    name = "multimodal-limit-on-text-model"
    severity = "error"
    versions = ">=0.8,<0.10"   # the guard is in 0.6.3-0.9.2; JSON values from 0.8 (0.7.3: key=value)
    vllm_message = messages.MULTIMODAL_LIMIT_ON_TEXT_MODEL
    needs = Needs(model=True)
    VALID = [
        Example("model: org/qwen-vl\nargs:\n  limit-mm-per-prompt: '{\"image\": 2}'\n", model=QWEN_VL,
                vllm="0.8.5"),
        Example("model: org/qwen\nargs:\n  max-model-len: 4096\n", model=QWEN, vllm="0.8.5"),
    ]
    INVALID = [
        Example("model: org/qwen\nargs:\n  limit-mm-per-prompt: '{\"image\": 2}'\n", model=QWEN, vllm="0.8.5",
                at=(3, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        model = cfg.model_facts
        found = inputs.setting(cfg, "limit_mm_per_prompt")
        if model is None or model.multimodal or found is None or facts.guards.limit_mm_needs_multimodal is None:
            return
        value = parse_literal(found.value) if isinstance(found.value, str) and found.value.startswith("{") \
            else found.value
        if not value:
            return
        yield self.diagnostic(
            cfg, found, f"limit-mm-per-prompt on a text-only model: vLLM {facts.version} refuses to start",
            explanation="the model's config.json names no vision or audio parts",
            fields=("limit_mm_per_prompt",),
            fix="remove --limit-mm-per-prompt")
