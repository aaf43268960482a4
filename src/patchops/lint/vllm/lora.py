"""Whether the model a launch serves with LoRA adapters can take them.

LoRA needs a model class that implements `SupportsLoRA` (the copy's facts:
`Facts.architectures.no_lora`, the registered classes that surely lack it, read by
extract/model_registry.py). Until 0.32 the worker asks `supports_lora(model)` once it has
built the model (V0's model_runner.py asserts it, V1's lora_model_runner_mixin.py raises a
ValueError) with the class's name; from 0.33 `LoRAConfig.verify_with_model_config` refuses
while the engine config is built, naming the architecture and the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.vllm import architectures, releases
from patchops.lint.vllm.inputs import bool_value, value

WORKER_MESSAGE = "{cls} does not support LoRA yet."   # 0.6-0.32, the worker, every engine
CONFIG_MESSAGE = ("LoRA is not supported for {arch} ({model}). Supported models implement the "
                  "`SupportsLoRA` interface. Run this model without `enable_lora`.")   # 0.33+


@dataclass(frozen=True)
class LoraRefusal:
    """The architecture vLLM inspects, its class, and vLLM's refusal of LoRA on it."""

    architecture: str
    cls: str
    stage: str          # "config" or "later"
    message: str


def stage(version) -> str:
    """Return when vLLM `version` refuses LoRA on a class without it: "config" from 0.33."""
    return "config" if releases.release(version) >= releases.LORA_AT_CONFIG else "later"


def refusal(cfg: ReadConfig, facts: Facts) -> Optional[LoraRefusal]:
    """Return vLLM's refusal when the launch enables LoRA on a class without SupportsLoRA.

    None without `--enable-lora`, when the copy's facts do not name the inspected architecture's
    class as lacking it, or with `--model-impl transformers` (the Transformers backend's
    classes take LoRA).
    """
    if not bool_value(cfg, "enable_lora"):
        return None
    if str(value(cfg, "model_impl") or "auto").lower() == "transformers":
        return None
    arch = architectures.resolved(cfg, facts)
    cls = (facts.architectures.no_lora or {}).get(arch) if arch else None
    if cls is None:
        return None
    when = stage(facts)
    model = cfg.model.value if cfg.model is not None else ""
    text = CONFIG_MESSAGE.format(arch=arch, model=model) if when == "config" else WORKER_MESSAGE.format(cls=cls)
    return LoraRefusal(arch, cls, when, text)
