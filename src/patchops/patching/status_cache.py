"""Remember what status found in a file patchops never wrote, keyed by content, not by parsing.

A status of copies with nothing recorded must run each patchset's libcst rewrite over its
target files (seconds on current vLLM). The answer depends only on the file's bytes, the
patchsets' YAML, the vLLM version and patchops itself, so it is kept under
$PATCHOPS_CACHE/verdicts/ and the next status answers from the file's sha. An entry holds its
whole key and answers only that key (a crc of the key names its file: no hashlib on the way
when the file's digest is cached: hashlib's import is a startup cost). A cache that cannot be read or written is only
slower.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Optional, Sequence, Tuple

from patchops import __version__
from patchops.core.cache import cache_root, write_json
from patchops.patchset.states import PatchState

if TYPE_CHECKING:
    from patchops.patchset.model import Patchset

PATH_MARK = "\x00path\x00"  # where the file's path stood in the detail, so another copy can reuse it


def cache_dir() -> Path:
    """Return $PATCHOPS_CACHE/verdicts, else ~/.cache/patchops/verdicts."""
    return cache_root() / "verdicts"


Verdicts = Dict[str, Tuple[PatchState, str]]  # patchset name -> (state, detail)


def key(file_sha: str, rel: str, patchsets: Sequence["Patchset"], version: Optional[str]) -> str:
    """Return the key for these patchsets, run in this order, over one file's bytes.

    The order counts: rewrite runs them one after the other on the same source.
    """
    return json.dumps([__version__, file_sha, rel, [p.text for p in patchsets], version])


def _entry(found_key: str) -> Path:
    return cache_dir() / f"{zlib.crc32(found_key.encode('utf-8', 'surrogateescape')):08x}.json"


def get(found_key: str, path: Path) -> Optional[Verdicts]:
    """Return the verdicts remembered for `found_key`, their details naming `path`."""
    try:
        data = json.loads(_entry(found_key).read_text(encoding="utf-8"))
        if data["key"] != found_key:
            return None  # another key whose crc is the same
        return {str(name): (PatchState(state), str(detail).replace(PATH_MARK, str(path)))
                for name, (state, detail) in data["verdicts"].items()}
    except (OSError, ValueError, TypeError, AttributeError, KeyError):
        return None


def put(found_key: str, path: Path, verdicts: Verdicts) -> None:
    """Remember `verdicts` for `found_key`; `path` in their details becomes a placeholder."""
    data = {name: [state, detail.replace(str(path), PATH_MARK)] for name, (state, detail) in verdicts.items()}
    write_json(_entry(found_key), {"key": found_key, "verdicts": data})
