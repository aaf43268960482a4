"""Write, check and clean files inside a vLLM copy: the one writer of files patchops does not own.

`atomic_write` replaces a file so readers see the old or the new bytes; `check_inside`
refuses a path a link takes out of the copy; `remove_stale_bytecode` deletes the .pyc Python
would otherwise keep running. Every syscall goes through `patchops.store.safe_fs`.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import List, Union

from patchops.store import safe_fs
from patchops.core.errors import FileIOError, LinkError

PathLike = Union[str, "os.PathLike[str]"]

def atomic_write(path: PathLike, data: bytes, what: str = "vLLM copy") -> None:
    """Replace the file `path` points to with `data`, so readers see the old or the new bytes.

    A symlinked path writes through to its target (the caller has checked it stays inside
    the copy), so the link stays a link; see safe_fs.write_at for the steps. `what` names the
    file in errors.
    """
    shown = Path(os.fspath(path))
    target = Path(os.path.realpath(shown))
    fd = safe_fs.open_path_dir(target.parent)
    try:
        safe_fs.write_at(fd, target.name, data, shown, what=what)
    finally:
        os.close(fd)



def remove_stale_bytecode(source: PathLike) -> List[Path]:
    """Delete `__pycache__/<stem>.*.pyc` next to a module whose source patchops replaced.

    Vendor images may ship unchecked hash-based pyc files, which Python keeps running
    whatever the source says; timestamp pyc would merely be rebuilt. Returns what was removed.
    """
    source = Path(os.path.realpath(os.fspath(source)))
    cache = source.parent / "__pycache__"
    parent_fd = safe_fs.open_path_dir(source.parent)
    try:
        cache_fd = safe_fs.open_dir(parent_fd, "__pycache__", cache, what="vLLM copy")
    except FileIOError as exc:
        if exc.errno != errno.ENOTDIR:
            raise
        cache_fd = None  # a file named __pycache__: nothing Python would load
    finally:
        os.close(parent_fd)
    removed: List[Path] = []
    if cache_fd is None:
        return removed
    try:
        for name in safe_fs.list_at(cache_fd):
            # "<stem>.<tag>[.opt-N].pyc" only: a module named "<stem>.x" cannot exist.
            if not name.endswith(".pyc") or name.split(".")[0] != source.stem:
                continue
            try:
                if safe_fs.unlink_at(cache_fd, name, cache / name):
                    removed.append(cache / name)
            except FileIOError as exc:
                raise FileIOError(f"{exc}; delete it by hand, or Python may keep running the "
                                  f"old code") from exc
        if removed:
            safe_fs.fsync_dir_fd(cache_fd, cache)
    finally:
        os.close(cache_fd)
    return removed


def check_inside(root: PathLike, rel: str) -> Path:
    """Return the real path of `root/rel`, refusing it when a link takes it outside `root`.

    Checks the file, every folder from `root` down to it, and its `__pycache__` (whose .pyc
    files patchops deletes). A link that stays inside the copy is fine. `rel` is already
    lexically safe (no "..", not absolute: patchops.patchset.ops.base); this is the real-path check.
    """
    root = Path(os.fspath(root))
    real_root = os.path.realpath(root)
    path = root
    for part in [*rel.split("/"), None]:
        path = path.parent / "__pycache__" if part is None else path / part
        if not os.path.islink(path):
            continue
        real = os.path.realpath(path)
        if not (real == real_root or real.startswith(real_root.rstrip("/") + "/")):
            try:
                target = os.readlink(path)
            except OSError:
                target = "?"
            raise LinkError(f"refusing {root / rel}: {path} is a symbolic link to {target}, "
                            f"outside the vLLM copy {real_root}; patchops never writes or "
                            f"deletes outside the copy. Nothing was written. Replace the link "
                            f"with the real file or folder (and check who can write to "
                            f"{path.parent})")
    return Path(os.path.realpath(root / rel))
