"""Find every vLLM copy a Python process could import, which one wins, and its version.

Vendor images often hold several copies (CoreX ships one in `lib` and one in `lib64`, pip
adds another to site-packages), and patching the one that is not imported changes nothing.
Runs on every command, so it never imports vLLM, uses only the standard library and reads
a handful of small files; it never walks a tree.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

from patchops.core.errors import LocateError
from patchops.host.installed_version import read_version
from patchops.core.records import record
from patchops.host.search_path import DEFAULT_ROOTS, Entry, no_vllm_message, search_entries, site_dir_of

PathLike = Union[str, "os.PathLike[str]"]

EXPLICIT = "explicit path"


@record(frozen=True)
class VllmCopy:
    """One vLLM package on disk, however many spellings lead to it."""

    site_dir: Path              # folder holding vllm/: first spelling found, absolute, unresolved
    package_dir: Path           # site_dir / "vllm"
    version: Optional[str]      # "0.8.5", None if unknown
    version_source: str         # "vllm/_version.py", "vllm-0.8.5.dist-info/METADATA" or "unknown"
    found_via: Tuple[str, ...]  # "PYTHONPATH", "sys.path", "cwd", "root DIR", "x.pth in root DIR"
    aliases: Tuple[Path, ...]   # other site dirs that reach the same files
    wins: bool                  # the copy `import vllm` loads
    importable: bool = True     # on the import path (False: found only under a vendor root)


@record(frozen=True)
class Location:
    """Every vLLM copy found for one interpreter, in import order."""

    python: str                               # interpreter whose path was searched
    search_path: Tuple[Tuple[str, str], ...]  # (path, origin) in import order, then roots
    copies: Tuple[VllmCopy, ...]              # in import order; root-only copies last

    @property
    def winner(self) -> Optional[VllmCopy]:
        """Return the copy `import vllm` loads, None if no copy is on the import path."""
        return next((copy for copy in self.copies if copy.wins), None)


def locate(
    *,
    python: Optional[str] = None,
    roots: Sequence[PathLike] = (),
    env: Optional[Mapping[str, str]] = None,
    default_roots: Sequence[PathLike] = DEFAULT_ROOTS,
) -> Location:
    """Find the vLLM copies `python` (default: this interpreter) could import, plus vendor roots.

    `env` is the environment vLLM will run with (default: os.environ): its PYTHONPATH and
    PATCHOPS_ROOTS count. `roots` are extra site dirs that must exist (`--root DIR`);
    `default_roots` and PATCHOPS_ROOTS entries that do not exist are skipped.
    """
    env = os.environ if env is None else env
    entries = search_entries(python, roots, env, default_roots, os.getcwd())
    return Location(
        python=sys.executable if python is None else python,
        search_path=tuple((entry.path, entry.origin) for entry in entries),
        copies=_copies(entries),
    )


def distinct_copies(copies: Sequence[VllmCopy]) -> List[VllmCopy]:
    """Return the copies that reach different files: a lib64 -> lib symlink is one copy twice."""
    seen = set()
    distinct = []
    for copy in copies:
        key = os.path.realpath(copy.package_dir)
        if key not in seen:
            seen.add(key)
            distinct.append(copy)
    return distinct


def locate_site(site_dir: PathLike) -> VllmCopy:
    """Describe the vLLM copy in one given folder: a site dir holding vllm/, or vllm/ itself."""
    given = os.path.abspath(os.fspath(site_dir))
    found = site_dir_of(given)
    if found is None:
        raise LocateError(no_vllm_message(given))
    version, source = read_version(Path(found))
    return VllmCopy(
        site_dir=Path(found),
        package_dir=Path(found, "vllm"),
        version=version,
        version_source=source,
        found_via=(EXPLICIT,),
        aliases=(),
        # Whether it is imported depends on an interpreter this call does not ask; see locate().
        wins=False,
    )


class _Group:
    """The spellings found so far for one package directory."""

    def __init__(self, site_dir: str):
        self.site_dir = site_dir
        self.aliases: List[str] = []
        self.origins: List[str] = []
        self.importable = False

    def add(self, entry: Entry) -> None:
        if entry.path != self.site_dir and entry.path not in self.aliases:
            self.aliases.append(entry.path)
        if entry.origin not in self.origins:
            self.origins.append(entry.origin)
        self.importable = self.importable or entry.importable


def _copies(entries: List[Entry]) -> Tuple[VllmCopy, ...]:
    """Group entries holding vllm/ by the files they reach, so no copy is listed twice.

    Two spellings are the same copy when vllm/ has the same (st_dev, st_ino) (symlinks, bind
    mounts) or the same realpath.
    """
    groups: List[_Group] = []
    by_key: Dict[object, _Group] = {}
    for entry in entries:
        package = os.path.join(entry.path, "vllm")
        if not os.path.isfile(os.path.join(package, "__init__.py")):
            continue
        try:
            stat = os.stat(package)
        except OSError:
            continue
        keys = [("inode", stat.st_dev, stat.st_ino), ("realpath", os.path.realpath(package))]
        group = next((by_key[key] for key in keys if key in by_key), None)
        if group is None:
            group = _Group(entry.path)
            groups.append(group)
        for key in keys:
            by_key.setdefault(key, group)
        group.add(entry)
    # Root-only copies go last; within each kind, keep the order they were found in.
    groups.sort(key=lambda group: not group.importable)
    winner = groups[0] if groups and groups[0].importable else None
    return tuple(_copy(group, group is winner) for group in groups)


def _copy(group: _Group, wins: bool) -> VllmCopy:
    version, source = read_version(Path(group.site_dir))
    return VllmCopy(
        site_dir=Path(group.site_dir),
        package_dir=Path(group.site_dir, "vllm"),
        version=version,
        version_source=source,
        found_via=tuple(group.origins),
        aliases=tuple(Path(alias) for alias in group.aliases),
        wins=wins,
        importable=group.importable,
    )
