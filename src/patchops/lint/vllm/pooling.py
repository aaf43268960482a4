"""What a pooling model's stated pooler config decides: whether chunked prefill is on by default.

A pooling runner's unset `enable_chunked_prefill` follows its pooling type. 0.10.x
(`EngineArgs._set_default_args_v1`, engine/arg_utils.py 0.10.1.1:1596-1608): on only for
"last" pooling of a causal model (config.json's `is_causal`, default true). From 0.12
(`ModelConfig.is_chunked_prefill_supported`, config/model.py 0.32.0:2175-2210): off for MEAN
or CLS sequence pooling and STEP token pooling of a decoder, and for every encoder-only model.
The pooling type the user states wins over the checkpoint's and the class's default (those
only fill unset fields), so a stated one is certain; an unstated one depends on the model class.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.input.serve_config import parse_literal
from patchops.lint.facts.model import Facts
from patchops.lint.vllm import architectures
from patchops.lint.vllm.inputs import value
from patchops.lint.vllm.releases import CHUNKED_PREFILL_HONOURED, V1_POOLING, release

POOLER_FLAGS = ("pooler_config", "override_pooler_config")   # 0.11+, before


def stated_pooler_config(cfg: ReadConfig) -> Dict[str, Any]:
    """Return the pooler config the launch states as a mapping ({} when none or not a mapping)."""
    for name in POOLER_FLAGS:
        raw = value(cfg, name)
        raw = parse_literal(raw) if isinstance(raw, str) else raw
        if isinstance(raw, dict):
            return raw
    return {}


def _stated_type(stated: Dict[str, Any], *keys: str) -> Optional[str]:
    for key in keys:
        found = stated.get(key)
        if isinstance(found, str):
            return found.upper()
    return None


def chunked_prefill_by_pooling(cfg: ReadConfig, facts: Facts) -> Optional[bool]:
    """Return the chunked prefill a pooling runner defaults to from its stated pooling type.

    None when the launch states no pooling type, the model's attention type could change the
    answer (hybrid or attention-free classes), or V1 runs no pooling model (before 0.10).
    """
    if release(facts) < V1_POOLING:
        return None
    stated = stated_pooler_config(cfg)
    model = cfg.model_facts
    causal = model is None or model.text_config.get("is_causal", True) is not False
    if release(facts) < CHUNKED_PREFILL_HONOURED:
        kind = _stated_type(stated, "pooling_type")
        return None if kind is None else (kind == "LAST" and causal)
    if architectures.has(cfg, facts, "hybrid") or architectures.has(cfg, facts, "attention_free"):
        return None
    seq = _stated_type(stated, "seq_pooling_type", "pooling_type")
    tok = _stated_type(stated, "tok_pooling_type", "pooling_type")
    if seq in ("MEAN", "CLS") or tok == "STEP" or not causal:
        return False
    return None
