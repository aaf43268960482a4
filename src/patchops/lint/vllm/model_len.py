"""The maximum length a vLLM release derives from a model's config.json.

`_get_and_verify_max_len` (config.py; config/model.py from 0.11) takes the smallest of a list
of config.json keys, scales it by the rope-scaling factor except for some rope types, caps it
by a sliding window that `--disable-sliding-window` turns off, and refuses a larger
`max_model_len` unless VLLM_ALLOW_LONG_MAX_MODEL_LEN is set. The key list and rope handling
changed across releases and are read from the copy (`facts.max_len`, facts_extract/max_len.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

from patchops.lint.facts.groups import MaxLen
from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.input.model_config import ModelFacts
from patchops.lint.vllm import inputs
from patchops.lint.vllm.prediction import Prediction

ALLOW_LONG_MAX_MODEL_LEN_ENV = "VLLM_ALLOW_LONG_MAX_MODEL_LEN"

# Used when facts hold no derivation (an unreadable copy): the list every release 0.8.5+ has.
FALLBACK_LEN_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length",
                     "model_max_length", "max_target_positions", "max_sequence_length",
                     "max_seq_length", "seq_len")


@dataclass(frozen=True)
class DerivedLen:
    """vLLM's derived maximum length: the value, the key it came from, and its message form."""

    value: Union[int, float]
    key: Optional[str]
    model_max_length: Optional[int]

    @property
    def shown(self) -> str:
        """Render as vLLM's f-string does (`16384.0` after a float rope factor)."""
        return str(self.value)


DEFAULT_MAX_LEN = 2048  # _get_and_verify_max_len, when config.json names no length


def derived_max_len(model: ModelFacts, max_len: MaxLen, *,
                    disable_sliding_window: bool = False) -> Optional[DerivedLen]:
    """Return what `_get_and_verify_max_len` derives for `model`, or None for "no keys".

    `max_len` is the copy's `facts.max_len` (keys, unscaled rope types, YaRN base, whether
    tokenizer_config's model_max_length counts). None means vLLM would assume 2048 only when
    the user gave no length, and accept any length the user gives.
    """
    cfg = model.text_config
    keys = max_len.keys or FALLBACK_LEN_KEYS
    derived: Union[int, float] = float("inf")
    key: Optional[str] = None
    for name in keys:
        value = cfg.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if value < derived:
                key = name
            derived = min(derived, value)
    explicit = cfg.get("model_max_length")
    if explicit:  # Command-R / Cohere: model_max_length wins outright
        key, derived = "model_max_length", explicit
    window = model.sliding_window
    if disable_sliding_window and window is not None and window < derived:
        key, derived = "sliding_window", window
    # ModelConfig.get_and_verify_max_len passes tokenizer_config only for pooling models (0.9),
    # with absolute position embeddings (0.10+): the BERT family; a generative model's
    # tokenizer (model_max_length 1e30 in many) never counts.
    if max_len.tokenizer_max_length and model.tokenizer_max_length is not None \
            and cfg.get("position_embedding_type") == "absolute":
        derived = min(derived, model.tokenizer_max_length)
    if derived == float("inf"):
        return None
    ropes = model.rope_parameters()
    if not ropes and max_len.per_layer_rope and "rope_theta" in cfg:
        ropes = [{"rope_type": "default"}]   # transformers 5 standardises rope_theta into rope_parameters
    if ropes and "gemma3" not in model.model_type:
        unscaled = set(max_len.unscaled_rope_types or ())
        factor: Union[int, float] = 1.0
        base = derived
        for rope in ropes:
            rope_type = rope.get("rope_type") or rope.get("type") or "default"
            if rope_type in unscaled:
                continue
            factor = rope.get("factor", factor) or 1.0
            if rope_type == "yarn" and max_len.yarn_base and \
                    "original_max_position_embeddings" in rope:
                base = rope["original_max_position_embeddings"]
        if max_len.per_layer_rope or \
                any((r.get("rope_type") or r.get("type") or "default") not in unscaled for r in ropes):
            derived = base * factor
    return DerivedLen(value=derived, key=key, model_max_length=cfg.get("model_max_length"))


def sliding_window_off_refused(model: ModelFacts, max_len: MaxLen) -> Optional[str]:
    """Return the rope type for which `--disable-sliding-window` makes the derivation raise, or None.

    0.6.3-0.11 `_get_and_verify_max_len`: a rope scaling it applies (a type outside the
    unscaled ones; Gemma 3 is exempt) with the sliding window disabled is NotImplementedError.
    """
    if not max_len.sliding_window_off_refused_with_rope or "gemma3" in model.model_type:
        return None
    unscaled = max_len.unscaled_rope_types or ()
    for rope in model.rope_parameters():
        kind = rope.get("rope_type") or rope.get("type")
        if kind and kind not in unscaled:
            return str(kind)
    return None


def max_model_len(cfg: ReadConfig, facts: Facts) -> Prediction:
    """Return the max_model_len vLLM runs with: the stated one, else what it derives from config.json.

    Unset, `_get_and_verify_max_len` takes `int(derived)`; None when neither is known (no
    config.json, or no length key in it).
    """
    stated = inputs.max_model_len(cfg)
    if stated.value is not None or cfg.model_facts is None or inputs.setting(cfg, "max_model_len") is not None:
        return stated   # a stated value below 1 is not replaced by the derived length (0.10 keeps -1)
    derived = derived_max_len(cfg.model_facts, facts.max_len,
                              disable_sliding_window=bool(inputs.bool_value(cfg, "disable_sliding_window")))
    if derived is None or derived.value == float("inf"):
        return Prediction(DEFAULT_MAX_LEN, f"max_model_len {DEFAULT_MAX_LEN} (vLLM's assumption: the model's "
                          "config.json has none of the length keys)")
    return Prediction(int(derived.value), f"max_model_len {int(derived.value)} (derived from the "
                      f"model's config.json, {derived.key or 'its length keys'})")


def env_flag(value: Optional[str]) -> bool:
    """Read a vLLM boolean env var (VLLM_ALLOW_LONG_MAX_MODEL_LEN): "1" or "true"."""
    return (value or "0").strip().lower() in ("1", "true")
