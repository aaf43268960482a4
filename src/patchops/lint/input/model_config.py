"""What a model's config.json says, read without transformers.

vLLM reads `config.json` through transformers at config time and refuses a launch whose
`tensor_parallel_size` does not divide the attention heads, or whose `max_model_len` exceeds
the length it derives from the model (lint/vllm/model_len.py). Which file an input's model is
read from is lint/input/model_source.py's choice: a local folder, a Hugging Face cache snapshot
(`$HF_HOME/hub/models--ORG--NAME/snapshots/*/config.json`), `lint --model-config`, or the Hub.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from patchops.core.errors import LintInputError

# transformers' attribute_map aliases for the attention head count (GPT-2, MPT, Falcon, ...).
HEAD_KEYS = ("num_attention_heads", "n_head", "n_heads", "num_heads")
KV_HEAD_KEYS = ("num_key_value_heads", "n_head_kv", "num_kv_heads", "multi_query_group_num")
LAYER_KEYS = ("num_hidden_layers", "n_layer", "n_layers", "num_layers")
HIDDEN_KEYS = ("hidden_size", "n_embd", "d_model")
MULTIMODAL_KEYS = ("vision_config", "audio_config", "visual", "vision_tower")
EXPERT_KEYS = ("moe_num_experts", "num_experts", "n_routed_experts", "num_local_experts")


@dataclass(frozen=True)
class ModelFacts:
    """The fields of one model's config.json that vLLM's config-time checks read."""

    path: str                                   # the config.json read
    text_config: Dict[str, Any] = field(default_factory=dict)  # hf_text_config: text_config of a multimodal model, else the whole file
    tokenizer_max_length: Optional[int] = None  # tokenizer_config.json model_max_length, beside config.json
    multimodal: bool = False                    # a vision/audio tower or a nested text config (V0 will not chunk it)
    # config.json carries quantization_config (also of its text_config) or compression_config,
    # which get_quant_config reads before looking for a quantization file beside it.
    quant_config_inline: bool = False
    architectures: Tuple[str, ...] = ()         # config.json `architectures`: the registry key vLLM looks up
    is_encoder_decoder: bool = False            # `is_encoder_decoder` of the file or its text_config
    config_model_type: str = ""                 # the file's own `model_type` (hf_config's, not its text config's)
    remote_config: bool = False                 # `auto_map` names an AutoConfig: trust_remote_code loads the repo's class
    name_or_path: str = ""                      # `_name_or_path`: the model the file was saved from
    vision_config: Dict[str, Any] = field(default_factory=dict)  # the file's `vision_config`: its vision tower

    def _first(self, keys: Sequence[str]) -> Optional[int]:
        for key in keys:
            value = self.text_config.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return None

    @property
    def model_type(self) -> str:
        return str(self.text_config.get("model_type") or "")

    @property
    def num_attention_heads(self) -> Optional[int]:
        return self._first(HEAD_KEYS)

    @property
    def num_key_value_heads(self) -> Optional[int]:
        return self._first(KV_HEAD_KEYS) or self.num_attention_heads

    @property
    def num_hidden_layers(self) -> Optional[int]:
        return self._first(LAYER_KEYS)

    @property
    def hidden_size(self) -> Optional[int]:
        return self._first(HIDDEN_KEYS)

    @property
    def head_size(self) -> Optional[int]:
        explicit = self._first(("head_dim",))
        if explicit:
            return explicit
        heads, hidden = self.num_attention_heads, self.hidden_size
        return hidden // heads if heads and hidden else None

    @property
    def num_experts(self) -> int:
        """The first positive expert count, in vLLM's order (_verify_with_expert_parallelism)."""
        for key in EXPERT_KEYS:
            value = self.text_config.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
        return 0

    @property
    def sliding_window(self) -> Optional[int]:
        if self.text_config.get("use_sliding_window") is False:
            return None  # Qwen2: the window is declared but off (get_hf_config_sliding_window)
        window = self.text_config.get("sliding_window")
        if isinstance(window, list):
            window = min((w for w in window if isinstance(w, int)), default=None)
        return window if isinstance(window, int) and not isinstance(window, bool) else None

    @property
    def uses_mla(self) -> bool:
        """DeepSeek-style multi-head latent attention (`kv_lora_rank`): V0 will not chunk it."""
        return self.text_config.get("kv_lora_rank") is not None

    @property
    def quant_method(self) -> Optional[str]:
        """Return config.json's `quantization_config.quant_method` ("awq", "gptq", "fp8"), lower-cased."""
        found = self.text_config.get("quantization_config")
        method = found.get("quant_method") if isinstance(found, dict) else None
        return str(method).lower() if method else None

    @property
    def dtype(self) -> Optional[str]:
        value = self.text_config.get("torch_dtype") or self.text_config.get("dtype")
        return str(value) if value else None

    def rope_parameters(self) -> List[Dict[str, Any]]:
        """Return the rope dicts (`rope_scaling`, or 0.33's `rope_parameters`, per layer type)."""
        rope = self.text_config.get("rope_parameters") or self.text_config.get("rope_scaling")
        if not isinstance(rope, dict) or not rope:
            return []
        if all(isinstance(v, dict) for v in rope.values()):
            return [v for v in rope.values() if v]
        return [rope]


