"""What the patchsets patchops applied to a copy changed, as `explain` names it.

The store records which patchsets went into which of a copy's files (state.json, each
patchset's YAML kept in objects/). A set-keyword op decides what a config field becomes
(corex-eager-allreduce puts `enforce_eager=self.enforce_eager` back into EngineArgs, so the
field's default counts again), so explain gives that patchset as the value's origin, with the
line of the copy it wrote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

from patchops.core.errors import PatchopsError

# store.STORE_DIR, named here so explain imports the store only for a copy patchops patched
# (a cached explain stays as light as lint; tests/lint/test_lint_path.py).
STORE_FOLDER = ".patchops"


@dataclass(frozen=True)
class AppliedKeyword:
    """A keyword a patchset set in a copy's file: the field it decides, and where."""

    field: str                  # the keyword, named as the config field it passes (enforce_eager)
    patchset: str
    path: Path                  # the copy's file
    line: Optional[int]         # the line holding `keyword=value`, None when not found

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line else str(self.path)


def applied_keywords(site_dir: Path) -> List[AppliedKeyword]:
    """Return the keywords set by patchsets applied to the copy in `site_dir` and still in place.

    A file changed since patchops wrote it (drift, or a reinstall) counts as not patched;
    a patchset whose YAML cannot be read is skipped (status reports it).
    """
    if not (Path(site_dir) / STORE_FOLDER).is_dir():
        return []
    from patchops.store.site_store import Store, sha256

    store = Store(site_dir)
    try:
        if not store.exists():
            return []
        state = store.read_state()
    except PatchopsError:
        return []
    found: List[AppliedKeyword] = []
    for rel, entry in sorted(state.files.items()):
        try:
            data = store.path(rel).read_bytes()
        except OSError:
            continue
        if sha256(data) != entry.written:
            continue
        text = data.decode("utf-8", "replace")
        for name in entry.patchsets:
            patchset = _patchset(store, name)
            for op in patchset.ops if patchset is not None else ():
                if op.name == "set-keyword" and op.file == rel:
                    found.append(AppliedKeyword(op.keyword, name, store.path(rel),
                                                _line_of(text, op.keyword, op.value)))
    return found


def _patchset(store, name: str):
    """Return the patchset by name, else as the store kept it; None when neither can be read."""
    from patchops.patching.recorded_patchsets import named_or_recorded

    try:
        return named_or_recorded(name, (), [store])
    except (PatchopsError, UnicodeDecodeError):
        return None


def _line_of(text: str, keyword: str, value: str) -> Optional[int]:
    """Return the 1-based line of `keyword=value` in `text` (spaces allowed around `=`)."""
    match = re.search(rf"\b{re.escape(keyword)}\s*=\s*{re.escape(value)}", text)
    return None if match is None else text.count("\n", 0, match.start()) + 1
