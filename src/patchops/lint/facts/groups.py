"""The fact groups of `Facts` as typed records: what each reader in `lint/extract/` says of a release.

Each record is frozen and maps one-to-one onto the JSON the packs and the facts cache hold:
a field is its JSON key (or the key `KEYS` names), an optional field left None is a key the
reader did not write, so `from_dict(raw).to_dict() == raw` for every shipped release. A group
the reader could not read at all is `{}` in JSON and the record with every field None here,
which is false (as the empty dict was). `from_dict` refuses a key no field names: a reader and
its record that disagree fail the first extraction, not a rule's lookup years later.

The extractors keep building plain dicts (they assemble them key by key, as vLLM's source
yields each piece) and `extract/readers.py` turns each group's dict into its record once, so
this module is the one place a group's shape is written down.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, fields
from enum import Enum
from typing import Any, Callable, ClassVar, Dict, NamedTuple, Optional, Tuple, Union, get_args, get_origin, get_type_hints

from patchops.core.records import StrEnum


class GuardScope(StrEnum):
    """When a config-time guard (extract/guards.py) refuses."""

    ALWAYS = "always"      # whatever the engine
    V0 = "v0"              # only on the V0 engine (its condition tests VLLM_USE_V1, or a `..._v0` function)
    BUILTIN = "builtin"    # chat_template_must_exist: always, but a bare name may be a shipped template


class ModelOptionRefusal(StrEnum):
    """How `vllm serve` refuses a `--model` option (extract/guards.py `model_option_guard`)."""

    ANY = "any"            # whenever an option sets the model (0.6.3-0.7.3)
    TOKEN = "token"        # only the exact token `--model` (0.8.5-0.11)


class ExtraPolicy(StrEnum):
    """What a JSON config flag's class does with a key it has no field for (extract/config_fields.py)."""

    REJECT = "reject"      # pydantic's extra="forbid", or a dataclass __init__'s TypeError
    IGNORE = "ignore"      # dropped without a word


class OracleReport(StrEnum):
    """How the V1 oracle reports a feature (extract/oracle.py REPORTERS)."""

    UNSUPPORTED = "unsupported"    # _raise_or_fallback: V0, or an error with VLLM_USE_V1=1
    EXPERIMENTAL = "experimental"  # _warn_or_fallback
    REFUSED = "refused"            # 0.12+ _raise_unsupported_error: V1 refuses it


class OverGpus(StrEnum):
    """What a world size above the node's GPUs does (extract/parallel.py)."""

    RAY = "ray"            # the executor becomes Ray
    REFUSE = "refuse"      # ParallelConfig raises


# --------------------------------------------------------------------------------------------
# The record machinery: each record's JSON form read from its field annotations, once per class


Load = Callable[[Any], Any]


def _same(value: Any) -> Any:
    return value


def _converters(hint: Any) -> Tuple[Load, Load]:
    """Return (from JSON, to JSON) for a field annotated `hint`."""
    origin, args = get_origin(hint), get_args(hint)
    if origin is Union:   # Optional[X]
        load, dump = _converters(next(a for a in args if a is not type(None)))
        return (lambda v: None if v is None else load(v)), (lambda v: None if v is None else dump(v))
    if origin is tuple:
        load, dump = _converters(args[0])
        if load is _same and dump is _same:
            return tuple, list
        return (lambda v: tuple(load(x) for x in v)), (lambda v: [dump(x) for x in v])
    if origin is dict:
        load, dump = _converters(args[1])
        if load is _same and dump is _same:
            return dict, dict
        return (lambda v: {k: load(x) for k, x in v.items()}), (lambda v: {k: dump(x) for k, x in v.items()})
    if isinstance(hint, type) and issubclass(hint, FactRecord):
        return hint.from_dict, hint.to_dict
    if isinstance(hint, type) and issubclass(hint, Enum):
        return hint, (lambda v: v.value)
    if isinstance(hint, type) and issubclass(hint, tuple) and hasattr(hint, "_fields"):   # a NamedTuple
        return (lambda v: hint(*v)), list
    return _same, _same


_PLANS: Dict[type, Tuple[Tuple[str, str, bool, Load, Load], ...]] = {}


