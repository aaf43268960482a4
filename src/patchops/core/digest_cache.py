"""Digests of files from earlier runs, trusted while the file's inode, size, mtime and ctime stay put.

Git's index does the same: any write moves ctime, which no user can set back. A file whose
ctime is this close to the run that hashed it may have been written again in the same clock
tick, after the read ("racily clean" in git), so its digest is not kept. `verify` keeps the
digests of a whole copy here; `status` and `apply` those of the files patchsets target, so an
unchanged copy is judged without importing hashlib (a twentieth of a `status` run).
A cache that cannot be read or written is only slower.
"""

from __future__ import annotations

import json
import os
import time
import zlib
from pathlib import Path
from typing import Dict, Optional

from patchops.core.cache import cache_root, write_json

RACY_SECONDS = 2.0
CACHE_VERSION = 2   # 2: the cache file is named by crc32 of its scope, not sha256
UNREADABLE = "cannot read it: "  # a digest no file can have, for files that cannot be read


def sha256(data: bytes) -> str:
    """Return the hex SHA-256 of `data`; hashlib loads on the first hash a run needs."""
    import hashlib

    return hashlib.sha256(data).hexdigest()


class DigestCache:
    """Digests by path for one `scope` (a site dir), kept under $PATCHOPS_CACHE/`kind`/.

    With `scope` None nothing is read or kept. save() writes the entries this run looked
    up or added, so files that left the scope leave the cache.
    """

    def __init__(self, scope: Optional[str], kind: str):
        self.scope = scope
        self.path: Optional[Path] = None
        self.old: Dict[str, list] = {}
        self.new: Dict[str, list] = {}
        self.started = time.time()
        if scope is None:
            return
        # A crc names the file; the scope stored inside decides whether it is ours.
        key = f"{zlib.crc32(scope.encode('utf-8', 'surrogateescape')):08x}"
        self.path = cache_root() / kind / f"{key}.json"
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("version") == CACHE_VERSION and data.get("site") == scope:
                self.old = dict(data["files"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self.old = {}  # no cache, another scope's, or a damaged one: hash everything

    @staticmethod
    def _stamp(info: os.stat_result) -> list:
        return [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]

    def get(self, path: str, info: os.stat_result, algorithm: str) -> Optional[str]:
        """Return the digest an earlier run found, if the file cannot have changed since."""
        found = self.old.get(path)
        if found and found[:5] == self._stamp(info) and found[5] == algorithm:
            self.new[path] = found
            return found[6]
        return None

    def put(self, path: str, info: os.stat_result, algorithm: str, digest: str) -> None:
        """Keep a digest just computed, unless the file was written too close to this run."""
        racy = info.st_ctime_ns / 1e9 >= self.started - RACY_SECONDS
        if self.path is not None and not racy and not digest.startswith(UNREADABLE):
            self.new[path] = self._stamp(info) + [algorithm, digest]

    def sha256(self, path: str, data: bytes, info: os.stat_result) -> str:
        """Return the sha256 of `data`, read from `path` after fstat gave `info`."""
        digest = self.get(path, info, "sha256")
        if digest is None:
            digest = sha256(data)
            self.put(path, info, "sha256", digest)
        return digest

    def save(self) -> None:
        """Write the cache if this run changed it; a cache that cannot be written only costs time."""
        if self.path is not None and self.new != self.old:
            write_json(self.path, {"version": CACHE_VERSION, "site": self.scope, "files": self.new})
