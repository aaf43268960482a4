"""The fact groups of a copy: which reader fills which `Facts` fields, and one reading of them.

A group is one reader and the fields it fills. `extract` reads every group over one Source;
facts/vouch.py reads again only the groups whose files differ from a release's, which
scripts/generate_facts.py records per release by reading each group alone (`Reading.alone`).
What only the install can say (its version and folder, the packages beside it) is read every
time. A failing reader costs its group only: it leaves a note and the group's fallback.

Readers return plain dicts, built key by key as the source yields each piece; `facts()` turns
each into its group's record (facts/groups.py), so a group's shape is written in one place and a
reader that strays from it fails there, on the first extraction.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from patchops.host.installed_version import read_version
from patchops.lint.facts.groups import Transformers
from patchops.lint.facts.model import GROUP_RECORDS, Facts, Flag, oracle_reports
from patchops.lint import extract as ex
from patchops.lint.extract.source_tree import Source
from patchops.lint.extract.transformers_beside import transformers_beside
from patchops.lint.extract.vendor import vendor_of


@dataclass(frozen=True)
class Group:
    """Facts fields one reader fills; `label` names it in a note when it fails."""

    name: str
    label: str
    read: Callable[["Reading"], Tuple[Any, ...]]
    fallback: Tuple[Any, ...]
    fields: Tuple[str, ...] = ()

    def __post_init__(self):
        if not self.fields:
            object.__setattr__(self, "fields", (self.name,))


def _reader(module: str, name: str, classes: bool = False,
            many: bool = False) -> Callable[["Reading"], Tuple[Any, ...]]:
    """Return the reader `name` of extract/`module`.py over (src[, classes]), imported when first read:
    facts a release vouches for load no reader."""
    def read(r: "Reading") -> Tuple[Any, ...]:
        func = getattr(_module(module), name)
        found = func(r.src, r.classes) if classes else func(r.src)
        return tuple(found) if many else (found,)
    return read


def _module(name: str):
    return importlib.import_module(f"patchops.lint.extract.{name}")


def _flags(r: "Reading") -> Tuple[Dict[str, Flag]]:
    flags = _module("engine_facts").read_flags(r.src, r.classes, r.notes_of("flags"), r.unresolved)
    names = r.value("registries")
    try:
        return (with_registry_choices(r.src, flags, names),)
    except Exception as exc:  # noqa: BLE001 - as Reading.value: this part only
        r.notes_of("flags").append(f"registry choices: extraction failed ({exc.__class__.__name__}: {exc})")
        return (flags,)


def _ranges(r: "Reading") -> Tuple[Dict[str, Any]]:
    return ({**_module("guards").front_end_bounds(r.src),
             **_module("config_fields").value_range_facts(r.src, r.classes)},)


def _oracle(r: "Reading") -> Tuple[Any]:
    return (oracle_reports(_module("oracle").oracle_facts(r.src)),)


# In the order their notes appear; `registries` feeds flags.
GROUPS: Tuple[Group, ...] = (
    Group("flags", "flags", _flags, ({},)),
    Group("field_defaults", "field_defaults", _reader("engine_facts", "engine_args_defaults", True), ({},)),
    Group("attention", "attention backends", _reader("engine_facts", "attention_facts", many=True),
          (False, ()),
          ("attention_env_var", "attention_backends")),
    Group("multistep", "multi-step backends", _reader("engine_facts", "multistep_facts", many=True), ((), ()),
          ("multistep_backends", "multistep_chunked_backends")),
    Group("hardcoded", "hardcoded keywords", _reader("engine_facts", "hardcoded_facts"), ({},)),
    Group("capture_sizes_default", "capture sizes", _reader("engine_facts", "capture_sizes_default", True),
          (None,)),
    Group("value_ranges", "value ranges", _ranges, ({},)),
    Group("registries", "parser registries", _reader("registries", "registry_facts"), ({},)),
    Group("quantization_needs", "quantization checkpoint needs",
          _reader("registries", "quantization_checkpoint_needs"), ({},)),
    Group("quantization_limits", "quantization GPU and dtype limits",
          _reader("registries", "quantization_limits"), ({},)),
    Group("nested_configs", "nested config fields", _reader("config_fields", "nested_config_facts", True),
          ({},)),
    Group("option_inverses", "boolean flag spellings", _reader("bool_spellings", "option_inverses"), ({},)),
    Group("max_len", "max length derivation", _reader("max_len", "max_len_facts"), ({},)),
    Group("parallel", "executor choice", _reader("parallel", "parallel_facts"), ({},)),
    Group("guards", "config guards", _reader("guards", "guard_facts"), ({},)),
    Group("companions", "companion flags", _reader("guards", "companion_flags"), ({},)),
    Group("swap_space", "swap space limits", _reader("guards", "swap_space_limits"), ({},)),
    Group("async_speculative", "async scheduling's speculative methods",
          _reader("guards", "async_speculative_methods", True), ({},)),
    Group("config_checks", "config class checks", lambda r: (_module("guard_programs").checked_classes(
        r.src, r.classes),), ({},)),
    Group("required_dists", "required distributions", _reader("requirements", "required_dists"), ((),)),
    Group("v1_oracle", "V1 oracle", _oracle, (None,)),
    Group("custom_allreduce", "custom all-reduce", _reader("oracle", "custom_allreduce_facts"), ({},)),
    Group("v1_platforms", "platforms' V1 support", _reader("oracle", "platform_v1_facts"), ({},)),
    Group("architectures", "model architectures", _reader("model_registry", "architecture_facts"), ({},)),
    Group("kernel_tiles", "quantized kernels' shape checks", _reader("kernel_tiles", "kernel_tile_facts"), ({},)),
)
BY_NAME = {group.name: group for group in GROUPS}


class Reading:
    """One reading of a copy: a Source shared by the groups read, their values and notes."""

    def __init__(self, site: Path, extra_paths: Sequence[Path] = ()):
        self.site = Path(site)
        self.extra_paths = tuple(extra_paths)
        self.src = Source(self.site)
        self._classes = None
        self.values: Dict[str, Tuple[Any, ...]] = {}
        self.notes: Dict[str, List[str]] = {}
        self.unresolved: List[str] = []   # the flag reader's, kept even when it fails midway

    @property
    def classes(self):
        """The Classes evaluator over this reading's Source, made on first use."""
        if self._classes is None:
            self._classes = _module("static_eval").Classes(self.src)
        return self._classes

    def notes_of(self, group: str) -> List[str]:
        return self.notes.setdefault(group, [])

    def value(self, name: str) -> Any:
        """Return the one field of group `name`, read on first ask."""
        return self.read(name)[0]

    def read(self, name: str) -> Tuple[Any, ...]:
        """Return the fields of group `name`, reading them on first ask."""
        if name not in self.values:
            group = BY_NAME[name]
            try:
                self.values[name] = tuple(group.read(self))
            except Exception as exc:  # noqa: BLE001 - a fork's odd file costs this group only
                self.notes_of(name).append(
                    f"{group.label}: extraction failed ({exc.__class__.__name__}: {exc})")
                self.values[name] = group.fallback
            if name == "flags":
                self.notes_of(name).extend(f"unresolved: {u}" for u in self.unresolved)
        return self.values[name]

    @classmethod
    def alone(cls, site: Path, name: str) -> Tuple["Reading", List[str]]:
        """Read group `name` by itself; return the reading and the group's notes (parse notes apart)."""
        reading = cls(site)
        reading.read(name)
        return reading, reading.notes.get(name, [])

    def facts(self, names: Sequence[str], release: Optional[Facts] = None,
              release_notes: Optional[Dict[str, Dict[str, List[str]]]] = None) -> Facts:
        """Return the copy's Facts: groups `names` read here, the others taken from `release`.

        `release_notes` holds, per group, the notes and parse notes it gave alone on the
        release's files. The copy's own: version, folder, vendor and what sits beside it.
        """
        fields: Dict[str, Any] = {}
        notes: List[str] = []
        parsed: List[str] = []
        for group in GROUPS:
            if group.name in names:
                values, group_notes = self.read(group.name), self.notes.get(group.name, [])
                values = tuple(GROUP_RECORDS[f](v) if f in GROUP_RECORDS else v for f, v in zip(group.fields, values))
            else:
                assert release is not None and release_notes is not None
                values = tuple(getattr(release, f) for f in group.fields)
                group_notes = release_notes[group.name]["notes"]
                parsed += release_notes[group.name]["parsed"]
            fields.update(zip(group.fields, values))
            notes += group_notes
        site, extras = self.site, self.extra_paths
        version = read_version(site)[0] or "unknown"
        self.src.stat("vllm/_version.py")
        try:
            beside = transformers_beside(self.src, extras)
        except Exception as exc:  # noqa: BLE001
            notes.append(f"transformers: extraction failed ({exc.__class__.__name__}: {exc})")
            beside = {}
        self.src.stat(".")  # the site dir's listing says whether a package (flashinfer) came or went
        return Facts(
            version=version, origin=str(site), vendor=vendor_of(site, version),
            transformers=Transformers.from_dict(beside),
            has_flash_attn=any(self.src.exists(rel) for rel in ex.FLASH_ATTN_SO),
            has_flashinfer=ex.library_present(site, "flashinfer", extras),
            has_ray=ex.library_present(site, "ray", extras),
            has_bitblas=ex.library_present(site, "bitblas", extras),
            notes=tuple(notes) + tuple(sorted(set(parsed) | set(self.src.notes))),
            **fields)


def with_registry_choices(src: Source, flags: Dict[str, Flag],
                          names: Dict[str, Tuple[str, ...]]) -> Dict[str, Flag]:
    """Give flags whose argparse `choices=` come from a parser registry those names (0.8.x)."""
    options = _module("registries").registry_choice_flags(src, (ex.ARG_UTILS,) + ex.CLI_ARGS_FILES)
    out = dict(flags)
    for dest, flag in flags.items():
        registry = options.get("--" + flag.name)
        found = names.get(registry) if registry else None
        if found and flag.choices is None:
            out[dest] = replace(flag, choices=tuple(found))
    return out
