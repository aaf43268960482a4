"""Read the version of a vLLM copy on disk without importing it: _version.py, else dist-info."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path
from typing import Dict, Optional, Tuple, Union

PathLike = Union[str, "os.PathLike[str]"]

VERSION_FILE = "vllm/_version.py"
UNKNOWN = "unknown"


def read_version(site_dir: PathLike) -> Tuple[Optional[str], str]:
    """Return (version, where it was read) for the vLLM in `site_dir`, without importing it."""
    site_dir = Path(site_dir)
    version = _version_from_module(site_dir / VERSION_FILE)
    if version is not None:
        return version, VERSION_FILE
    found = _version_from_metadata(site_dir)
    if found is not None:
        return found
    return None, UNKNOWN


def _version_from_module(path: Path) -> Optional[str]:
    """Return the string assigned to __version__ or version in a setuptools-scm _version.py.

    The string, not version_tuple: 0.6.3.post1's tuple is (0, 6, 3).
    """
    tree = parse_file(str(path))
    for node in tree.body if tree is not None else ():
        value = assigned_value(node, {"__version__", "version"})
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return value.value
    return None


def parse_file(path: str) -> Optional[ast.Module]:
    """Return the module `path` holds, None if it cannot be read or parsed."""
    try:
        with open(path, "rb") as handle:
            return ast.parse(handle.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return None


def assigned_value(node: ast.stmt, names: set) -> Optional[ast.expr]:
    """Return the value a top-level `a = b = value` or `a: T = value` gives one of `names`."""
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        targets = [node.target]
    else:
        return None
    if any(isinstance(target, ast.Name) and target.id in names for target in targets):
        return node.value
    return None


def _version_from_metadata(site_dir: Path) -> Optional[Tuple[str, str]]:
    """Return (version, source) from the newest vllm-*.dist-info/METADATA in `site_dir`."""
    try:
        names = os.listdir(site_dir)
    except OSError:
        return None
    found = []
    for name in names:
        if not (name.lower().startswith("vllm-") and name.endswith(".dist-info")):
            continue
        metadata = site_dir / name / "METADATA"
        headers = _headers(metadata)
        # `vllm-flash-attn-2.6.1.dist-info` matches the glob but is another distribution.
        if _normalise(headers.get("name", "")) == "vllm" and headers.get("version"):
            found.append((metadata.stat().st_mtime, name, headers["version"]))
    if not found:
        return None
    # Several only after an interrupted upgrade; pip wrote the newest last.
    _, name, version = max(found)
    return version, f"{name}/METADATA"


def _headers(path: Path) -> Dict[str, str]:
    """Return the lower-cased headers of a METADATA file, stopping at the description."""
    headers: Dict[str, str] = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if not line.strip():
                    break
                key, sep, value = line.partition(":")
                if sep and not key.startswith((" ", "\t")):
                    headers.setdefault(key.strip().lower(), value.strip())
    except OSError:
        pass
    return headers


def _normalise(name: str) -> str:
    """Normalise a distribution name as PEP 503 does."""
    return re.sub(r"[-_.]+", "-", name).lower()
