"""Remember what status found in a file patchops never wrote, keyed by hashes, not by parsing.

A status of copies with nothing recorded must run each patchset's libcst rewrite over its
target files (seconds on current vLLM). The answer depends only on the file's bytes, the
patchset file's bytes, the vLLM version and patchops itself, so it is kept under
$PATCHOPS_CACHE/verdicts/ and the next status answers from a hash. A cache that cannot be
read or written is only slower.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Dict, Optional, Sequence, Tuple

from patchops import __version__
from patchops.cache import cache_root, write_json

PATH_MARK = "\x00path\x00"  # where the file's path stood in the detail, so another copy can reuse it


def cache_dir() -> Path:
    """Return $PATCHOPS_CACHE/verdicts, else ~/.cache/patchops/verdicts."""
    return cache_root() / "verdicts"


Verdicts = Dict[str, Tuple[str, str]]  # patchset name -> (state, detail)


def key(file_sha: str, rel: str, patchset_paths: Sequence[Path], version: Optional[str]) -> Optional[str]:
    """Return the key for these patchsets, run in this order, over one file's bytes.

    The order counts: rewrite runs them one after the other on the same source. None when a
    patchset file cannot be read (nothing is then cached).
    """
    try:
        shas = [hashlib.sha256(Path(path).read_bytes()).hexdigest() for path in patchset_paths]
    except OSError:
        return None
    text = json.dumps([__version__, file_sha, rel, shas, version])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def get(found_key: Optional[str], path: Path) -> Optional[Verdicts]:
    """Return the verdicts remembered for `found_key`, their details naming `path`."""
    if found_key is None:
        return None
    try:
        data = json.loads((cache_dir() / f"{found_key}.json").read_text(encoding="utf-8"))
        return {str(name): (str(state), str(detail).replace(PATH_MARK, str(path)))
                for name, (state, detail) in data.items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def put(found_key: Optional[str], path: Path, verdicts: Verdicts) -> None:
    """Remember `verdicts` for `found_key`; `path` in their details becomes a placeholder."""
    if found_key is None:
        return
    target = cache_dir() / f"{found_key}.json"
    data = {name: [state, detail.replace(str(path), PATH_MARK)] for name, (state, detail) in verdicts.items()}
    write_json(target, data)
