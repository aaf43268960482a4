"""Rewrite one target file's bytes for a plan, a status or a rollback, and word what it found.

libcst (via `patchops.patchset.rewrite`) is imported here, only when a file must be parsed: files whose
state the store can vouch for by hash never get here, so a no-op re-apply or a status of
patched copies stays cheap.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

from patchops.core.errors import PatchsetError
from patchops.store.site_store import sha256

if TYPE_CHECKING:
    from patchops.patchset.model import Patchset
    from patchops.patchset.rewrite import FileRewrite



def missing(rel: str, patchsets: Sequence["Patchset"], version: Optional[str], path: Path):
    """Report patchsets on a target file that does not exist (drift unless `sites` allows 0)."""
    from patchops.patchset.rewrite import missing_file_results

    return missing_file_results(rel, patchsets, version, display_path=str(path))


# Vendor images usually hold byte-identical copies (lib and lib64): each distinct file is parsed
# once per process. Keyed by content, target, the patchset objects (by identity: their op
# parameters may hold lists) and version; values keep the patchsets alive, so an id is never
# reused, and the path the rewrite ran under, so messages can be re-pointed at another copy.
_REWRITES: Dict[tuple, Tuple[tuple, str, "FileRewrite"]] = {}


def rewrite(data: bytes, rel: str, patchsets: Sequence["Patchset"], version: Optional[str],
            path: Path, problems: List[str]):
    """Run the libcst rewrite of one file's bytes, once per distinct file; None if not UTF-8."""
    from patchops.patchset.rewrite import rewrite_source

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(f"{path}: not valid UTF-8 ({exc.reason} at byte {exc.start})")
        return None
    key = (sha256(data), rel, tuple(map(id, patchsets)), version)
    if key in _REWRITES:
        from dataclasses import replace  # FileRewrite is a dataclass; status imports this module

        _, first_path, done = _REWRITES[key]
        return replace(done, results=tuple(
            replace(r, message=r.message.replace(first_path, str(path))) for r in done.results))
    done = rewrite_source(text, rel, patchsets, version, display_path=str(path))
    _REWRITES[key] = (tuple(patchsets), str(path), done)
    return done


def check_compiles(new: bytes, path: Path, names: Sequence[str]) -> None:
    """Refuse a rewrite that would not compile: the next `import vllm` would fail."""
    try:
        compile(new, str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise PatchsetError(
            f"{path}:{exc.lineno or 0}: patchset {', '.join(names) or '?'} would produce "
            f"invalid Python ({exc.msg}); nothing was written. Fix the patchset") from exc


def where(path: Path, result) -> str:
    """Return a rewrite result's message, naming file:line if it does not already."""
    message = (getattr(result, "message", "") or "").strip() or f"patchset {result.patchset!r} drifted"
    if str(path) in message:
        return message
    line = _first_line(getattr(result, "sites", ()))
    where = f"{path}:{line}" if line else str(path)
    return f"{where}: {message}"


def _first_line(sites) -> Optional[int]:
    for site in sites or ():
        if isinstance(site, int):
            return site
        if isinstance(site, (tuple, list)) and site and isinstance(site[0], int):
            return site[0]
        for attr in ("line", "lineno"):
            value = getattr(site, attr, None)
            if isinstance(value, int):
                return value
    return None
