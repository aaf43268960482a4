"""What a vLLM copy says about itself, read with stdlib `ast` (never importing vLLM or libcst).

Facts come from two places: a copy on disk (`facts_cache.facts_for_copy`, extracted once and
cached by the files it read) or the facts shipped for released versions (`facts_for_version`), so a
serve spec can be linted against a version that is not installed here. This module stays
cheap to import: the `ast` readers live in `facts_extract` and load only on a cache miss.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any, Callable, Dict, List, Optional, Tuple

from patchops.core.records import StrEnum
from patchops.lint.facts.groups import (Architectures, AsyncSpeculative, Companion, CustomAllreduce, FactRecord,
                                        Guards, KernelTiles, MaxLen, NestedConfig, OracleReport, Parallel,
                                        PlatformV1, QuantizationLimits, QuantizationNeed, SwapSpace, Transformers)
from patchops.lint.facts.packs import flag_tables, release_dict, shipped_releases

# Bump when the extraction or the JSON layout changes: old cache entries are then ignored.
FACTS_SCHEMA = 7


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
    aliases: Tuple[str, ...] = ()    # other option strings, with their dashes: ("-tp",), ("--device-memory-utilization",)
    optional: bool = False           # the type maps the string "None" to None (optional_type / Optional[...] field)
    deprecated: bool = False         # add_argument(..., deprecated=True)
    known_values: Optional[Tuple[Any, ...]] = None  # Literal values argparse shows but does not enforce (`Literal | str`, 0.15+)
    # Choices only some launches accept: get_kwargs takes one Literal of a Union in hash order (0.8.5).
    chance_choices: Optional[Tuple[Any, ...]] = None

    def option_names(self) -> Tuple[str, ...]:
        """Return every long spelling argparse accepts for this flag, without dashes.

        BooleanOptionalAction also registers `--no-<name>` for each long option.
        """
        longs = [self.name] + [a[2:] for a in self.aliases if a.startswith("--")]
        if self.action == "boolean_optional":
            longs += ["no-" + n for n in list(longs)]
        return tuple(longs)

    def to_dict(self) -> Dict[str, Any]:
        out = asdict(self)
        out["choices"] = list(self.choices) if self.choices is not None else None
        out["aliases"] = list(self.aliases)
        out["known_values"] = list(self.known_values) if self.known_values is not None else None
        if self.chance_choices is None:
            del out["chance_choices"]   # rare: keep the shipped facts' lines short
        else:
            out["chance_choices"] = list(self.chance_choices)
        return out

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Flag":
        data = dict(data)
        if data.get("choices") is not None:
            data["choices"] = tuple(data["choices"])
        data["aliases"] = tuple(data.get("aliases") or ())
        if data.get("known_values") is not None:
            data["known_values"] = tuple(data["known_values"])
        if data.get("chance_choices") is not None:
            data["chance_choices"] = tuple(data["chance_choices"])
        known = cls.__dataclass_fields__  # ignore keys from a newer layout
        return cls(**{k: v for k, v in data.items() if k in known})


class ReadKind(StrEnum):
    """How a copy's facts were read (facts/vouch.py)."""

    VOUCHED = "vouched"        # its files are a release's: the release's facts
    PARTIAL = "partial"        # the groups whose files differ read again from the copy
    EXTRACTED = "extracted"    # every group read from the copy


@dataclass(frozen=True)
class HowRead:
    """A ReadKind, and for PARTIAL how many groups of how many were read again."""

    kind: ReadKind
    changed: int = 0
    groups: int = 0

    def __str__(self) -> str:
        """Say it as the facts cache stores it: "vouched", "partial: 3 of 25 groups re-read"."""
        if self.kind is ReadKind.PARTIAL:
            return f"partial: {self.changed} of {self.groups} groups re-read"
        return self.kind.value

    @classmethod
    def parse(cls, text: str) -> "HowRead":
        if text.startswith("partial: "):
            changed, _, groups = text[len("partial: "):].split()[:3]
            return cls(ReadKind.PARTIAL, int(changed), int(groups))
        return cls(ReadKind(text))


def _keyed(load: Callable[[Any], Any]) -> Callable[[Dict[str, Any]], Dict[str, Any]]:
    return lambda data: {key: load(value) for key, value in data.items()}


