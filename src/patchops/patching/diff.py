"""Unified diffs of what patchops changed, with site-relative paths `git apply` and `patch -p1` take.

`diff` shows each recorded file (or one patchset's files, or one file) against the original
the store keeps, so a hand edit after patchops shows too. `export` shows what one patchset
does to a copy's pristine files, computed in memory, for review or for a machine without
patchops. Paths read `a/vllm/engine/arg_utils.py`: relative to the site-packages folder.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from patchops.core.errors import PatchopsError, PatchsetError
from patchops.host.locate import distinct_copies
from patchops.store.site_store import Store, sha256
from patchops.store.state import FileEntry


@dataclass(frozen=True)
class FileDiff:
    """One file's diff, and the copies that show exactly this diff."""

    path: str                       # relative to the site dir: vllm/engine/arg_utils.py
    sites: Tuple[Path, ...]
    patchsets: Tuple[str, ...]      # what patchops recorded for the file
    text: str                       # unified diff, "" when the file is its original
    drifted: bool = False           # changed since patchops wrote it


def unified(old: bytes, new: bytes, path: str) -> str:
    """Return a git-style unified diff of one file, `path` relative to the site dir."""
    try:
        a, b = old.decode("utf-8"), new.decode("utf-8")
    except UnicodeDecodeError:
        raise PatchopsError(f"{path}: not UTF-8 text, so there is no text diff") from None
    lines = list(difflib.unified_diff(a.splitlines(keepends=True), b.splitlines(keepends=True),
                                      fromfile=f"a/{path}", tofile=f"b/{path}"))
    if not lines:
        return ""
    out = [f"diff --git a/{path} b/{path}\n"]
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def diff(copies: Sequence, target: Optional[str] = None) -> List[FileDiff]:
    """Return each recorded file's diff against its stored original, one per distinct diff.

    `target` is a patchset name (its files), a file (absolute, `vllm/...` or package-relative),
    or None (every file patchops recorded in the copies).
    """
    is_file = target is not None and (target.endswith(".py") or "/" in target)
    found: Dict[Tuple[str, str], FileDiff] = {}
    any_recorded = False
    for copy in distinct_copies(copies):
        store = Store(copy.site_dir, copy.package_dir.name)
        state = store.read_state() if store.exists() else None
        entries = state.files if state is not None else {}
        any_recorded = any_recorded or bool(entries)
        wanted = _select(copy, entries, target, is_file)
        for rel in wanted:
            entry = entries[rel]
            path = f"{copy.package_dir.name}/{rel}"
            try:
                current = (copy.package_dir / rel).read_bytes()
            except FileNotFoundError:
                current = b""
            text = unified(store.get_object(entry.original), current, path)
            key = (path, text)
            sites = found[key].sites if key in found else ()
            found[key] = FileDiff(path, sites + (copy.site_dir,), tuple(entry.patchsets), text,
                                  sha256(current) != entry.written)
    if target is not None and not found:
        where = ", ".join(str(c.site_dir) for c in copies)
        if is_file:
            raise PatchopsError(f"{target}: patchops has no stored original of this file in {where}; "
                                f"`patchops verify` tells whether it differs from what pip installed")
        if not any_recorded:
            raise PatchopsError(f"patchops has not patched {where}")
        raise PatchopsError(f'patchset "{target}" is not applied in {where}; `patchops export '
                            f'{target}` shows what it would change')
    return sorted(found.values(), key=lambda d: d.path)


def export(copies: Sequence, patchset) -> str:
    """Return what `patchset` does to the pristine files of the copies, as one patch.

    The pristine text is the store's original where patchops patched the file, else the file
    as it is. Copies whose patches differ (two versions) must be exported one at a time.
    """
    from patchops.patchset.states import PatchState
    from patchops.patchset.rewrite import rewrite_source

    patches: Dict[str, List[Path]] = {}
    for copy in distinct_copies(copies):
        store = Store(copy.site_dir, copy.package_dir.name)
        entries = store.read_state().files if store.exists() else {}
        chunks = []
        for rel in patchset.files_for(copy.version):
            path = copy.package_dir / rel
            entry: Optional[FileEntry] = entries.get(rel)
            if entry is not None:
                base = store.get_object(entry.original)
            else:
                try:
                    base = path.read_bytes()
                except FileNotFoundError:
                    raise PatchsetError(f'patchset "{patchset.name}": {path} does not exist') from None
            done = rewrite_source(base.decode("utf-8"), rel, [patchset], copy.version,
                                  display_path=str(path))
            for result in done.results:
                if result.state == PatchState.DRIFT:
                    raise PatchsetError(f"cannot export: {result.message}")
            chunks.append(unified(base, done.new_source.encode("utf-8"), f"{copy.package_dir.name}/{rel}"))
        patches.setdefault("".join(chunks), []).append(copy.site_dir)
    if len(patches) > 1:
        sites = "; ".join(", ".join(map(str, s)) for s in patches.values())
        raise PatchopsError(f'patchset "{patchset.name}" changes these copies differently ({sites}); '
                            f"export one with --site DIR")
    [text] = patches or [""]
    if not text:
        where = ", ".join(str(c.site_dir) for c in copies)
        raise PatchopsError(f'nothing to export: patchset "{patchset.name}" changes nothing in {where} '
                            f"(already satisfied there, or not for its vLLM version)")
    return text


def _select(copy, entries: Dict[str, FileEntry], target: Optional[str], is_file: bool) -> List[str]:
    if target is None:
        return sorted(entries)
    if not is_file:
        return sorted(rel for rel, entry in entries.items() if target in entry.patchsets)
    given = Path(target)
    if given.is_absolute() or os.path.exists(target):
        try:
            rel = Path(os.path.realpath(given)).relative_to(os.path.realpath(copy.package_dir)).as_posix()
        except ValueError:
            return []
    else:
        prefix = copy.package_dir.name + "/"
        rel = target[len(prefix):] if target.startswith(prefix) else target
    return [rel] if rel in entries else []
