"""Read the project's patchops settings: `patchops.toml`, or `[tool.patchops]` in pyproject.toml.

Found as ruff finds its own: the nearest folder, from the current one upwards, holding a
`patchops.toml` (which wins) or a `pyproject.toml` with a `[tool.patchops]` table. Command-line
options add to the file's lists and override its single values. A pyproject.toml is only
parsed when a line can start that table, so a project without settings pays one read.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from patchops.core.errors import UsageError
from patchops.core.records import field, record

OWN_FILE = "patchops.toml"
PYPROJECT = "pyproject.toml"
HARDWARE_KEYS = {"gpus": int, "memory_gib": (int, float), "platform": str, "name": str,
                 "compute_capability": (str, int, float), "host_memory_gib": (int, float)}
KEYS = ("select", "ignore", "per-file-ignores", "vllm-version", "python", "hardware", "patchsets",
        "fetch")


@record(frozen=True)
class Settings:
    """What the settings file says; every field empty when there is none."""

    path: Optional[Path] = None
    select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()  # (glob, selectors)
    vllm_version: Optional[str] = None     # for inputs that state no version
    python: Optional[str] = None           # the interpreter that runs vLLM
    hardware: Dict[str, Any] = field(default_factory=dict)  # for specs that state none
    patchsets: Tuple[Path, ...] = ()       # extra patchset folders, relative to the file
    fetch: Optional[bool] = None           # whether lint may ask the Hub for a model's config.json

    def ignores_for(self, path: str) -> Tuple[str, ...]:
        """Return the selectors `per-file-ignores` gives `path` (globs as ruff: `name` or `dir/**`)."""
        if self.path is None or path.startswith("<"):
            return ()
        try:
            rel = Path(os.path.abspath(path)).relative_to(self.path.parent).as_posix()
        except ValueError:
            rel = Path(path).as_posix()
        found: List[str] = []
        for pattern, selectors in self.per_file_ignores:
            if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(os.path.basename(rel), pattern):
                found.extend(selectors)
        return tuple(found)


def find(start: Optional[Path] = None) -> Optional[Path]:
    """Return the settings file for `start` (default: the current folder), None if none."""
    folder = Path(os.path.abspath(start or os.getcwd()))
    for candidate in (folder, *folder.parents):
        own = candidate / OWN_FILE
        if own.is_file():
            return own
        pyproject = candidate / PYPROJECT
        if pyproject.is_file() and _mentions_us(pyproject):
            return pyproject
    return None


def load(path: Optional[Path] = None, *, start: Optional[Path] = None) -> Settings:
    """Read `path` (default: the file find() returns); a file with errors is a UsageError."""
    path = path or find(start)
    if path is None:
        return Settings()
    table = _table(path)
    unknown = [key for key in table if key not in KEYS]
    if unknown:
        import difflib  # only for the hint; every lint run loads the settings

        close = difflib.get_close_matches(unknown[0], KEYS, n=1)
        hint = f"; did you mean `{close[0]}`?" if close else f" (known: {', '.join(KEYS)})"
        raise UsageError(f"{path}: unknown patchops setting `{unknown[0]}`{hint}")
    return Settings(
        path=path,
        select=_strings(path, table, "select"),
        ignore=_strings(path, table, "ignore"),
        per_file_ignores=_per_file(path, table.get("per-file-ignores", {})),
        vllm_version=_string(path, table, "vllm-version"),
        python=_string(path, table, "python"),
        hardware=_hardware(path, table.get("hardware", {})),
        patchsets=tuple(path.parent / folder for folder in _strings(path, table, "patchsets")),
        fetch=_bool(path, table, "fetch"),
    )


# A line that can start a [tool.patchops] table in TOML: its header (keys may be quoted or
# spaced), a bare [tool] table, or a top-level `tool.patchops...` / `tool = {...}` key.
# Compiled on first use (a compile costs a twentieth of a `status`), and only for a file that
# names patchops at all: most never do.
_OUR_TABLE = (rb"""^[ \t]*(\[\[?[ \t]*["']?tool["']?[ \t]*(\]|\.[ \t]*["']?patchops["']?[ \t]*[].])"""
              rb"""|["']?tool["']?[ \t]*(\.[ \t]*["']?patchops|=))""")


def _mentions_us(pyproject: Path) -> bool:
    """Say whether a pyproject.toml may hold [tool.patchops], without parsing it (a comment does not count)."""
    try:
        data = pyproject.read_bytes()
    except OSError:
        return False
    return b"patchops" in data and re.search(_OUR_TABLE, data, re.MULTILINE) is not None


def _table(path: Path) -> Dict[str, Any]:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: invalid TOML: {exc}") from None
    if path.name == PYPROJECT:
        data = data.get("tool", {}).get("patchops", {})
    if not isinstance(data, dict):
        raise UsageError(f"{path}: [tool.patchops] must be a table")
    return data


def _strings(path: Path, table: Dict[str, Any], key: str) -> Tuple[str, ...]:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise UsageError(f"{path}: `{key}` must be a list of strings, such as [\"PO2\", \"PO301\"]")
    return tuple(value)


def _string(path: Path, table: Dict[str, Any], key: str) -> Optional[str]:
    value = table.get(key)
    if value is not None and not isinstance(value, str):
        raise UsageError(f"{path}: `{key}` must be a string, such as \"0.8.5\"")
    return value


def _bool(path: Path, table: Dict[str, Any], key: str) -> Optional[bool]:
    value = table.get(key)
    if value is not None and not isinstance(value, bool):
        raise UsageError(f"{path}: `{key}` must be true or false")
    return value


def _per_file(path: Path, table: Any) -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
    if not isinstance(table, dict):
        raise UsageError(f"{path}: `per-file-ignores` must be a table of glob = [codes]")
    return tuple((glob, _strings(path, table, glob)) for glob in table)


def _hardware(path: Path, table: Any) -> Dict[str, Any]:
    if not isinstance(table, dict):
        raise UsageError(f"{path}: `hardware` must be a table, such as {{gpus = 4, platform = \"cuda\"}}")
    for key, value in table.items():
        kind = HARDWARE_KEYS.get(key)
        if kind is None:
            raise UsageError(f"{path}: unknown key `{key}` in `hardware` "
                             f"(expected: {', '.join(HARDWARE_KEYS)})")
        if isinstance(value, bool) or not isinstance(value, kind):
            raise UsageError(f"{path}: `hardware.{key}` has the wrong type ({type(value).__name__})")
    return dict(table)