# Facts field -> its group's record read from JSON (a reader's dict), for every typed group.
GROUP_RECORDS: Dict[str, Callable[[Any], Any]] = {
    "quantization_needs": _keyed(QuantizationNeed.from_dict), "nested_configs": _keyed(NestedConfig.from_dict),
    "max_len": MaxLen.from_dict, "parallel": Parallel.from_dict, "guards": Guards.from_dict,
    "companions": _keyed(lambda pair: Companion(*pair)), "swap_space": SwapSpace.from_dict,
    "async_speculative": AsyncSpeculative.from_dict, "quantization_limits": _keyed(QuantizationLimits.from_dict),
    "custom_allreduce": CustomAllreduce.from_dict, "architectures": Architectures.from_dict,
    "v1_platforms": _keyed(PlatformV1.from_dict), "kernel_tiles": KernelTiles.from_dict,
    "transformers": Transformers.from_dict,
}


def oracle_reports(data: Optional[List[List[str]]]) -> Optional[Tuple[Tuple[str, OracleReport], ...]]:
    """Return the V1 oracle's (feature, report) pairs read from JSON (or a reader's lists)."""
    return tuple((text, OracleReport(kind)) for text, kind in data) if data is not None else None


def _dump(value: Any) -> Any:
    """Return a group's record (or a mapping of them) as the JSON it was read from."""
    if isinstance(value, FactRecord):
        return value.to_dict()
    return {key: item.to_dict() if isinstance(item, FactRecord) else list(item) for key, item in value.items()}