def _plan(cls: type) -> Tuple[Tuple[str, str, bool, Load, Load], ...]:
    """Return (field, JSON key, left out when None, load, dump) per field of record class `cls`."""
    plan = _PLANS.get(cls)
    if plan is None:
        hints = get_type_hints(cls, vars(sys.modules[cls.__module__]))
        plan = tuple((f.name, cls.KEYS.get(f.name, f.name), f.default is None, *_converters(hints[f.name]))
                     for f in fields(cls))
        _PLANS[cls] = plan
    return plan


class FactRecord:
    """A fact group's record: JSON in and out by its fields (see the module docstring)."""

    KEYS: ClassVar[Dict[str, str]] = {}   # field -> JSON key, where the key is no Python name

    def to_dict(self) -> Dict[str, Any]:
        out = {}
        for name, key, optional, _, dump in _plan(type(self)):
            value = getattr(self, name)
            if value is not None or not optional:
                out[key] = dump(value)
        return out

    @classmethod
    def from_dict(cls, data: Dict[str, Any]):
        values = {name: load(data[key]) for name, key, _, load, _ in _plan(cls) if key in data}
        if len(values) != len(data):
            known = {key for _, key, *_ in _plan(cls)}
            raise ValueError(f"{cls.__name__}: no field for {sorted(set(data) - known)}")
        return cls(**values)

    def __bool__(self) -> bool:
        """False when the reader found nothing ({}), as the dict it stands for."""
        return any(getattr(self, f.name) is not None for f in fields(self))


# --------------------------------------------------------------------------------------------
# The groups, in Facts' order


@dataclass(frozen=True)
class QuantizationNeed(FactRecord):
    """What a quantization method needs of a checkpoint (extract/registries.py)."""

    files: Optional[Tuple[str, ...]] = None      # config files one of which must exist ("Cannot find the config file")
    class_name: Optional[str] = None             # a config class whose __init__ has required arguments...
    missing: Optional[Tuple[str, ...]] = None    # ...and those arguments (fbgemm_fp8)

    KEYS: ClassVar[Dict[str, str]] = {"class_name": "class"}


@dataclass(frozen=True)
class DraftDetection(FactRecord):
    """How SpeculativeConfig tells a draft model's method (extract/draft_detection.py)."""

    branches: Tuple[Any, ...]                    # the if-chain's tests and the method each picks
    rewritten: Tuple[str, ...]                   # methods the chain rewrites


@dataclass(frozen=True)
class NestedField(FactRecord):
    """One field of a JSON config flag's class (extract/config_fields.py)."""

    kinds: Tuple[str, ...]                       # JSON kinds the field takes: "str", "int", "dict", ...
    choices: Optional[Tuple[Any, ...]] = None    # a Literal's values
    enum_values: Optional[Tuple[Any, ...]] = None  # an Enum's values
    names: Optional[Tuple[str, ...]] = None      # Enum member names a validator upper-cases into
    ge: Optional[float] = None                   # pydantic Field() bounds
    gt: Optional[float] = None
    le: Optional[float] = None
    lt: Optional[float] = None
    unchecked: Optional[bool] = None             # SkipValidation: pydantic does not check it
    nested: Optional["NestedConfig"] = None      # the field is itself a config class

    def bounds(self) -> Dict[str, float]:
        """Return the Field() bounds stated, by name ("ge", "gt", "le", "lt")."""
        return {name: limit for name in ("ge", "gt", "le", "lt") if (limit := getattr(self, name)) is not None}


@dataclass(frozen=True)
class NestedConfig(FactRecord):
    """A JSON config flag's class (`--speculative-config`): its fields and how it checks them."""

    class_name: str                              # "SpeculativeConfig"
    extra: ExtraPolicy
    fields: Dict[str, NestedField]
    validated: bool                              # pydantic validates the fields
    checks: Optional[Dict[str, Any]] = None      # its post-init checks as a program (lint/vllm/nested_values.py)
    draft_detection: Optional[DraftDetection] = None

    KEYS: ClassVar[Dict[str, str]] = {"class_name": "class"}


