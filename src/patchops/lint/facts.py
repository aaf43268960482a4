"""What a vLLM copy says about itself, read with stdlib `ast` (never importing vLLM or libcst).

Over 400 lines because each Facts field, its JSON form and the two caches that store it must
change together; the readers themselves live in `facts_extract`.

Facts come from two places: a copy on disk (`facts_for_copy`, extracted once and cached by
the files it read) or the facts shipped for released versions (`facts_for_version`), so a
serve spec can be linted against a version that is not installed here. This module stays
cheap to import: the `ast` readers live in `facts_extract` and load only on a cache miss.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from patchops.cache import cache_root, write_json
from patchops.lint.vllm.releases import micro, parse_release, release

# Bump when the extraction or the JSON layout changes: old cache entries are then ignored.
FACTS_SCHEMA = 3
SHIPPED_DIR = Path(__file__).resolve().parent.parent / "data" / "facts"


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
    # Config-time knowledge outside argparse (facts_extract/knowledge.py reads each):
    registries: Dict[str, Tuple[str, ...]] = field(default_factory=dict)  # "tool_call_parser" -> registered names
    quantization_needs: Dict[str, Dict[str, Any]] = field(default_factory=dict)  # method -> {"files"} or {"class", "missing"}
    nested_configs: Dict[str, Dict[str, Any]] = field(default_factory=dict)  # JSON flag dest -> class, extra policy, fields
    value_ranges: Dict[str, Dict[str, Any]] = field(default_factory=dict)    # dest -> {"gt"/"le"...: bound, "message"?}
    option_inverses: Dict[str, str] = field(default_factory=dict)  # "--enable-" -> "--disable-" (0.33 EnableDisableAction)
    max_len: Dict[str, Any] = field(default_factory=dict)          # _get_and_verify_max_len's keys and rope handling
    parallel: Dict[str, Any] = field(default_factory=dict)         # world size above the GPUs: "ray" or "refuse"; ray_required
    guards: Dict[str, str] = field(default_factory=dict)           # config-time guard -> "always" | "v0" (guards.py)
    companions: Dict[str, List[str]] = field(default_factory=dict)  # switch -> [flag it needs, vLLM's message]
    has_ray: Optional[bool] = None                                  # a `ray` package importable beside the copy
    swap_space: Dict[str, Any] = field(default_factory=dict)       # host-RAM fractions of the swap guard (guards.py)
    required_dists: Tuple[str, ...] = ()                           # what `pip install vllm==X` pulls in (requirements.py)
    # _is_v1_supported_oracle's reports in source order: (feature name, "unsupported" |
    # "experimental"), or 0.12+'s _check_feature_supported: (name, "refused"); None when
    # unread (older shipped facts), () when the copy has neither.
    v1_oracle: Optional[Tuple[Tuple[str, str], ...]] = None
    custom_allreduce: Dict[str, Any] = field(default_factory=dict)  # {"world_sizes": [2, 4, 6, 8]}
    vendor: Optional[str] = None                                    # "corex" for a CoreX build (vendor.py)

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
            "quantization_needs": self.quantization_needs,
            "nested_configs": self.nested_configs,
            "value_ranges": self.value_ranges,
            "option_inverses": self.option_inverses,
            "max_len": self.max_len,
            "parallel": self.parallel,
            "guards": self.guards,
            "companions": self.companions,
            "has_ray": self.has_ray,
            "swap_space": self.swap_space,
            "required_dists": list(self.required_dists),
            "v1_oracle": [list(t) for t in self.v1_oracle] if self.v1_oracle is not None else None,
            "custom_allreduce": self.custom_allreduce,
            "vendor": self.vendor,
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
            quantization_needs=dict(data.get("quantization_needs") or {}),
            nested_configs=dict(data.get("nested_configs") or {}),
            value_ranges=dict(data.get("value_ranges") or {}),
            option_inverses=dict(data.get("option_inverses") or {}),
            max_len=dict(data.get("max_len") or {}),
            parallel=dict(data.get("parallel") or {}),
            guards=dict(data.get("guards") or {}),
            companions={k: list(v) for k, v in (data.get("companions") or {}).items()},
            has_ray=data.get("has_ray"),
            swap_space=dict(data.get("swap_space") or {}),
            required_dists=tuple(data.get("required_dists") or ()),
            v1_oracle=tuple(tuple(t) for t in data["v1_oracle"]) if data.get("v1_oracle") is not None else None,
            custom_allreduce=dict(data.get("custom_allreduce") or {}),
            vendor=data.get("vendor"),
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
# Facts of a copy on disk, cached


def extract_facts(site_dir: Path, extra_paths: Sequence[Path] = ()) -> Facts:
    """Read the facts of the vLLM copy in `site_dir` (the folder holding `vllm/`), uncached.

    `extra_paths` are further import roots searched for `flashinfer`.
    """
    from patchops.lint import facts_extract

    return facts_extract.extract(Path(site_dir), extra_paths)[0]


def facts_cache_dir() -> Path:
    """Return $PATCHOPS_CACHE/facts, else ~/.cache/patchops/facts."""
    return cache_root() / "facts"


def _extractor_stamp() -> List[Any]:
    """Identify the extractor code, so an upgraded patchops ignores older cache entries."""
    stamp: List[Any] = [FACTS_SCHEMA]
    here = Path(__file__).resolve().parent
    for path in [here / "facts.py", *sorted((here / "facts_extract").glob("*.py"))]:
        stamp.append(_stat_list(path))
    return stamp


def _cache_path(site: Path, extra_paths: Sequence[Path]) -> Path:
    key = "\0".join([str(site)] + [str(Path(p).resolve()) for p in extra_paths])
    return facts_cache_dir() / (hashlib.sha256(key.encode()).hexdigest()[:24] + ".json")


def _fingerprint(path: Path) -> Optional[str]:
    """Return the sha256 of a file's bytes (of a folder's names), None when absent.

    By content, not mtime: vendor images often carry one fixed mtime for every file. A
    folder's names say whether a package (flashinfer) came or went beside the copy. Only the
    presence of a compiled extension matters (flash-attention), and it weighs hundreds of MB.
    """
    try:
        if path.suffix == ".so":
            return "present" if path.is_file() else None
        if path.is_dir():
            return hashlib.sha256("\n".join(sorted(os.listdir(path))).encode()).hexdigest()
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _fingerprints(site: Path, rels: Sequence[str], extras: Sequence[str]) -> Dict[str, Dict[str, Optional[str]]]:
    return {"inputs": {rel: _fingerprint(site / rel) for rel in rels},
            "extras": {path: _fingerprint(Path(path)) for path in extras}}


# A file whose ctime is this close to the hashing may have been written again in the same
# clock tick, after the read ("racily clean" in git): it gets no stamp (as verify.py).
RACY_SECONDS = 2.0


def _file_stamp(path: Path) -> Optional[List[int]]:
    """Return what any write to `path` moves: device, inode, size, mtime and ctime."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]


