"""The shipped facts of every release, stored compactly: one xz pack per minor series.

Most facts do not change between the releases of one series (0.8.0 ... 0.8.5.post1), so a pack
holds one base release in full and, for every release of the series, only what differs from
the base: values replaced, and entries added, changed or dropped in a mapping (flags by dest,
architectures, config checks, ...). `shipped/index.json` lists
the releases of each pack, so naming them opens no pack. Loading a release decompresses its
series' pack once per process; `scripts/generate_facts.py` writes packs, nothing edits them.
"""

from __future__ import annotations

import json
import lzma
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Set, Tuple

from patchops.lint.vllm.releases import parse_release, release

PACK_DIR = Path(__file__).resolve().parent / "shipped"
INDEX = PACK_DIR / "index.json"
FLAG_KEYS = ("flags", "option_inverses")   # what shipped_option_facts() reads of every release


def series(version: str) -> str:
    """Return the minor series a release belongs to: "0.10.1.1" -> "0.10"."""
    parts = tuple(release(version).release) + (0,)
    return f"{parts[0]}.{parts[1]}"


@lru_cache(maxsize=None)
def index() -> Dict[str, List[str]]:
    """Return series -> its shipped releases, oldest first ({} when none are shipped)."""
    if not INDEX.is_file():
        return {}
    return json.loads(INDEX.read_text(encoding="utf-8"))


def shipped_releases() -> List[str]:
    """Return every release with shipped facts, oldest first."""
    return sorted((v for versions in index().values() for v in versions), key=_order)


def _order(version: str):
    return (release(version), version)   # 0.6.3 before 0.6.3.post1


@lru_cache(maxsize=None)
def _pack_lines(name: str) -> Tuple[str, ...]:
    text = lzma.decompress((PACK_DIR / f"{name}.json.xz").read_bytes()).decode("utf-8")
    return tuple(text.split("\n"))


def release_dict(version: str) -> Optional[Dict[str, Any]]:
    """Return the facts of shipped release `version` as Facts.to_dict() wrote them, None if not shipped.

    Parsed anew on each call (callers never share mutable values), and only what the release
    needs: the base's lines and the release's two delta lines (see `pack_bytes`).
    """
    name = series(version) if parse_release(version) is not None else None
    if name is None or version not in index().get(name, ()):
        return None
    lines = _pack_lines(name)
    header = json.loads(lines[0])
    keys, at = header["keys"], 1 + len(header["keys"]) + 2 * header["releases"].index(version)
    base = {key: json.loads(line) for key, line in zip(keys, lines[1:])}
    return expand(expand(base, json.loads(lines[at])), json.loads(lines[at + 1]))


def flag_tables() -> Iterator[Tuple[str, Dict[str, Any], Dict[str, Any]]]:
    """Yield (release, its flags, its option_inverses) for every shipped release, oldest first.

    Only those lines are parsed. The raw dicts are shared between releases: never change them.
    """
    for name in index():
        lines = _pack_lines(name)
        header = json.loads(lines[0])
        keys = header["keys"]
        base = {key: json.loads(lines[1 + keys.index(key)]) for key in FLAG_KEYS}
        for i, version in enumerate(header["releases"]):
            data = expand(base, json.loads(lines[1 + len(keys) + 2 * i]))
            yield version, data["flags"], data["option_inverses"]


def expand(base: Dict[str, Any], delta: Dict[str, Any]) -> Dict[str, Any]:
    """Return `base` with a release's delta applied (keys stay sorted, as the pack wrote them)."""
    data = dict(base, **delta.get("set", {}))
    for key in set(delta.get("merge", {})) | set(delta.get("drop", {})):
        inner = dict(data[key], **delta.get("merge", {}).get(key, {}))
        for gone in delta.get("drop", {}).get(key, ()):
            del inner[gone]
        data[key] = dict(sorted(inner.items()))
    return data


def delta(base: Dict[str, Any], data: Dict[str, Any]) -> Dict[str, Any]:
    """Return what `expand` needs to rebuild `data` from `base`: a mapping in both changes by key."""
    out: Dict[str, Dict[str, Any]] = {"set": {}, "merge": {}, "drop": {}}
    for key, value in data.items():
        old = base.get(key)
        if old == value and key in base:
            continue
        if isinstance(old, dict) and isinstance(value, dict):
            merged = {k: v for k, v in value.items() if k not in old or old[k] != v}
            dropped = sorted(k for k in old if k not in value)
            if merged:
                out["merge"][key] = merged
            if dropped:
                out["drop"][key] = dropped
        else:
            out["set"][key] = value
    return {part: changes for part, changes in out.items() if changes}


def pack_bytes(releases: Dict[str, Dict[str, Any]]) -> bytes:
    """Return one series' pack, xz-compressed lines of JSON: a header (the base release, its keys,
    the releases in order), the base's value of each key on its own line, then two delta lines
    per release from the base that keeps the deltas smallest: its FLAG_KEYS, the rest."""
    def dumps(value: Any) -> str:
        return json.dumps(value, sort_keys=True, separators=(",", ":"))

    def split(change: Dict[str, Any], flag_part: bool) -> Dict[str, Any]:
        parts = {part: {k: v for k, v in keyed.items() if (k in FLAG_KEYS) == flag_part}
                 for part, keyed in change.items()}
        return {part: keyed for part, keyed in parts.items() if keyed}

    releases = json.loads(json.dumps(releases))   # tuples as lists: deltas compare what the pack holds
    order = sorted(releases, key=_order)
    base = min(order, key=lambda b: sum(len(dumps(delta(releases[b], releases[v]))) for v in order))
    keys = sorted(releases[base])
    lines = [dumps({"base": base, "keys": keys, "releases": order})] + [dumps(releases[base][k]) for k in keys]
    for version in order:
        change = delta(releases[base], releases[version])
        lines += [dumps(split(change, True)), dumps(split(change, False))]
    return lzma.compress("\n".join(lines).encode("utf-8"), preset=9 | lzma.PRESET_EXTREME)


def write(releases: Dict[str, Dict[str, Any]], only: Optional[Set[str]] = None) -> List[Path]:
    """Write the index and the packs (those of series `only`, default all) for `releases`
    (version -> Facts.to_dict(), every release shipped)."""
    grouped: Dict[str, Dict[str, Dict[str, Any]]] = {}
    for version in sorted(releases, key=_order):
        grouped.setdefault(series(version), {})[version] = releases[version]
    written = []
    for name, members in grouped.items():
        if only is not None and name not in only:
            continue
        written.append(_replace(PACK_DIR / f"{name}.json.xz", pack_bytes(members)))
    lines = [f"  {json.dumps(name)}: {json.dumps(list(members))}"   # one series a line
             for name, members in sorted(grouped.items(), key=lambda kv: release(kv[0]))]
    _replace(INDEX, ("{\n" + ",\n".join(lines) + "\n}\n").encode("utf-8"))
    return written


def _replace(path: Path, data: bytes) -> Path:
    """Write `path` whole or not at all: a reader never sees half a pack."""
    staging = path.with_name(path.name + ".tmp")
    staging.write_bytes(data)
    os.replace(staging, path)
    return path


def forget() -> None:
    """Drop what this process read of the packs (after the generator rewrote them)."""
    index.cache_clear()
    _pack_lines.cache_clear()


def every_release_dict(versions: Iterable[str]) -> Dict[str, Dict[str, Any]]:
    """Return version -> facts dict for the shipped `versions` (the generator's starting point)."""
    return {v: data for v in versions if (data := release_dict(v)) is not None}