@dataclass(frozen=True)
class MaxLen(FactRecord):
    """How `_get_and_verify_max_len` derives a model's length (extract/max_len.py)."""

    keys: Optional[Tuple[str, ...]] = None       # config.json keys it takes the smallest of
    unscaled_rope_types: Optional[Tuple[str, ...]] = None  # rope types whose factor it does not apply
    yarn_base: Optional[bool] = None             # YaRN scales original_max_position_embeddings
    per_layer_rope: Optional[bool] = None        # rope parameters per layer type (0.12+)
    tokenizer_max_length: Optional[bool] = None  # a pooling model's tokenizer model_max_length caps it
    sliding_window_off_refused_with_rope: Optional[bool] = None


@dataclass(frozen=True)
class Parallel(FactRecord):
    """The executor choice (extract/parallel.py)."""

    over_gpus: Optional[OverGpus] = None
    over_gpus_message: Optional[str] = None      # ParallelConfig's message when it refuses, "{}" for values
    ray_required: Optional[bool] = None          # `ray` is a requirement of the release
    executor_by_qualname: Optional[bool] = None  # --distributed-executor-backend takes a class's qualified name


@dataclass(frozen=True)
class Guards(FactRecord):
    """The config-time guards a copy has, None where it has none (extract/guards.py names each)."""

    prefix_caching_sliding_window: Optional[GuardScope] = None
    expert_parallel_needs_experts: Optional[GuardScope] = None
    spec_decode_needs_v1: Optional[GuardScope] = None
    draft_model_unsupported: Optional[GuardScope] = None
    draft_method_unsupported: Optional[GuardScope] = None
    partial_prefills_need_chunked: Optional[GuardScope] = None
    prefix_hash_sha256_v0: Optional[GuardScope] = None
    pooling_without_chunked_prefill: Optional[GuardScope] = None
    float_kv_cache_matches_dtype: Optional[GuardScope] = None
    chat_template_must_exist: Optional[GuardScope] = None
    otlp_needs_opentelemetry: Optional[GuardScope] = None
    lora_spec_token_budget: Optional[GuardScope] = None
    limit_mm_needs_multimodal: Optional[GuardScope] = None
    model_option_refused: Optional[ModelOptionRefusal] = None


class Companion(NamedTuple):
    """A switch's companion flag (extract/guards.py `companion_flags`); JSON: [flag, message]."""

    flag: str                                    # the flag the switch needs
    message: str                                 # vLLM's message without it


@dataclass(frozen=True)
class SwapSpace(FactRecord):
    """The swap-space guard's fractions of host RAM (extract/guards.py)."""

    per_node: Optional[str] = None               # the ParallelConfig field that multiplies swap per node
    refuse_above: Optional[float] = None
    warn_above: Optional[float] = None


@dataclass(frozen=True)
class AsyncSpeculative(FactRecord):
    """The speculative methods `--async-scheduling` allows (extract/guards.py, 0.12-0.32)."""

    allowed: Optional[Tuple[str, ...]] = None
    message: Optional[str] = None


@dataclass(frozen=True)
class NeedsPackage(FactRecord):
    """A package an override's class imports (extract/quantization_overrides.py)."""

    name: str
    min_version: Optional[str] = None
    checked_first: Optional[bool] = None         # checked before the GPU's capability


@dataclass(frozen=True)
class Converts(FactRecord):
    """A checkpoint an override converts (extract/quantization_overrides.py)."""

    keys: Optional[Tuple[str, ...]] = None       # quantization_config keys the check reads
    bits_sym: Optional[Tuple[Tuple[Any, ...], ...]] = None  # (bits, sym) pairs it takes
    group_sizes: Optional[Tuple[int, ...]] = None
    quant_method: Optional[str] = None           # the quant_method it requires


@dataclass(frozen=True)
class QuantizationLimits(FactRecord):
    """One quantization method's limits and override (extract/registries.py `quantization_limits`)."""

    min_capability: Optional[int] = None         # get_min_capability()
    act_dtypes: Optional[Tuple[str, ...]] = None  # get_supported_act_dtypes()
    takes_over: Optional[Tuple[str, ...]] = None  # checkpoint methods its override claims regardless
    online: Optional[bool] = None                # an online shorthand (0.3x)
    override_rank: Optional[int] = None          # its place in _verify_quantization's overrides
    claims_format: Optional[Dict[str, Any]] = None  # quantization_config items its override claims
    converts: Optional[Converts] = None
    needs_package: Optional[NeedsPackage] = None


