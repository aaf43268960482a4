"""Whether a multimodal model's vision tower splits its attention heads across TP ranks.

vLLM builds the vision encoder of these architectures with tensor-parallel layers
(QKVParallelLinear, or Qwen2-VL's own `dist_utils.divide(num_heads, world_size)`), so each
rank takes heads / tensor_parallel_size heads; `divide` (vllm/distributed/utils.py) asserts
"{} is not divisible by {}" while the worker builds the model, after the engine config.
PO701 checks the language model's heads at config time; nothing checks the tower's before.
Every release from 0.6.3 to 0.33 shards these towers this way: qwen2_vl.py and qwen2_5_vl.py
`Qwen2*VisionAttention`, clip.py / siglip.py / pixtral.py (LLaVA's towers, through
`init_vision_tower_for_llava`), mllama.py `MllamaVisionSdpaAttention`, mllama4.py
`Llama4VisionAttention`. 0.30's `is_vit_use_data_parallel(num_heads)` falls back to a
replicated tower when the heads do not divide, but none of these files passes num_heads (0.33).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Tuple

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.input.serve_config import parse_literal
from patchops.lint.facts.model import Facts
from patchops.lint.vllm import architectures
from patchops.lint.vllm.inputs import bool_value, value

MESSAGE = "{} is not divisible by {}"   # vllm/distributed/utils.py ensure_divisibility, every release

# The architecture (registry key) -> the vision_config key its tower reads the head count from
# and transformers' default when config.json leaves it out (None: not judged without it).
# Qwen2VLVisionConfig and Qwen2_5_VLVisionConfig default num_heads to 16; the LLaVA family's
# CLIP / SigLIP / Pixtral towers read num_attention_heads; Mllama's vision config calls it
# attention_heads (mllama.py: `self.num_heads = config.attention_heads`).
TOWERS: Mapping[str, Tuple[str, Optional[int]]] = {
    "Qwen2VLForConditionalGeneration": ("num_heads", 16),
    "Qwen2_5_VLForConditionalGeneration": ("num_heads", 16),
    "LlavaForConditionalGeneration": ("num_attention_heads", None),
    "LlavaNextForConditionalGeneration": ("num_attention_heads", None),
    "LlavaNextVideoForConditionalGeneration": ("num_attention_heads", None),
    "LlavaOnevisionForConditionalGeneration": ("num_attention_heads", None),
    "MllamaForConditionalGeneration": ("attention_heads", None),
    "Llama4ForConditionalGeneration": ("num_attention_heads", None),
}


@dataclass(frozen=True)
class VisionSplit:
    """A vision tower whose heads `tp` does not divide."""

    architecture: str
    key: str               # the vision_config key read
    heads: int
    stated: bool           # config.json states the count (else transformers' default)

    def message(self, tp: int) -> str:
        return MESSAGE.format(self.heads, tp)


def vision_heads(cfg: ReadConfig, facts: Facts) -> Optional[VisionSplit]:
    """Return the inspected architecture's vision tower and its head count, when vLLM shards it.

    None when the architecture is not one of TOWERS (or the copy does not register it), the
    count is unknown, or the launch keeps the tower off tensor parallelism: the Transformers
    backend (`--model-impl transformers`), `--mm-encoder-tp-mode data` (0.10.2+) or 0.9's
    `--enable-multimodal-encoder-data-parallel`, a text-only launch (`--language-model-only`,
    or `--limit-mm-per-prompt` at 0 for every modality, which skips the tower in later releases).
    """
    model = cfg.model_facts
    arch = architectures.resolved(cfg, facts)
    if model is None or arch not in TOWERS:
        return None
    if str(value(cfg, "model_impl") or "auto").lower() == "transformers" or \
            str(value(cfg, "mm_encoder_tp_mode") or "weights").lower() == "data" or \
            bool_value(cfg, "enable_multimodal_encoder_data_parallel") or \
            bool_value(cfg, "language_model_only") or _no_media(value(cfg, "limit_mm_per_prompt")):
        return None
    key, default = TOWERS[arch]
    found = model.vision_config.get(key)
    if isinstance(found, int) and not isinstance(found, bool) and found > 0:
        return VisionSplit(arch, key, found, True)
    return VisionSplit(arch, key, default, False) if default is not None and key not in model.vision_config \
        else None


def breach(cfg: ReadConfig, facts: Facts, tp: int) -> Optional[VisionSplit]:
    """Return the vision tower `tp` cannot split, None when it can (or is not known)."""
    if tp < 2:
        return None
    found = vision_heads(cfg, facts)
    return found if found is not None and found.heads % tp else None


def _no_media(limits: Any) -> bool:
    """Whether `--limit-mm-per-prompt` allows no item of any modality (or cannot be read)."""
    if limits is None:
        return False
    if isinstance(limits, str):
        limits = parse_literal(limits)
    if not isinstance(limits, dict):
        return True    # not read here (key=value pairs of 0.6): not judged
    counts = [v.get("count") if isinstance(v, dict) else v for v in limits.values()]
    return bool(counts) and all(c == 0 for c in counts)
