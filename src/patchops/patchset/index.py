"""Answer what status and a no-op apply ask of a patchset from its YAML's hash, without loading it.

Loading a patchset imports yaml, packaging and every op: a third of a `status` run. What
status and planning ask before any file needs rewriting (name, notes, version range, the
files its ops target on a vLLM version) depends only on the YAML's text, its path and
patchops itself, so it is kept under $PATCHOPS_CACHE/patchsets/ once the patchset loaded;
the ops load when something needs them. An entry holds all three and answers only when they
are the same (a crc of the path names its file: importing hashlib would cost `status` its startup budget). A patchset that fails to load is never indexed, so
its error is the loader's every time. A cache that cannot be read or written is only slower.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Iterable, Optional, Tuple, Union

from patchops import __version__
from patchops.core.cache import cache_root, write_json
from patchops.patchset.model import Patchset, load_patchset_text, patchset_file, read_patchset_file


class IndexedPatchset:
    """A patchset as the index knows it: a Patchset's attributes, its ops loaded on first use.

    `applies_to` and `files_for` answer from the index for versions asked before (the
    answer of an unknown version, None, is the one of "", which no version parser reads).
    """

    def __init__(self, path: Path, text: str, key: str, entry: dict,
                 loaded: Optional[Patchset] = None):
        self.path = path
        self.text = text
        self.name: str = entry["name"]
        self.summary: str = entry["summary"]
        self.description: str = entry["description"]
        self.notes: str = entry["notes"]
        self.versions: str = entry["versions"]   # as str(SpecifierSet) spells it
        self.files: Tuple[str, ...] = tuple(entry["files"])
        if not all(isinstance(v, str) and isinstance(a, bool) and isinstance(f, list)
                   for v, (a, f) in entry["by_version"].items()):
            raise ValueError("malformed index entry")
        self._key = key
        self._entry = entry
        self._loaded = loaded

    def __repr__(self) -> str:
        return f"IndexedPatchset({self.name!r}, {str(self.path)!r})"

    def loaded(self) -> Patchset:
        """Return the patchset read from its YAML, with its ops (yaml and the ops load here)."""
        if self._loaded is None:
            self._loaded = load_patchset_text(self.text, self.path)
        return self._loaded

    @property
    def ops(self):
        return self.loaded().ops

    def ops_for(self, version: Optional[str]):
        return self.loaded().ops_for(version)

    def applies_to(self, version: Optional[str]) -> bool:
        return self._answer(version)[0]

    def files_for(self, version: Optional[str]) -> Tuple[str, ...]:
        return self._answer(version)[1]

    def _answer(self, version: Optional[str]) -> Tuple[bool, Tuple[str, ...]]:
        known = self._entry["by_version"]
        asked = version or ""
        if asked not in known:
            patchset = self.loaded()
            known[asked] = [patchset.applies_to(version), list(patchset.files_for(version))]
            write_json(_entry_path(self._key), self._entry)
        applies, files = known[asked]
        return bool(applies), tuple(files)


def load(path: Union[str, Path]) -> Union[Patchset, IndexedPatchset]:
    """Read one patchset file, answering from the index when its YAML was loaded before."""
    path = Path(path)
    return load_text(read_patchset_file(path), path)


def load_text(text: str, path: Path) -> Union[Patchset, IndexedPatchset]:
    """Check a patchset's YAML `text` as if read from `path`, answering from the index if it can."""
    path = Path(path)
    key = _key(path)
    source = [__version__, str(path), text]
    try:
        entry = json.loads(_entry_path(key).read_text(encoding="utf-8"))
        if entry["source"] == source:
            return IndexedPatchset(path, text, key, entry)
    except (OSError, ValueError, TypeError, KeyError):
        pass
    patchset = load_patchset_text(text, path)
    entry = {"source": source, "name": patchset.name, "summary": patchset.summary,
             "description": patchset.description, "notes": patchset.notes,
             "versions": str(patchset.versions), "files": list(patchset.files), "by_version": {}}
    write_json(_entry_path(key), entry)
    return IndexedPatchset(path, text, key, entry, loaded=patchset)


def get(name: str, dirs: Iterable[Union[str, Path]] = ()) -> Union[Patchset, IndexedPatchset]:
    """Load the patchset called `name` (or at path `name`), as patchset.get_patchset does."""
    return load(patchset_file(name, dirs))


def _key(path: Path) -> str:
    return f"{zlib.crc32(str(path).encode('utf-8', 'surrogateescape')):08x}"


def _entry_path(key: str) -> Path:
    return cache_root() / "patchsets" / f"{key}.json"
