"""PO207 max-model-len-above-derived."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, messages
from patchops.lint.vllm.model_len import ALLOW_LONG_MAX_MODEL_LEN_ENV
from patchops.lint.vllm.model_len import derived_max_len, env_flag

QWEN_7B = {"model_type": "qwen2", "num_attention_heads": 28, "num_key_value_heads": 4,
           "max_position_embeddings": 32768, "sliding_window": 131072, "use_sliding_window": False}
LLAMA2_YARN = {"model_type": "llama", "num_attention_heads": 32, "max_position_embeddings": 4096,
               "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                                "original_max_position_embeddings": 4096}}


class MaxModelLenAboveDerived(Rule):
    """
    ## What it does
    Flags a `max_model_len` above the maximum vLLM derives from the model's config.json: the
    smallest of its length keys (`max_position_embeddings`, `n_positions`, `seq_length`, ...),
    times the rope-scaling factor (not for llama3/longrope rope types, nor YaRN from 0.33),
    capped by a sliding window that `--disable-sliding-window` turns off. The key list and
    rope handling are read from the vLLM copy (`_get_and_verify_max_len`).

    ## Why is this bad?
    vLLM refuses to start: "User-specified max_model_len (65536) is greater than the derived
    max_model_len (max_position_embeddings=32768 or model_max_length=None in model's
    config.json)." With `VLLM_ALLOW_LONG_MAX_MODEL_LEN=1` it only warns, and positions past
    the model's training length produce garbage or NaNs.

    ## Fix
    Lower max_model_len to the derived maximum, or use a rope-scaled variant of the model.
    Set VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 only if you know the model extrapolates.
    """

    code = "PO207"
    name = "max-model-len-above-derived"
    severity = "error"
    versions = ">=0"
    vllm_message = messages.MAX_MODEL_LEN_ABOVE_DERIVED
    needs = Needs(model=True)
    VALID = [
        Example("model: org/qwen\nargs:\n  max-model-len: 32768\n", model=QWEN_7B),
        # YaRN x4 on 0.8.5: 4096 * 4.0
        Example("model: org/llama\nargs:\n  max-model-len: 16384\n", model=LLAMA2_YARN),
        Example("model: org/qwen\nargs:\n  max-model-len: auto\n", vllm="0.33.0", model=QWEN_7B),
    ]
    INVALID = [
        Example("model: org/qwen\nargs:\n  max-model-len: 32769\n", model=QWEN_7B, at=(3, 3)),
        # 0.33 no longer scales YaRN: max_position_embeddings is taken as already scaled.
        Example("model: org/llama\nargs:\n  max-model-len: 16384\n", vllm="0.33.0",
                model=LLAMA2_YARN, at=(3, 3)),
        # The env var turns the error into vLLM's warning.
        Example("model: org/qwen\nenv:\n  VLLM_ALLOW_LONG_MAX_MODEL_LEN: '1'\nargs:\n"
                "  max-model-len: 65536\n", vllm="0.10.1.1", model=QWEN_7B, at=(5, 3), severity="warning"),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        model = cfg.model_facts
        found = inputs.setting(cfg, "max_model_len")
        user = inputs.to_int(found.value) if found is not None else None
        if model is None or user is None or user <= 0:   # unset, or 0.33's auto (-1)
            return
        derived = derived_max_len(model, facts.max_len,
                                  disable_sliding_window=bool(inputs.bool_value(cfg, "disable_sliding_window")))
        if derived is None or user <= derived.value:
            return
        if derived.model_max_length is not None and user <= derived.model_max_length:
            return
        allowed = env_flag(inputs.env_value(cfg, ALLOW_LONG_MAX_MODEL_LEN_ENV))
        vllm_text = messages.MAX_MODEL_LEN_ABOVE_DERIVED.format(user=user, key=derived.key, derived=derived.shown,
                                        model_max_length=derived.model_max_length)
        limit = int(derived.value)
        if allowed:
            message = f"max_model_len {user} > model maximum {derived.shown} ({derived.key})"
            explanation = (f"vLLM {facts.version} accepts it only because {ALLOW_LONG_MAX_MODEL_LEN_ENV} is set, "
                           "and positions past the maximum give wrong outputs")
        else:
            message = f"max_model_len {user} > model maximum {derived.shown} ({derived.key})"
            explanation = f"vLLM {facts.version} will refuse to start"
        yield self.diagnostic(cfg, found, message, explanation=explanation, fields=("max_model_len",),
                              severity="warning" if allowed else None,
                              fix=f"lower max-model-len to {limit}", vllm_message=vllm_text)
