"""Where patchops keeps what it can rebuild: facts, verdicts, digests, wheels, engine stand-ins."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """Return $PATCHOPS_CACHE, else ~/.cache/patchops (always outside any vLLM copy)."""
    return Path(os.environ.get("PATCHOPS_CACHE") or Path.home() / ".cache" / "patchops")


def write_json(path: Path, data) -> None:
    """Replace a cache file with `data` as JSON; a cache that cannot be written is only slower."""
    import json

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