@dataclass(frozen=True)
class Facts:
    """What one vLLM copy or release accepts and does at launch, as read from its source."""

    version: str                                        # "0.8.5"
    origin: str                                         # a copy's folder, or "shipped facts from vllm-0.8.5 wheel"
    flags: Dict[str, Flag] = field(default_factory=dict)           # by dest
    field_defaults: Dict[str, Any] = field(default_factory=dict)  # EngineArgs field -> resolved literal default
    attention_env_var: bool = True                      # envs.py still reads VLLM_ATTENTION_BACKEND
    attention_backends: Tuple[str, ...] = ()            # names VLLM_ATTENTION_BACKEND (0.15+: --attention-backend) accepts
    multistep_backends: Tuple[str, ...] = ()            # MultiStepModelRunner's allowed list; () when multi-step is gone
    multistep_chunked_backends: Tuple[str, ...] = ()    # the stricter list with chunked prefill
    has_flash_attn: Optional[bool] = None               # vllm/vllm_flash_attn extension present beside the copy
    has_flashinfer: Optional[bool] = None               # a `flashinfer` package importable beside the copy
    hardcoded: Dict[str, str] = field(default_factory=dict)        # EngineArgs keyword -> value source when not self.<kw>
    capture_sizes_default: Optional[Tuple[int, ...]] = None        # a fork's hardcoded default capture sizes
    notes: Tuple[str, ...] = ()                         # what extraction skipped: unparsable files, dynamic flags
    # Config-time knowledge outside argparse (extract/readers.py names each reader; groups.py each record):
    registries: Dict[str, Tuple[str, ...]] = field(default_factory=dict)  # "tool_call_parser" -> registered names
    quantization_needs: Dict[str, QuantizationNeed] = field(default_factory=dict)  # by method
    nested_configs: Dict[str, NestedConfig] = field(default_factory=dict)  # by JSON flag dest
    value_ranges: Dict[str, Dict[str, Any]] = field(default_factory=dict)    # dest -> {"gt"/"le"...: bound, "message"?}
    option_inverses: Dict[str, str] = field(default_factory=dict)  # "--enable-" -> "--disable-" (0.33 EnableDisableAction)
    max_len: MaxLen = field(default_factory=MaxLen)
    parallel: Parallel = field(default_factory=Parallel)
    guards: Guards = field(default_factory=Guards)
    companions: Dict[str, Companion] = field(default_factory=dict)  # by switch
    has_ray: Optional[bool] = None                                  # a `ray` package importable beside the copy
    has_bitblas: Optional[bool] = None                              # a `bitblas` package importable beside the copy
    swap_space: SwapSpace = field(default_factory=SwapSpace)
    async_speculative: AsyncSpeculative = field(default_factory=AsyncSpeculative)
    config_checks: Dict[str, Any] = field(default_factory=dict)    # config classes' checks as programs (guard_programs.py)
    quantization_limits: Dict[str, QuantizationLimits] = field(default_factory=dict)  # by method
    required_dists: Tuple[str, ...] = ()                           # what `pip install vllm==X` pulls in (requirements.py)
    # _is_v1_supported_oracle's reports in source order: (feature name, "unsupported" |
    # "experimental"), or 0.12+'s _check_feature_supported: (name, "refused"); None when
    # unread (older shipped facts), () when the copy has neither.
    v1_oracle: Optional[Tuple[Tuple[str, OracleReport], ...]] = None
    custom_allreduce: CustomAllreduce = field(default_factory=CustomAllreduce)
    architectures: Architectures = field(default_factory=Architectures)
    # The oracle's `current_platform.supports_v1` by platform module (oracle.py, 0.8.5-0.10);
    # {} where it is not asked.
    v1_platforms: Dict[str, PlatformV1] = field(default_factory=dict)
    vendor: Optional[str] = None                                    # "corex" for a CoreX build (vendor.py)
    kernel_tiles: KernelTiles = field(default_factory=KernelTiles)
    # A release's shipped facts name the transformers an install on its release day took
    # ("resolved_on": that day).
    transformers: Transformers = field(default_factory=Transformers)
    # How a copy's facts were read (facts/vouch.py); None for a release's own. Not a fact of
    # the copy: equal facts read two ways compare equal.
    read: Optional[HowRead] = field(default=None, compare=False)
    # (version asked for, how it resolved) when these are another release's shipped facts
    # (lint/facts/resolution.py); never stored.
    asked: Optional[Tuple[str, str]] = None

    # -- lookups for rules ----------------------------------------------------------------

    def flag(self, key: str) -> Optional[Flag]:
        """Return the flag a config key names exactly (`max_model_len`, `--max-model-len`, `no-x`)."""
        name = key.lstrip("-").replace("_", "-")
        dest = name.replace("-", "_")
        if dest in self.flags and self.flags[dest].name == name:
            return self.flags[dest]
        return self._by_option().get(name)

    def option_names(self) -> Tuple[str, ...]:
        """Return every long option `vllm serve` accepts, without dashes, sorted."""
        return tuple(sorted(self._by_option()))

    def _by_option(self) -> Dict[str, Flag]:
        cache = self.__dict__.get("_options")
        if cache is None:
            cache = {}
            for flag in self.flags.values():
                for name in flag.option_names():
                    cache.setdefault(name, flag)
                if flag.action == "boolean_optional":
                    for name in flag.option_names():
                        for prefix, inverse in self.option_inverses.items():
                            if ("--" + name).startswith(prefix) and not name.startswith("no-"):
                                cache.setdefault(inverse[2:] + name[len(prefix) - 2:], flag)
            object.__setattr__(self, "_options", cache)
        return cache

    # -- JSON -----------------------------------------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        return {
            "version": self.version,
            "origin": self.origin,
            "flags": {dest: flag.to_dict() for dest, flag in self.flags.items()},
            "field_defaults": self.field_defaults,
            "attention_env_var": self.attention_env_var,
            "attention_backends": list(self.attention_backends),
            "multistep_backends": list(self.multistep_backends),
            "multistep_chunked_backends": list(self.multistep_chunked_backends),
            "has_flash_attn": self.has_flash_attn,
            "has_flashinfer": self.has_flashinfer,
            "hardcoded": self.hardcoded,
            "capture_sizes_default": list(self.capture_sizes_default)
            if self.capture_sizes_default is not None else None,
            "notes": list(self.notes),
            "registries": {k: list(v) for k, v in self.registries.items()},
            "quantization_needs": _dump(self.quantization_needs),
            "nested_configs": _dump(self.nested_configs),
            "value_ranges": self.value_ranges,
            "option_inverses": self.option_inverses,
            "max_len": _dump(self.max_len),
            "parallel": _dump(self.parallel),
            "guards": _dump(self.guards),
            "companions": _dump(self.companions),
            "has_ray": self.has_ray,
            "has_bitblas": self.has_bitblas,
            "swap_space": _dump(self.swap_space),
            "async_speculative": _dump(self.async_speculative),
            "config_checks": self.config_checks,
            "quantization_limits": _dump(self.quantization_limits),
            "required_dists": list(self.required_dists),
            "v1_oracle": [list(t) for t in self.v1_oracle] if self.v1_oracle is not None else None,
            "custom_allreduce": _dump(self.custom_allreduce),
            "architectures": _dump(self.architectures),
            "v1_platforms": _dump(self.v1_platforms),
            "vendor": self.vendor,
            **({"kernel_tiles": self.kernel_tiles.to_dict()} if self.kernel_tiles else {}),
            "transformers": _dump(self.transformers),
            **({"read": str(self.read)} if self.read else {}),   # shipped facts stay without it
        }

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Facts":
        capture = data.get("capture_sizes_default")
        return cls(
            version=data["version"],
            origin=data.get("origin", ""),
            flags={dest: Flag.from_dict(f) for dest, f in (data.get("flags") or {}).items()},
            field_defaults=dict(data.get("field_defaults") or {}),
            attention_env_var=bool(data.get("attention_env_var", True)),
            attention_backends=tuple(data.get("attention_backends") or ()),
            multistep_backends=tuple(data.get("multistep_backends") or ()),
            multistep_chunked_backends=tuple(data.get("multistep_chunked_backends") or ()),
            has_flash_attn=data.get("has_flash_attn"),
            has_flashinfer=data.get("has_flashinfer"),
            hardcoded=dict(data.get("hardcoded") or {}),
            capture_sizes_default=tuple(capture) if capture is not None else None,
            notes=tuple(data.get("notes") or ()),
            registries={k: tuple(v) for k, v in (data.get("registries") or {}).items()},
            value_ranges=dict(data.get("value_ranges") or {}),
            option_inverses=dict(data.get("option_inverses") or {}),
            has_ray=data.get("has_ray"),
            has_bitblas=data.get("has_bitblas"),
            config_checks=dict(data.get("config_checks") or {}),
            required_dists=tuple(data.get("required_dists") or ()),
            v1_oracle=oracle_reports(data.get("v1_oracle")),
            vendor=data.get("vendor"),
            read=HowRead.parse(data["read"]) if data.get("read") else None,
            **{name: load(data.get(name) or {}) for name, load in GROUP_RECORDS.items()},
        )

    def to_json(self, indent: Optional[int] = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, sort_keys=indent is not None)

    @classmethod
    def from_json(cls, text: str) -> "Facts":
        return cls.from_dict(json.loads(text))

    def replace(self, **changes: Any) -> "Facts":
        """Return a copy with some fields changed."""
        from dataclasses import replace
        return replace(self, **changes)


