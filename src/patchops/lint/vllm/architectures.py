"""What a copy's model registry makes of the model's config.json `architectures`.

vLLM looks the names up in `vllm/model_executor/models/registry.py`
(`_ModelRegistry.inspect_model_cls`: the first registered name wins) and reads the class's
interfaces; a name no longer registered is refused by `_raise_for_unsupported`. The lists are
the copy's facts (`Facts.architectures`, read by facts_extract/architectures.py); this module
only asks them.
"""

from __future__ import annotations

from typing import Optional, Tuple

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.vllm.inputs import bool_value, value


def architectures(cfg: ReadConfig) -> Tuple[str, ...]:
    """Return config.json's `architectures`, () when the model's config was not read."""
    return cfg.model_facts.architectures if cfg.model_facts is not None else ()


def shown(cfg: ReadConfig) -> str:
    """Return the architectures as vLLM formats `model_config.architectures` (a Python list)."""
    return str(list(architectures(cfg)))


def resolved(cfg: ReadConfig, facts: Facts) -> Optional[str]:
    """Return the architecture vLLM inspects: the first the copy registers; None when none is known."""
    registered = set(facts.architectures.registered or ())
    return next((a for a in architectures(cfg) if a in registered), None)


def has(cfg: ReadConfig, facts: Facts, interface: str) -> bool:
    """Return whether the inspected architecture is in the facts list `interface` ("v0_only", "no_pp", ...)."""
    arch = resolved(cfg, facts)
    return arch is not None and arch in facts.architectures.names(interface)


def removed_message(cfg: ReadConfig, facts: Facts) -> Optional[Tuple[str, str]]:
    """Return (architecture, vLLM's ValueError) when the copy names every architecture as removed.

    `_raise_for_unsupported` (0.11+): with none of them registered, the first that
    `_PREVIOUSLY_SUPPORTED_MODELS` or `_OOT_SUPPORTED_MODELS` names is refused with its message.
    """
    names = architectures(cfg)
    if not names or resolved(cfg, facts) is not None:
        return None
    previous = facts.architectures.previously_supported or {}
    plugins = facts.architectures.out_of_tree or {}
    for arch in names:
        if arch in previous:
            return arch, (f"Model architecture {arch} was supported in vLLM until v{previous[arch]}, and is "
                          "not supported anymore. Please use an older version of vLLM if you want to use "
                          "this model architecture.")
        if arch in plugins:
            return arch, (f"Model architecture {arch} is not supported in-tree anymore. Please install the "
                          f"plugin at {plugins[arch]} if you want to use this model architecture.")
    return None


def unknown_model_type(cfg: ReadConfig, facts: Facts) -> Optional[str]:
    """Return config.json's `model_type` when the transformers beside the copy cannot build its config.

    `get_config` builds the model types of vLLM's own config classes itself and hands the rest
    to AutoConfig, which refuses a type missing from its mapping unless `--trust-remote-code`
    loads the class `auto_map` names. None when the copy's transformers is not known, or
    `--hf-overrides`, `--hf-config-path` or a Mistral-format config take another path.
    """
    model = cfg.model_facts
    if model is None or model.remote_config:
        return None  # the repo's own class with --trust-remote-code, else remote_code_refused()
    return _unknown_kind(cfg, facts)


def remote_code_refused(cfg: ReadConfig, facts: Facts) -> Optional[str]:
    """Return the `model_type` of an `auto_map` config AutoConfig refuses without `--trust-remote-code`.

    transformers' resolve_trust_remote_code refuses remote code only when it has no class of
    its own for the type (has_local_code); vLLM's own config classes never reach AutoConfig.
    """
    model = cfg.model_facts
    if model is None or not model.remote_config or bool_value(cfg, "trust_remote_code"):
        return None
    return _unknown_kind(cfg, facts)


def _unknown_kind(cfg: ReadConfig, facts: Facts) -> Optional[str]:
    model, known = cfg.model_facts, facts.transformers.model_types
    if model is None or not model.config_model_type or not known:
        return None
    if value(cfg, "config_format") == "mistral" or any(
            value(cfg, name) is not None for name in ("hf_overrides", "hf_config_path")):
        return None
    own = facts.architectures.config_classes or ()
    kind = model.config_model_type
    return None if kind in known or kind in own else kind


def interleaved_window(cfg: ReadConfig, facts: Facts) -> bool:
    """Return whether the model's sliding window is interleaved with full attention layers.

    vLLM keeps such a window out of the cache config (the scheduler treats the model as full
    attention): 0.8.5 for the copy's `interleaved_attn_models` or a per-layer window list,
    later releases when `layer_types` holds both kinds (`is_interleaved`). A config.json
    without `layer_types` gets them from transformers at load (Gemma 2); such a checkpoint says
    so itself with `"cache_implementation": "hybrid"` (sliding and full layers in one cache).
    """
    model = cfg.model_facts
    if model is None:
        return False
    kinds = model.text_config.get("layer_types")
    if isinstance(kinds, list) and {"full_attention", "sliding_attention"} <= set(kinds):
        return True
    if model.text_config.get("cache_implementation") == "hybrid":
        return True
    return isinstance(model.text_config.get("sliding_window"), list) or \
        model.model_type in (facts.architectures.interleaved or ())