def _stamps(site: Path, rels: Sequence[str], hashed_at: float) -> Dict[str, List[int]]:
    """Return the stamps of the inputs hashed at `hashed_at`, leaving out racily clean ones."""
    stamps = {}
    for rel in rels:
        stamp = _file_stamp(site / rel)
        if stamp is not None and stamp[4] / 1e9 < hashed_at - RACY_SECONDS:
            stamps[rel] = stamp
    return stamps


def _inputs_read_again(site: Path, recorded: Dict[str, Dict[str, Optional[str]]],
                       stamps: Dict[str, List[int]]) -> Optional[List[str]]:
    """Return the inputs whose stamp moved and whose content is as recorded; None if one changed.

    Any write moves a file's ctime, which no user can set back, so a file whose stamp is
    unchanged is not read again (git's index and verify.py do the same); vendor images that
    fix every mtime are still caught, by ctime and by content.
    """
    read = []
    for rel, digest in recorded["inputs"].items():
        path = site / rel
        now = _file_stamp(path)
        if (now is None and digest is None) or (now is not None and now == stamps.get(rel)):
            continue  # still absent, or written by nobody since it was hashed
        if _fingerprint(path) != digest:
            return None
        if now is not None:
            read.append(rel)
    if {p: _fingerprint(Path(p)) for p in recorded["extras"]} != recorded["extras"]:
        return None
    return read