# --------------------------------------------------------------------------------------------
# Shipped facts for released versions


def shipped_versions() -> List[str]:
    """Return the vLLM releases with shipped facts, oldest first."""
    return shipped_releases()


def facts_for_version(version: str) -> Facts:
    """Return the shipped facts that stand for `version` (lint/facts/resolution.py).

    An exact release gets its own facts; otherwise the origin names the release used and
    `asked` holds the version asked for and how it resolved.
    """
    from patchops.lint.facts.resolution import ResolutionKind, resolve

    chosen = resolve(version)
    facts = _release_facts(chosen.used)
    if chosen.kind == ResolutionKind.EXACT:
        return facts
    return facts.replace(origin=f"shipped facts from vllm-{chosen.used} wheel, standing for {chosen.asked}",
                         asked=(chosen.asked, chosen.kind))


@lru_cache(maxsize=None)
def _release_facts(version: str) -> Facts:
    data = release_dict(version)
    if data is None:  # resolve() only names shipped releases
        raise KeyError(version)
    return Facts.from_dict(data)


@lru_cache(maxsize=None)
def shipped_option_facts() -> Tuple[Facts, ...]:
    """Return every shipped release's flags and option inverses alone, as Facts, oldest first.

    What the rules that compare releases read (when a flag was added, what an abbreviation
    means elsewhere), without the cost of every release's full facts. A flag unchanged
    between releases of a pack is one Flag.
    """
    built: Dict[int, Tuple[Dict[str, Any], Flag]] = {}   # id -> (the raw dict, kept alive: ids stay unique)
    out = []
    for version, flags, inverses in flag_tables():
        table = {}
        for dest, raw in flags.items():
            if id(raw) not in built:
                built[id(raw)] = (raw, Flag.from_dict(raw))
            table[dest] = built[id(raw)][1]
        out.append(Facts(version=version, origin=f"shipped flags of vllm-{version}", flags=table,
                         option_inverses=dict(inverses)))
    return tuple(out)