@dataclass(frozen=True)
class CustomAllreduce(FactRecord):
    """CustomAllreduce._SUPPORTED_WORLD_SIZES (extract/oracle.py)."""

    world_sizes: Optional[Tuple[int, ...]] = None


@dataclass(frozen=True)
class Architectures(FactRecord):
    """The model registry (extract/model_registry.py): lists of registered names, and tables by name."""

    registered: Optional[Tuple[str, ...]] = None
    v0_only: Optional[Tuple[str, ...]] = None
    inner_state: Optional[Tuple[str, ...]] = None
    transcription: Optional[Tuple[str, ...]] = None
    attention_free: Optional[Tuple[str, ...]] = None
    hybrid: Optional[Tuple[str, ...]] = None
    no_pp: Optional[Tuple[str, ...]] = None
    pooling_only: Optional[Tuple[str, ...]] = None
    no_lora: Optional[Dict[str, str]] = None     # name -> its class, which lacks SupportsLoRA
    previously_supported: Optional[Dict[str, str]] = None  # name -> the last release that had it
    out_of_tree: Optional[Dict[str, str]] = None  # name -> its plugin's URL
    config_classes: Optional[Tuple[str, ...]] = None  # model types with a config class of vLLM's own
    float16_unsupported: Optional[Dict[str, str]] = None  # model type -> its reason
    interleaved: Optional[Tuple[str, ...]] = None  # model types with interleaved sliding windows

    def names(self, interface: str) -> Tuple[str, ...]:
        """Return the names of list `interface` ("v0_only", "no_pp", ...), () when unread."""
        return getattr(self, interface) or ()


@dataclass(frozen=True)
class PlatformV1(FactRecord):
    """One platform module's answer to the oracle's `supports_v1` (extract/oracle.py)."""

    device_type: str
    supports_v1: Optional[bool]                  # None: not a constant return


@dataclass(frozen=True)
class MarlinTiles(FactRecord):
    """Marlin's per-shard shape checks (extract/kernel_tiles.py); each where the reader found it."""

    min_thread_n: Optional[int] = None
    min_thread_k: Optional[int] = None
    tile: Optional[int] = None
    n_message: Optional[str] = None
    k_message: Optional[str] = None
    group_message: Optional[str] = None


@dataclass(frozen=True)
class PlainTiles(FactRecord):
    """A plain AWQ or GPTQ kernel's shape checks' messages."""

    input_message: Optional[str] = None
    output_message: Optional[str] = None
    marlin_falls_back: Optional[bool] = None     # AWQ: a layer Marlin cannot take falls back to it


@dataclass(frozen=True)
class Fp8BlockTiles(FactRecord):
    """FP8 block quantization's shape checks."""

    linear_n_message: Optional[str] = None
    linear_k_message: Optional[str] = None
    moe_n_message: Optional[str] = None
    moe_k_message: Optional[str] = None
    merged_last_exempt: Optional[bool] = None    # 0.11+: a merged layer's last part may break the block
    merged_mismatch_allowed: Optional[bool] = None  # 0.15+: a misaligned merged part skips the check
    moe_refined: Optional[bool] = None           # 0.30+: the MoE block grid may be fitted to the shard


@dataclass(frozen=True)
class KernelTiles(FactRecord):
    """Quantized kernels' per-shard shape checks, each where found."""

    marlin: Optional[MarlinTiles] = None
    awq: Optional[PlainTiles] = None
    gptq: Optional[PlainTiles] = None
    fp8_block: Optional[Fp8BlockTiles] = None


@dataclass(frozen=True)
class Transformers(FactRecord):
    """The transformers beside a copy (extract/transformers_beside.py)."""

    version: Optional[str] = None
    model_types: Optional[Tuple[str, ...]] = None  # the model types its CONFIG_MAPPING knows
    resolved_on: Optional[str] = None            # a release's: the day an install took this version