def find_model_config(model: str, env: Mapping[str, str], base_dirs: Sequence[Path] = (),
                      cached: bool = True) -> Optional[Path]:
    """Return the config.json vLLM would read for `model`, if it is on this machine.

    A local folder (as given, or relative to `base_dirs`), else (`cached`) the newest snapshot
    in the Hugging Face cache ($HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub).
    """
    candidates = [Path(model).expanduser()] + [Path(b) / model for b in base_dirs]
    for folder in candidates:
        try:
            if (folder / "config.json").is_file():
                return folder / "config.json"
        except OSError:  # a name no folder can have (too long): not a local model
            continue
    if not cached or "/" not in model or model.startswith(("/", ".", "~")):
        return None
    snapshots = hub_snapshots(model, env)
    try:
        found = sorted((p / "config.json" for p in snapshots.iterdir() if (p / "config.json").is_file()),
                       key=lambda p: p.stat().st_mtime)
    except OSError:
        return None
    return found[-1] if found else None


def hub_snapshots(repo_id: str, env: Mapping[str, str]) -> Path:
    """Return the Hugging Face cache's snapshots folder of `repo_id` ($HF_HUB_CACHE, else
    $HF_HOME/hub, else ~/.cache/huggingface/hub), whether or not it exists."""
    hub = env.get("HF_HUB_CACHE") or os.path.join(
        env.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface"), "hub")
    return Path(hub) / ("models--" + repo_id.replace("/", "--")) / "snapshots"


def launch_environment(cfg: Any) -> Dict[str, str]:
    """Return the environment the launch runs in: its own `env:`/prefixes over this process's."""
    env = dict(os.environ)
    env.update({name: str(s.value) for name, s in cfg.env.items()})
    return env


def read_model_facts(path: Path) -> ModelFacts:
    """Read a config.json (and a tokenizer_config.json beside it); LintInputError when unreadable."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise LintInputError(f"{path}: cannot read the model config: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise LintInputError(f"{path}: the model config is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise LintInputError(f"{path}: the model config must be a JSON object")
    tokenizer_len = None
    try:
        tok = json.loads((Path(path).parent / "tokenizer_config.json").read_text(encoding="utf-8"))
        value = tok.get("model_max_length") if isinstance(tok, dict) else None
        if isinstance(value, int) and not isinstance(value, bool):
            tokenizer_len = value
    except (OSError, ValueError):
        pass
    return model_facts_from_dict(data, str(path), tokenizer_len)


def model_facts_from_dict(data: Dict[str, Any], path: str = "config.json",
                          tokenizer_max_length: Optional[int] = None) -> ModelFacts:
    """Build ModelFacts from a parsed config.json (the text config of a multimodal model)."""
    text = data
    for nested in ("thinker_config", "text_config"):   # get_hf_text_config
        inner = text.get(nested)
        if isinstance(inner, dict):
            text = inner.get("text_config", inner) if nested == "thinker_config" else inner
            if isinstance(text, dict) and "model_type" not in text and "model_type" in data:
                text = dict(text, model_type=data["model_type"])
    architectures = data.get("architectures") if isinstance(data.get("architectures"), list) else []
    multimodal = text is not data or any(key in data for key in MULTIMODAL_KEYS) or any(
        isinstance(a, str) and ("ConditionalGeneration" in a or "VL" in a) for a in architectures)
    inline = any(isinstance(d, dict) and (d.get("quantization_config") is not None)
                 for d in (data, data.get("text_config"))) or data.get("compression_config") is not None
    # transformers_utils/config.py is_encoder_decoder: the file's flag, or its text config's.
    enc_dec = any(isinstance(d, dict) and d.get("is_encoder_decoder") is True
                  for d in (data, data.get("text_config")))
    return ModelFacts(path=path, text_config=dict(text), tokenizer_max_length=tokenizer_max_length,
                      multimodal=multimodal, quant_config_inline=inline,
                      architectures=tuple(a for a in architectures if isinstance(a, str)),
                      is_encoder_decoder=enc_dec, config_model_type=str(data.get("model_type") or ""),
                      remote_config=isinstance(data.get("auto_map"), dict) and "AutoConfig" in data["auto_map"],
                      name_or_path=str(data.get("_name_or_path") or ""),
                      vision_config=dict(data["vision_config"]) if isinstance(data.get("vision_config"), dict)
                      else {})


def with_launch_overrides(model: ModelFacts, cfg: Any) -> ModelFacts:
    """Return `model` as the launch changes it: `--hf-overrides` keys, then `--rope-scaling`.

    vLLM applies both to the text config before it derives max_model_len (ModelConfig's
    hf_overrides; 0.8.5-0.10 also turn --rope-scaling into an override), so a length the
    overrides allow is not refused.
    """
    from patchops.lint.input.serve_config import parse_literal

    merged = dict(model.text_config)
    for name in ("hf_overrides", "rope_scaling"):
        found = cfg.args.get(name)
        value = parse_literal(found.value) if found is not None and isinstance(found.value, str) \
            else getattr(found, "value", None)
        if not isinstance(value, dict) or not value:
            continue
        merged.update(value if name == "hf_overrides" else {"rope_scaling": value})
    return model if merged == model.text_config else replace(model, text_config=merged)


def other_model_facts(cfg: Any, model: str) -> Optional[ModelFacts]:
    """Return the facts of another model a launch names (a speculative draft), found as the
    served model is; the served model's own facts when it is the same name. None when absent
    or unreadable: a draft's config is never the input being linted."""
    if cfg.model is not None and cfg.model.value == model:
        return cfg.model_facts
    found = _find_for_launch(cfg, model)
    try:
        return read_model_facts(found) if found is not None else None
    except LintInputError:
        return None


def _find_for_launch(cfg: Any, model: str) -> Optional[Path]:
    base = Path(cfg.path).parent if Path(cfg.path).is_file() else None
    return find_model_config(model, launch_environment(cfg), [base] if base else [])
