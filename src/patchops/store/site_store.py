"""The store beside each vLLM copy: backups, journal, state and lock, in `<site_dir>/.patchops/`.

    objects/<sha256>   every file's bytes before and after each swap, content-addressed,
                       checked against their name on every read
    journal.jsonl      append-only JSON lines, fsynced before each swap: begin (with the
                       planned (file, before, after) list and the new state), done per file,
                       commit or abort
    state.json         what patchops did per file (original sha, sha last written, patchsets
                       in order) and per patchset "satisfied upstream" records
                       (`patchops.store.state`)
    lock               fcntl.flock'd while a command works on the copy
    id                 a random id, written once under the lock: the same copy seen from
                       several Ray nodes (a shared filesystem) is one copy to `patchops fleet`

The copy's own files are read and written through a Store too, so every write stays inside
the copy (`patchops.store.site_files`). A transaction over several stores is
`patchops.store.transaction`; repairing one a crash interrupted, `patchops.store.recovery`.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, List, Mapping, Optional, Tuple, Union

from patchops.store import safe_fs
from patchops.core.digest_cache import sha256
from patchops.core.errors import FileIOError, LockedError, StoreError
from patchops.store.safe_fs import TMP_SUFFIX
from patchops.store.site_files import atomic_write, check_inside, remove_stale_bytecode
from patchops.store.state import State

STORE_DIR = ".patchops"

PathLike = Union[str, "os.PathLike[str]"]


def short(sha: Optional[str]) -> str:
    """Return the first 12 hex digits of a sha, for messages."""
    return (sha or "none")[:12]


def now() -> str:
    """Return the local time as ISO 8601 with offset, for journal and state records."""
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


class Store:
    """The `.patchops/` folder beside one vLLM copy: objects, journal, state, lock.

    Files are named by their path relative to the package folder (`engine/arg_utils.py`),
    the way patchsets name them. Nothing is created on disk until something is written.
    Everything in `.patchops/` is opened relative to folder fds, never through a link.
    """

    def __init__(self, site_dir: PathLike, package: str = "vllm"):
        # Resolved, so lib64 -> lib symlinks share one store and one lock.
        self.site_dir = Path(os.path.realpath(os.fspath(site_dir)))
        self.package = package
        self.files_root = self.site_dir / package
        self.root = self.site_dir / STORE_DIR
        self.objects = self.root / "objects"
        self.journal_path = self.root / "journal.jsonl"
        self.state_path = self.root / "state.json"
        self.lock_path = self.root / "lock"
        self.id_path = self.root / "id"
        self._lock_fd: Optional[int] = None
        self._lock_depth = 0

    def __repr__(self) -> str:
        return f"Store({str(self.site_dir)!r})"

    def __lt__(self, other: "Store") -> bool:
        return str(self.root) < str(other.root)

    def exists(self) -> bool:
        """Return whether patchops ever wrote anything for this copy (a linked store is refused)."""
        if os.path.islink(self.root):
            raise safe_fs.link_error(self.root)
        return self.root.is_dir()

    def path(self, rel: str) -> Path:
        """Return the file `rel` (relative to the package folder) as a path."""
        return self.files_root / rel

    def target(self, rel: str) -> Path:
        """Return the real path of file `rel`, refusing it if a link leads outside the copy."""
        return check_inside(self.files_root, rel)

    def display(self, rel: str) -> str:
        """Return a file's full path, for messages."""
        return str(self.path(rel))

    @contextmanager
    def _dir(self, *, create: bool = False, objects: bool = False) -> Iterator[Optional[int]]:
        """Yield an fd of `.patchops/` (or its `objects/`), None when absent and not create."""
        site = safe_fs.open_path_dir(self.site_dir)
        fds = [site]
        try:
            fd = safe_fs.open_dir(site, STORE_DIR, self.root, create=create)
            if fd is not None:
                fds.append(fd)
                if objects:
                    fd = safe_fs.open_dir(fd, "objects", self.objects, create=create)
                    if fd is not None:
                        fds.append(fd)
            yield fd
        finally:
            for opened in reversed(fds):
                os.close(opened)

    # -- lock --------------------------------------------------------------------------------

    @contextmanager
    def lock(self, *, create: bool = True) -> Iterator["Store"]:
        """Hold the store's lock; a second patchops on the same copy gets a StoreError.

        Re-entrant within one Store object. With create=False a missing store is not
        created and the lock is skipped (a copy patchops never touched); a store the user
        cannot write is locked through a read-only fd.
        """
        if self._lock_depth:
            self._lock_depth += 1
            try:
                yield self
            finally:
                self._lock_depth -= 1
            return
        fd = self._open_lock(create)
        if fd is None:
            yield self
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise LockedError(f"another patchops is working on {self.site_dir} "
                                 f"({self.lock_path} is locked); wait for it to finish "
                                 f"and run the command again") from exc
            raise StoreError(f"cannot lock {self.lock_path}: {exc.strerror or exc}") from exc
        self._lock_fd, self._lock_depth = fd, 1
        try:
            if create:
                self.claim_identity()
            yield self
        finally:
            self._lock_depth = 0
            self._lock_fd = None
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _open_lock(self, create: bool) -> Optional[int]:
        if create:
            with self._dir(create=True, objects=True):
                pass  # .patchops/ and objects/ made, and checked for links, before the lock
        with self._dir() as root:
            if root is None:
                return None
            flags = os.O_RDWR | (os.O_CREAT if create else 0)
            try:
                return safe_fs.open_file(root, "lock", self.lock_path, flags)
            except FileNotFoundError:
                return None
            except FileIOError as exc:
                if not create and exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                    return safe_fs.open_file(root, "lock", self.lock_path, os.O_RDONLY)
                raise

    @property
    def locked(self) -> bool:
        return self._lock_depth > 0

    # -- identity ----------------------------------------------------------------------------

    def identity(self) -> Optional[str]:
        """Return the store's id, None before one was written (patchops never wrote here)."""
        if not self.exists():
            return None
        with self._dir() as fd:
            data = None if fd is None else safe_fs.read_at(fd, "id", self.id_path)
        text = (data or b"").decode("ascii", errors="replace").strip()
        return text or None

    def claim_identity(self) -> str:
        """Return the store's id, writing a random one first if it has none (under the lock)."""
        with self.lock():
            found = self.identity()
            if found is None:
                found = uuid.uuid4().hex
                with self._dir(create=True) as fd:
                    assert fd is not None
                    safe_fs.write_at(fd, "id", f"{found}\n".encode("ascii"), self.id_path)
            return found

    # -- objects -----------------------------------------------------------------------------

    def object_path(self, sha: str) -> Path:
        return self.objects / sha

    def _read_object(self, sha: str) -> Optional[bytes]:
        with self._dir(objects=True) as fd:
            if fd is None:
                return None
            return safe_fs.read_at(fd, sha, self.object_path(sha))

    def has_object(self, sha: str) -> bool:
        """Return whether a backup with this hash exists and still matches it."""
        data = self._read_object(sha)
        return data is not None and sha256(data) == sha

    def put_object(self, data: bytes) -> str:
        """Keep `data` under its hash (once; a corrupted copy is replaced) and return the hash."""
        sha = sha256(data)
        if not self.has_object(sha):
            with self._dir(create=True, objects=True) as fd:
                assert fd is not None
                safe_fs.write_at(fd, sha, data, self.object_path(sha))
        return sha

    def get_object(self, sha: str) -> bytes:
        """Return the backup with this hash, refusing loudly if it is missing or corrupted."""
        path = self.object_path(sha)
        data = self._read_object(sha)
        if data is None:
            raise StoreError(f"backup {path} is missing; the original bytes with sha256 "
                             f"{short(sha)} cannot be restored from this store. Reinstall vLLM "
                             f"to get pristine files")
        got = sha256(data)
        if got != sha:
            raise StoreError(f"backup {path} fails its hash check (expected {short(sha)}, "
                             f"got {short(got)}): the backup is corrupted, nothing was restored. "
                             f"Reinstall vLLM to get pristine files")
        return data

    # -- state -------------------------------------------------------------------------------

    def read_state(self) -> State:
        """Return state.json, or an empty state when patchops never wrote here."""
        with self._dir() as fd:
            data = None if fd is None else safe_fs.read_at(fd, "state.json", self.state_path)
        if data is None:
            return State()
        try:
            return State.from_json(json.loads(data.decode("utf-8")))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise StoreError(f"{self.state_path} is not valid patchops state ({exc}); the "
                             f"backups in {self.objects} are intact, restore state.json from "
                             f"the last 'begin' record of {self.journal_path}") from exc

    def write_state(self, state: State) -> None:
        """Replace state.json atomically."""
        data = json.dumps(state.to_json(), indent=2, sort_keys=True) + "\n"
        with self._dir(create=True) as fd:
            assert fd is not None
            safe_fs.write_at(fd, "state.json", data.encode("utf-8"), self.state_path)

    # -- journal -----------------------------------------------------------------------------

    def append_journal(self, record: Mapping) -> None:
        """Append one JSON line to the journal and fsync it before returning."""
        line = json.dumps(dict(record), sort_keys=True, separators=(",", ":")) + "\n"
        with self._dir(create=True) as fd:
            assert fd is not None
            safe_fs.append_at(fd, "journal.jsonl", line.encode("utf-8"), self.journal_path)

    def read_journal(self) -> List[dict]:
        """Return the journal's records in order; a torn (unparsable) line is skipped."""
        with self._dir() as fd:
            data = None if fd is None else safe_fs.read_at(fd, "journal.jsonl", self.journal_path)
        return [] if data is None else _journal_records(data.decode("utf-8", errors="replace"))

    # -- temp files --------------------------------------------------------------------------

    def temp_files(self) -> List[Tuple[bool, str]]:
        """Return (in objects/, name) of temp files an interrupted write left in the store."""
        found = []
        for objects in (False, True):
            with self._dir(objects=objects) as fd:
                if fd is not None:
                    found += [(objects, n) for n in safe_fs.list_at(fd) if n.endswith(TMP_SUFFIX)]
        return found

    def remove_temp_files(self) -> List[str]:
        """Remove temp files an interrupted write left in `.patchops/` and `objects/`."""
        removed = 0
        for objects, name in self.temp_files():
            with self._dir(objects=objects) as fd:
                folder = self.objects if objects else self.root
                if fd is not None and safe_fs.unlink_at(fd, name, folder / name):
                    removed += 1
        if not removed:
            return []
        return [f"removed {removed} temp file(s) an interrupted patchops left in {self.root}"]

    # -- the copy's files --------------------------------------------------------------------

    def read_file(self, rel: str) -> Optional[bytes]:
        """Return file `rel`'s bytes, None if it does not exist."""
        return self.read_file_stat(rel)[0]

    def read_file_stat(self, rel: str) -> Tuple[Optional[bytes], Optional[os.stat_result]]:
        """Return file `rel`'s bytes and its stat taken before the read, (None, None) if it
        does not exist: a stamp taken after the read could vouch for bytes never read."""
        path = self.path(rel)
        try:
            with open(path, "rb") as handle:
                info = os.fstat(handle.fileno())
                return handle.read(), info
        except FileNotFoundError:
            return None, None
        except OSError as exc:
            raise safe_fs.io_error(exc, "read", path) from exc

    def write_file(self, rel: str, data: bytes) -> None:
        """Replace file `rel` with `data` (atomic_write), refusing a link out of the copy."""
        self.target(rel)
        atomic_write(self.path(rel), data)

    def remove_file(self, rel: str) -> None:
        """Remove file `rel` (a file the transaction created), refusing a link out of the copy."""
        real = self.target(rel)
        fd = safe_fs.open_path_dir(real.parent)
        try:
            if safe_fs.unlink_at(fd, real.name, self.path(rel)):
                safe_fs.fsync_dir_fd(fd, real.parent)
        finally:
            os.close(fd)

    def remove_bytecode(self, rel: str) -> List[Path]:
        """Delete the stale .pyc of file `rel`, refusing a `__pycache__` linked out of the copy."""
        self.target(rel)
        return remove_stale_bytecode(self.path(rel))

    def restore(self, rel: str, data: Optional[bytes]) -> None:
        """Put file `rel` back to `data`; None means it did not exist, so remove it."""
        if data is None:
            self.remove_file(rel)
        else:
            self.write_file(rel, data)
        self.remove_bytecode(rel)


def _journal_records(text: str) -> List[dict]:
    """Parse journal lines; a torn (unparsable) line, as a crash can leave, is skipped."""
    records = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records

