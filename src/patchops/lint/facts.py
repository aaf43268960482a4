"""What a vLLM copy says about itself, read with stdlib `ast` (never importing vLLM or libcst).

INTERFACE SKELETON (to be filled in): the dataclasses below are the contract between
facts extraction, shipped facts and the rules. Keep their fields; add helpers freely.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple


@dataclass(frozen=True)
class Flag:
    """One command-line option of `vllm serve`."""

    name: str                        # long option without dashes: "max-model-len"
    dest: str                        # argparse dest == EngineArgs field: "max_model_len"
    action: str = "store"            # "store" | "store_true" | "boolean_optional" | "store_boolean" | "append" | other
    nargs: Optional[str] = None      # "+", "*", "?" or None
    type: Optional[str] = None       # "int" | "float" | "str" | "json" | "human_int" | "bool" | other callable name
    default: Any = None              # resolved literal default, when it could be resolved
    choices: Optional[Tuple[Any, ...]] = None
    aliases: Tuple[str, ...] = ()    # short options, with their dash: ("-tp",)


@dataclass(frozen=True)
class Facts:
    version: str                                        # "0.8.5"
    origin: str                                         # a copy's folder, or "shipped facts from vllm-0.8.5 wheel"
    flags: Dict[str, Flag] = field(default_factory=dict)           # by dest
    field_defaults: Dict[str, Any] = field(default_factory=dict)  # EngineArgs field -> resolved literal default
    attention_env_var: bool = True                      # envs.py still reads VLLM_ATTENTION_BACKEND
    attention_backends: Tuple[str, ...] = ()            # names VLLM_ATTENTION_BACKEND accepts
    multistep_backends: Tuple[str, ...] = ()            # MultiStepModelRunner's allowed list; () when multi-step is gone
    multistep_chunked_backends: Tuple[str, ...] = ()    # the stricter list with chunked prefill
    has_flash_attn: Optional[bool] = None               # vllm/vllm_flash_attn extension present beside the copy
    has_flashinfer: Optional[bool] = None               # a `flashinfer` package importable beside the copy
    hardcoded: Dict[str, str] = field(default_factory=dict)        # EngineArgs keyword -> value source when not self.<kw>
    capture_sizes_default: Optional[Tuple[int, ...]] = None        # a fork's hardcoded default capture sizes
