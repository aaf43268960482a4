"""The shipped facts of every release, stored compactly: one xz pack per minor series.

Most facts do not change between the releases of one series (0.8.0 ... 0.8.5.post1), so a pack
holds one base release in full and, for every release of the series, only the top-level keys
and flags that differ from the base (a flag that is gone is null). `shipped/index.json` lists
the releases of each pack, so naming them opens no pack. Loading a release decompresses its
series' pack once per process; `scripts/generate_facts.py` writes packs, nothing edits them.
"""

from __future__ import annotations

import json
import lzma
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Set

from patchops.lint.vllm.releases import parse_release, release

PACK_DIR = Path(__file__).resolve().parent / "shipped"
INDEX = PACK_DIR / "index.json"


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
def _pack_text(name: str) -> str:
    return lzma.decompress((PACK_DIR / f"{name}.json.xz").read_bytes()).decode("utf-8")


def release_dict(version: str) -> Optional[Dict[str, Any]]:
    """Return the facts of shipped release `version` as Facts.to_dict() wrote them, None if not shipped."""
    name = series(version) if parse_release(version) is not None else None
    if name is None or version not in index().get(name, ()):
        return None
    pack = json.loads(_pack_text(name))   # parsed per call: callers never share mutable values
    return expand(pack["base"], pack["releases"][version])


def expand(base: Dict[str, Any], delta: Dict[str, Any]) -> Dict[str, Any]:
    """Return `base` with a release's delta applied."""
    data = dict(base, **delta.get("set", {}))
    flags = dict(base["flags"])
    for dest, flag in delta.get("flags", {}).items():
        if flag is None:
            flags.pop(dest, None)
        else:
            flags[dest] = flag
    data["flags"] = dict(sorted(flags.items()))
    return data


def delta(base: Dict[str, Any], data: Dict[str, Any]) -> Dict[str, Any]:
    """Return what `expand` needs to rebuild `data` from `base`."""
    changed = {k: v for k, v in data.items() if k != "flags" and base.get(k) != v}
    flags = {d: f for d, f in data["flags"].items() if base["flags"].get(d) != f}
    flags.update({d: None for d in base["flags"] if d not in data["flags"]})
    out: Dict[str, Any] = {}
    if changed:
        out["set"] = changed
    if flags:
        out["flags"] = flags
    return out


def pack_bytes(releases: Dict[str, Dict[str, Any]]) -> bytes:
    """Return one series' pack: the base that keeps the deltas smallest, and every release's delta."""
    def cost(base: str) -> int:
        return sum(len(json.dumps(delta(releases[base], d), sort_keys=True)) for d in releases.values())

    base = min(sorted(releases, key=_order), key=cost)
    pack = {"base": releases[base], "releases": {v: delta(releases[base], d) for v, d in releases.items()}}
    text = json.dumps(pack, sort_keys=True, separators=(",", ":"))
    return lzma.compress(text.encode("utf-8"), preset=9 | lzma.PRESET_EXTREME)


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
        path = PACK_DIR / f"{name}.json.xz"
        path.write_bytes(pack_bytes(members))
        written.append(path)
    lines = [f"  {json.dumps(name)}: {json.dumps(list(members))}"   # one series a line
             for name, members in sorted(grouped.items(), key=lambda kv: release(kv[0]))]
    INDEX.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    return written


def forget() -> None:
    """Drop what this process read of the packs (after the generator rewrote them)."""
    index.cache_clear()
    _pack_text.cache_clear()


def every_release_dict(versions: Iterable[str]) -> Dict[str, Dict[str, Any]]:
    """Return version -> facts dict for the shipped `versions` (the generator's starting point)."""
    return {v: data for v in versions if (data := release_dict(v)) is not None}
