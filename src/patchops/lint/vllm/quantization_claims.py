"""Predict which override `_verify_quantization` lets claim a quantized checkpoint.

vLLM asks the methods of its `overrides` list in order (facts: `quantization_limits[m]
["override_rank"]`) and the first whose `override_quantization_method` answers runs the
checkpoint: a serialized format ("claims_format") or a conversion the GPU and the checkpoint
allow ("converts", read by facts_extract/quantization_overrides.py). An override this
reading does not understand ends the prediction: None, never a guess.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from patchops.lint.facts.groups import QuantizationLimits
from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.vllm import inputs

QUANTIZATION = "quantization"
ALLOW_DEPRECATED = "allow_deprecated_quantization"

def checkpoint_quantization(cfg: ReadConfig) -> Dict[str, Any]:
    """Return config.json's `quantization_config` ({} when the model has none or is unknown)."""
    model = cfg.model_facts
    found = model.text_config.get("quantization_config") if model is not None else None
    return found if isinstance(found, dict) else {}


def claiming_override(cfg: ReadConfig, facts: Facts) -> Optional[str]:
    """Return the override method that claims the checkpoint, None when none does or it is unclear.

    Without `--quantization` every override may claim; with it, only the override of that
    very name is followed (the others' accepted user choices are not read).
    """
    checkpoint = checkpoint_quantization(cfg)
    if not checkpoint or inputs.is_cuda_like(cfg) is False:
        return None
    asked = inputs.setting(cfg, "quantization")
    stated = str(asked.value).lower() if asked is not None and isinstance(asked.value, str) else None
    limits = facts.quantization_limits
    ranked = sorted((entry.override_rank, name) for name, entry in limits.items() if entry.override_rank is not None)
    if stated is not None:
        ranked = [(rank, name) for rank, name in ranked if name == stated]
    cc = inputs.compute_capability(cfg)
    for _, name in ranked:
        claims = _claims(limits[name], checkpoint, cc)
        if claims is None:
            return None
        if claims:
            return name
    return None


def _claims(entry: QuantizationLimits, checkpoint: Dict[str, Any], cc: Optional[Tuple[int, int]]) -> Optional[bool]:
    """Whether one override claims the checkpoint on this GPU (None: the facts cannot tell)."""
    formats = entry.claims_format
    if formats:
        return any(bool(checkpoint.get(key)) if wanted is True else checkpoint.get(key) == wanted
                   for key, wanted in formats.items())
    converts = entry.converts
    if not converts:
        return None
    if any(checkpoint.get(key) is None for key in converts.keys or ()):
        return False      # the check returns False when a key it needs is missing
    method = converts.quant_method
    if method is not None and str(checkpoint.get("quant_method", "")).lower() != method:
        return False
    if converts.bits_sym is None or converts.group_sizes is None:
        return None
    if (checkpoint.get("bits"), checkpoint.get("sym")) not in converts.bits_sym \
            or checkpoint.get("group_size") not in converts.group_sizes:
        return False
    # The conversion's GPU gate is the class's get_min_capability() (gptq_bitblas compares it;
    # gptq_marlin's query_marlin_supported_quant_types refuses below the same 80).
    needed = entry.min_capability
    if not isinstance(needed, int) or cc is None:
        return None
    return cc[0] * 10 + cc[1] >= needed

