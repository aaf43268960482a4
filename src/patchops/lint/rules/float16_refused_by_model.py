"""PO603 float16-refused-by-model."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, memory, messages

GEMMA2 = {"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "num_attention_heads": 16,
          "num_key_value_heads": 8, "max_position_embeddings": 8192, "torch_dtype": "float32"}


class Float16RefusedByModel(Rule):
    """
    ## What it does
    Flags an explicit `--dtype half` / `float16` for a model whose config.json `model_type`
    the release refuses in float16 (Gemma 2 and 3, GLM-4, PLaMo 2: numerical instability).
    The model types and reasons are read from the copy (`_FLOAT16_NOT_SUPPORTED_MODELS`,
    vLLM 0.9+); releases without that table run these models in float16.

    ## Why is this bad?
    vLLM stops while it builds the model config: "The model type 'gemma2' does not support
    float16. Reason: Numerical instability. Please use bfloat16 or float32 instead." With
    `dtype: auto` vLLM leaves float16 out of its choice for these models, so only an explicit
    float16 fails (on a GPU without bfloat16, auto picks float32).

    ## Fix
    Use `--dtype bfloat16` (compute capability 8.0+), `--dtype float32`, or `auto`.
    """

    code = "PO603"
    name = "float16-refused-by-model"
    severity = "error"
    versions = ">=0.9"   # where the copy has _FLOAT16_NOT_SUPPORTED_MODELS (0.9.2 has it, 0.8.5 not)
    needs = Needs(optional=("model",))
    vllm_message = messages.FLOAT16_REFUSED_BY_MODEL.format(
        model_type="gemma2", reason="Numerical instability. Please use bfloat16 or float32 instead.")
    VALID = [
        Example("model: /models/gemma-2-9b-it\nargs:\n  dtype: bfloat16\n", vllm="0.10.1.1", model=GEMMA2),
        Example("model: /models/gemma-2-9b-it\nargs:\n  dtype: auto\n", vllm="0.33.0", model=GEMMA2),
        # 0.8.5 has no such table: gemma2 runs in float16
        Example("model: /models/gemma-2-9b-it\nargs:\n  dtype: half\n", vllm="0.8.5", model=GEMMA2),
    ]
    INVALID = [
        Example("model: /models/gemma-2-9b-it\nargs:\n  dtype: half\n", vllm="0.10.1.1", model=GEMMA2,
                at=(3, 3)),
        Example("vllm serve /models/gemma-2-9b-it --dtype float16\n", kind="command", vllm="0.33.0",
                model=GEMMA2, at=(1, 34)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        model, found = cfg.model_facts, inputs.setting(cfg, "dtype")
        refused = facts.architectures.float16_unsupported or {}
        if model is None or found is None or str(found.value).strip().lower() == "auto":
            return
        if memory.served_dtype(str(found.value), model, None) != "float16":
            return
        reason = refused.get(model.config_model_type)
        if reason is None:
            return
        yield self.diagnostic(
            cfg, found, f"dtype {found.value} for a {model.config_model_type!r} model: vLLM {facts.version} "
            "refuses float16 for it",
            explanation=f"the model type is config.json's model_type; vLLM says \"{reason.rstrip('.')}\" "
            "and will not start",
            fields=("dtype",), fix="use --dtype bfloat16 (or float32)",
            vllm_message=messages.FLOAT16_REFUSED_BY_MODEL.format(model_type=model.config_model_type,
                                                                  reason=reason))