def _stat_list(path: Path) -> Optional[List[int]]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def facts_for_copy(site_dir: Path, extra_paths: Sequence[Path] = ()) -> Facts:
    """Return the facts of the copy in `site_dir`, from the cache when its sources are unchanged.

    The cache entry lists every file extraction consulted (present or absent) with the
    sha256 of its bytes and its stat stamp; a hit costs one JSON read and a stat of those few
    dozen files (hashing only those whose stamp moved, and then re-stamping them).
    """
    import time

    site = Path(site_dir).resolve()
    path = _cache_path(site, extra_paths)
    stamp = _extractor_stamp()
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
        stamps = entry.get("stamps") or {}
        hashed_at = time.time()
        read = None
        if entry.get("stamp") == stamp and entry.get("site") == str(site):
            read = _inputs_read_again(site, entry["fingerprints"], stamps)
        if read is not None:
            fresh = _stamps(site, read, hashed_at)
            if fresh:  # stamp what was read again and is no longer racily clean
                entry["stamps"] = {**stamps, **fresh}
                write_json(path, entry)
            return Facts.from_dict(entry["facts"])
    except (OSError, ValueError, KeyError, TypeError):
        pass

    from patchops.lint import facts_extract

    hashed_at = time.time()
    facts, inputs = facts_extract.extract(site, extra_paths)
    fingerprints = _fingerprints(site, sorted(inputs), [str(Path(p).resolve()) for p in extra_paths])
    entry = {"stamp": stamp, "site": str(site), "fingerprints": fingerprints,
             "stamps": _stamps(site, sorted(inputs), hashed_at), "facts": facts.to_dict()}
    write_json(path, entry)  # a read-only home: facts are still correct, only slower next time
    return facts


# --------------------------------------------------------------------------------------------
# Shipped facts for released versions


def shipped_versions() -> List[str]:
    """Return the vLLM versions with shipped facts, oldest first."""
    names = [p.name[: -len(".json")] for p in SHIPPED_DIR.glob("*.json")] if SHIPPED_DIR.is_dir() else []
    return sorted(names, key=release)


def shipped_release_for(version: str) -> str:
    """Return the shipped facts version that stands for `version`, read by the tolerant parser.

    The same version if shipped; else the release with the same major.minor.micro (a hotfix:
    0.10.1 -> 0.10.1.1; pre-releases, local and vendor builds: 0.8.5rc1, 0.8.5+cu121,
    0.8.5-corex.4.2 -> 0.8.5); else the nearest shipped release below it. An unreadable
    version ("dev") is a source build, taken as the newest. Raise LintInputError for versions
    older than any shipped.
    """
    from patchops.errors import LintInputError

    known = shipped_versions()
    if not str(version or "").strip():
        raise LintInputError(f"vLLM version {version!r} is empty; shipped facts exist for: "
                             f"{', '.join(known) or 'none'}")
    if str(version) in known:
        return str(version)
    wanted = micro(release(str(version)))
    same = [v for v in known if micro(release(v)) == wanted]
    if same:
        return same[-1]
    below = [v for v in known if release(v) <= wanted]
    if not below:
        raise LintInputError(
            f"no shipped facts for vLLM {version} (older than any supported release); "
            f"shipped facts exist for: {', '.join(known) or 'none'}")
    return below[-1]


def facts_for_version(version: str) -> Facts:
    """Return shipped facts for `version` (see shipped_release_for); origin names the one used."""
    chosen = shipped_release_for(version)
    facts = Facts.from_json((SHIPPED_DIR / f"{chosen}.json").read_text(encoding="utf-8"))
    if parse_release(str(version)) is None:
        facts = facts.replace(origin=f"shipped facts from vllm-{chosen} wheel ({version} is not a "
                                     "release number: read as the newest)")
    elif chosen != str(version):
        facts = facts.replace(origin=f"shipped facts from vllm-{chosen} wheel (nearest to {version})")
    return facts
