"""Write user files, keep byte-exact backups and a journal, one store beside each vLLM copy.

This is the only module that writes files patchops does not own. Each copy gets
`<site_dir>/.patchops/`:

    objects/<sha256>   every file's bytes before and after each swap, content-addressed,
                       checked against their name on every read
    journal.jsonl      append-only JSON lines, fsynced before each swap: begin (with the
                       planned (file, before, after) list and the new state), done per file,
                       commit or abort
    state.json         what patchops did per file (original sha, sha last written, patchsets
                       in order) and per patchset "satisfied upstream" records
    lock               fcntl.flock'd while a command works on the copy

A transaction may span several copies (CoreX's lib and lib64). The first store is the
coordinator: the transaction is committed once the coordinator's journal says so. A crash
before that rolls every file back to its "before" bytes on the next run; a crash after it
rolls the other copies forward. Either way every file ends original or fully patched.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from patchops import faults, safe_fs
from patchops.errors import FileIOError, LinkError, LockedError, PatchopsError, StoreError
from patchops.safe_fs import TMP_SUFFIX

STORE_DIR = ".patchops"
STATE_VERSION = 1

PathLike = Union[str, "os.PathLike[str]"]

#: Test hook: ("swap", n) raises SimulatedCrash right after the n-th file swap of a
#: transaction; ("begin", n) / ("commit", n) after the n-th store's begin / commit record.
crash_at: Optional[Tuple[str, int]] = None


class SimulatedCrash(BaseException):
    """Stop a transaction the way a killed process would: no cleanup code catches it.

    A BaseException, so the transaction's own undo path (which catches Exception and
    KeyboardInterrupt) is skipped and only the journal can repair the files.
    """


def sha256(data: bytes) -> str:
    """Return the hex SHA-256 of `data`."""
    return hashlib.sha256(data).hexdigest()


def short(sha: Optional[str]) -> str:
    """Return the first 12 hex digits of a sha, for messages."""
    return (sha or "none")[:12]


# --- writing files -----------------------------------------------------------------------------


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


def fsync_dir(folder: PathLike) -> None:
    """Flush a folder's entry list, so a rename or unlink survives a power cut."""
    fd = safe_fs.open_path_dir(Path(os.fspath(folder)))
    try:
        safe_fs.fsync_dir_fd(fd, Path(os.fspath(folder)))
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
    lexically safe (no "..", not absolute: patchops.ops.base); this is the real-path check.
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


# --- state -------------------------------------------------------------------------------------


@dataclass
class FileEntry:
    """What patchops did to one file: its original, what it last wrote, which patchsets."""

    original: str                                   # sha of the bytes before patchops; in objects/
    written: str                                    # sha of the bytes patchops last wrote
    patchsets: List[str] = field(default_factory=list)  # applied, in order

    def to_json(self) -> dict:
        return {"original": self.original, "written": self.written, "patchsets": list(self.patchsets)}

    @classmethod
    def from_json(cls, data: Mapping) -> "FileEntry":
        return cls(str(data["original"]), str(data["written"]), [str(p) for p in data.get("patchsets", [])])


@dataclass
class SatisfiedRecord:
    """A patchset found already in its wanted state, before patchops touched the files."""

    files: Dict[str, str]        # rel path -> sha when it was found satisfied
    version: Optional[str] = None
    recorded: str = ""           # ISO time

    def to_json(self) -> dict:
        return {"files": dict(self.files), "version": self.version, "recorded": self.recorded}

    @classmethod
    def from_json(cls, data: Mapping) -> "SatisfiedRecord":
        return cls({str(k): str(v) for k, v in dict(data.get("files", {})).items()},
                   data.get("version"), str(data.get("recorded", "")))


@dataclass
class PatchsetSource:
    """Where an applied patchset came from and its YAML bytes (kept in objects/ as `sha`).

    So `status` and `rollback` can load a patchset applied from `--patchsets DIR` without
    being given that folder again, even after the folder is gone.
    """

    path: str
    sha: str

    def to_json(self) -> dict:
        return {"path": self.path, "sha": self.sha}

    @classmethod
    def from_json(cls, data: Mapping) -> "PatchsetSource":
        return cls(str(data["path"]), str(data["sha"]))


@dataclass
class State:
    """The content of state.json: per file entries keyed by path relative to the package."""

    files: Dict[str, FileEntry] = field(default_factory=dict)
    satisfied: Dict[str, SatisfiedRecord] = field(default_factory=dict)
    patchsets: Dict[str, PatchsetSource] = field(default_factory=dict)
    txn: Optional[str] = None    # last committed transaction this state reflects

    def to_json(self) -> dict:
        return {
            "version": STATE_VERSION,
            "txn": self.txn,
            "files": {rel: entry.to_json() for rel, entry in sorted(self.files.items())},
            "satisfied": {name: rec.to_json() for name, rec in sorted(self.satisfied.items())},
            "patchsets": {name: src.to_json() for name, src in sorted(self.patchsets.items())},
        }

    @classmethod
    def from_json(cls, data: Mapping) -> "State":
        return cls(
            files={str(rel): FileEntry.from_json(e) for rel, e in dict(data.get("files", {})).items()},
            satisfied={str(n): SatisfiedRecord.from_json(r)
                       for n, r in dict(data.get("satisfied", {})).items()},
            patchsets={str(n): PatchsetSource.from_json(r)
                       for n, r in dict(data.get("patchsets", {})).items()},
            txn=data.get("txn"),
        )

    def copy(self) -> "State":
        return State.from_json(json.loads(json.dumps(self.to_json())))


def now() -> str:
    """Return the local time as ISO 8601 with offset, for journal and state records."""
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


# --- the store ---------------------------------------------------------------------------------


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

    # -- recovery ----------------------------------------------------------------------------

    def pending(self) -> List[str]:
        """Return what recover() would repair, without writing: unfinished txns, a stale state."""
        records = self.read_journal()
        ended = _outcomes(records)
        found = [f"interrupted transaction {r['txn']}" for r in records
                 if r.get("op") == "begin" and isinstance(r.get("txn"), str) and r["txn"] not in ended]
        committed = [txn for txn in ended if ended[txn] == "commit"]
        if not found and committed and self.read_state().txn != committed[-1]:
            found.append(f"state.json older than transaction {committed[-1]}")
        if self._store_temps():
            found.append("temp files of an interrupted write")
        return found

    def recover(self) -> List[str]:
        """Finish what a crashed patchops left: roll its transaction back, or forward if committed.

        Must hold the lock. Returns one message per repair (transactions finished, state.json
        rebuilt, temp files removed); nothing when there was nothing to do, in which case
        nothing is written.
        """
        messages = self._clean_store_temps()
        records = self.read_journal()
        if not records:
            return messages
        txns: Dict[str, dict] = {}
        ended = _outcomes(records)
        committed_order = [txn for txn in ended if ended[txn] == "commit"]
        for record in records:
            if record.get("op") == "begin" and isinstance(record.get("txn"), str):
                txns[record["txn"]] = record
        for txn, begin in txns.items():
            if txn in ended:
                continue
            if self._coordinator_committed(begin):
                messages.append(self._roll_forward(begin))
                committed_order.append(txn)
            else:
                messages.append(self._roll_back(begin))
        if committed_order:
            last = committed_order[-1]
            state_data = txns.get(last, {}).get("state")
            if state_data is not None and self.read_state().txn != last:
                # Crashed between the commit record and state.json: the begin record has it.
                self.write_state(State.from_json(state_data))
                messages.append(f"recovered {self.state_path}: a patchops stopped after "
                                f"committing transaction {last} but before recording it; "
                                f"rebuilt it from {self.journal_path}")
        return messages

    def _store_temps(self) -> List[Tuple[bool, str]]:
        """Return (in objects/, name) of temp files an interrupted write left in the store."""
        found = []
        for objects in (False, True):
            with self._dir(objects=objects) as fd:
                if fd is not None:
                    found += [(objects, n) for n in safe_fs.list_at(fd) if n.endswith(TMP_SUFFIX)]
        return found

    def _clean_store_temps(self) -> List[str]:
        """Remove temp files an interrupted write left in `.patchops/` and `objects/`."""
        removed = 0
        for objects, name in self._store_temps():
            with self._dir(objects=objects) as fd:
                folder = self.objects if objects else self.root
                if fd is not None and safe_fs.unlink_at(fd, name, folder / name):
                    removed += 1
        if not removed:
            return []
        return [f"removed {removed} temp file(s) an interrupted patchops left in {self.root}"]

    def _coordinator_committed(self, begin: Mapping) -> bool:
        coordinator = begin.get("coordinator")
        if not coordinator or Path(coordinator) == self.root:
            return False
        # An unreadable coordinator journal raises: guessing "not committed" could undo
        # a transaction the other copies finished.
        other = Store(Path(coordinator).parent)
        return _outcomes(other.read_journal()).get(begin["txn"]) == "commit"

    def _roll_back(self, begin: Mapping) -> str:
        """Put every file of an unfinished transaction back to its "before" bytes."""
        kept = []
        for item in reversed(list(begin.get("files", []))):
            rel, before, after = item["file"], item["before"], item["after"]
            self._clean_temp(rel)
            current = self._current_sha(rel)
            if current == before:
                continue
            if current is not None and current != after:
                # Changed after the crash: keep those bytes too before restoring.
                self.put_object(self.read_file(rel) or b"")
                kept.append(f"{self.display(rel)} (sha {short(current)})")
            _restore(self, rel, None if before is None else self.get_object(before))
        self.append_journal({"op": "abort", "txn": begin["txn"], "time": now(),
                             "reason": "recovered: interrupted transaction rolled back",
                             "kept": kept})
        text = (f"recovered an interrupted {begin.get('action', 'patchops')} in {self.site_dir} "
                f"(transaction {begin['txn']}): restored its files to their previous bytes")
        if kept:
            text += "; files changed since then were kept in " + str(self.objects) + ": " + ", ".join(kept)
        return text

    def _roll_forward(self, begin: Mapping) -> str:
        """Finish a transaction the coordinator copy committed: every file to "after"."""
        kept = []
        for item in begin.get("files", []):
            rel, before, after = item["file"], item["before"], item["after"]
            self._clean_temp(rel)
            current = self._current_sha(rel)
            if current == after:
                continue
            if current not in (before, None):
                self.put_object(self.read_file(rel) or b"")
                kept.append(f"{self.display(rel)} (sha {short(current)})")
            self.write_file(rel, self.get_object(after))
            self.remove_bytecode(rel)
        self.append_journal({"op": "commit", "txn": begin["txn"], "time": now(), "recovered": True})
        if begin.get("state") is not None:
            self.write_state(State.from_json(begin["state"]))
        text = (f"recovered an interrupted {begin.get('action', 'patchops')} in {self.site_dir} "
                f"(transaction {begin['txn']}): the other copies had committed it, so it was "
                f"completed here too")
        if kept:
            text += "; files changed since then were kept in " + str(self.objects) + ": " + ", ".join(kept)
        return text

    # -- the copy's files --------------------------------------------------------------------

    def read_file(self, rel: str) -> Optional[bytes]:
        """Return file `rel`'s bytes, None if it does not exist."""
        path = self.path(rel)
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None
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

    def _current_sha(self, rel: str) -> Optional[str]:
        data = self.read_file(rel)
        return None if data is None else sha256(data)

    def _clean_temp(self, rel: str) -> None:
        """Remove a temp file an interrupted atomic_write left beside `rel`."""
        target = self.target(rel)
        try:
            fd = safe_fs.open_path_dir(target.parent)
        except FileIOError:
            return
        try:
            for name in safe_fs.list_at(fd):
                if name.startswith(f".{target.name}.") and name.endswith(TMP_SUFFIX):
                    safe_fs.unlink_at(fd, name, target.parent / name)
        finally:
            os.close(fd)


def _sha_or_none(data: Optional[bytes]) -> Optional[str]:
    return None if data is None else sha256(data)


def _restore(store: "Store", rel: str, data: Optional[bytes]) -> None:
    """Put a file back to `data`; None means it did not exist, so remove it."""
    if data is None:
        store.remove_file(rel)
    else:
        store.write_file(rel, data)
    store.remove_bytecode(rel)


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


def _outcomes(records: Sequence[Mapping]) -> Dict[str, str]:
    """Return txn -> "commit" or "abort", the last of the two journaled, in commit order.

    An abort after a commit record means the commit's fsync failed and the swaps were undone.
    """
    ended: Dict[str, str] = {}
    for record in records:
        txn, op = record.get("txn"), record.get("op")
        if isinstance(txn, str) and op in ("commit", "abort"):
            ended.pop(txn, None)
            ended[txn] = op
    return ended


# --- transactions ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """Replace one file's `before` bytes (None: the file is missing) with `after`, in one store."""

    store: Store
    rel: str
    before: Optional[bytes]
    after: bytes


@dataclass
class TxnResult:
    """What a transaction wrote, and what went wrong after its commit point (not a failure)."""

    txn: Optional[str]
    written: List[Path] = field(default_factory=list)
    removed_bytecode: List[Path] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)


def current_bytes(store: Store, rel: str) -> Optional[bytes]:
    """Return the file's bytes, None if it does not exist."""
    return store.read_file(rel)


def transact(action: str, changes: Sequence[Change], states: Mapping[Store, State]) -> TxnResult:
    """Swap every change in, across stores, as one transaction; then write each new state.

    The caller holds every store's lock and has already run recover(). `states` gives the
    new state.json of each store (those without file changes are written after the commit,
    outside the journal). Backups of before and after go to objects/ first, then the begin
    records, then the swaps (each journaled), then the commit records, coordinator first.
    On an exception before the commit point the swapped files are put back before it
    propagates; after it, the transaction stands and the failure is a warning (the next
    recover() finishes the bookkeeping). A crash (or SimulatedCrash) is repaired by the
    next recover().
    """
    for change in changes:
        if not change.store.locked:
            raise RuntimeError(f"{change.store} must be locked for a transaction")
    if not changes:
        for store, state in states.items():
            store.write_state(state)
        return TxnResult(txn=None)

    stores: List[Store] = sorted({change.store for change in changes})
    coordinator = stores[0]
    txn = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:12]}"
    counts: Dict[str, int] = {}
    result = TxnResult(txn=txn)

    # Refuse if a file moved since the plan was made: the "before" we would keep is wrong.
    for change in changes:
        change.store.target(change.rel)
        if current_bytes(change.store, change.rel) != change.before:
            raise StoreError(f"{change.store.display(change.rel)} changed while patchops was "
                             f"working on it; nothing was written, run the command again")

    for change in changes:
        if change.before is not None:
            change.store.put_object(change.before)
        change.store.put_object(change.after)

    new_states = {store: states[store].copy() if store in states else store.read_state()
                  for store in stores}
    for state in new_states.values():
        state.txn = txn
    begun: List[Store] = []
    swapped: List[Change] = []
    try:
        for store in stores:
            store.append_journal({
                "op": "begin", "txn": txn, "time": now(), "action": action,
                "coordinator": str(coordinator.root),
                "participants": [str(s.root) for s in stores],
                "files": [{"file": c.rel, "before": _sha_or_none(c.before), "after": sha256(c.after)}
                          for c in changes if c.store is store],
                "state": new_states[store].to_json(),
            })
            begun.append(store)
            _checkpoint("begin", counts)
        for change in changes:
            # Counted as swapped before the write: a failure after its rename (the folder
            # fsync, the bytecode) must still put the file back.
            swapped.append(change)
            change.store.write_file(change.rel, change.after)
            result.written.append(change.store.path(change.rel))
            result.removed_bytecode += change.store.remove_bytecode(change.rel)
            change.store.append_journal({"op": "done", "txn": txn, "file": change.rel})
            _checkpoint("swap", counts)
        # The coordinator's commit record is the commit point for every copy.
        coordinator.append_journal({"op": "commit", "txn": txn, "time": now()})
    except SimulatedCrash:
        raise
    except BaseException as exc:
        _undo(txn, swapped, begun, exc)
        raise
    _checkpoint("commit", counts)
    for store in stores[1:]:
        _after_commit(result, action, store, store.append_journal,
                      {"op": "commit", "txn": txn, "time": now()})
        _checkpoint("commit", counts)
    for store in stores:
        _after_commit(result, action, store, store.write_state, new_states[store])
    for store, state in states.items():
        if store not in new_states:
            _after_commit(result, action, store, store.write_state, state)
    return result


def _after_commit(result: TxnResult, action: str, store: Store, step, arg) -> None:
    """Run a bookkeeping step after the commit point; its failure is a warning, not an error."""
    try:
        step(arg)
    except (PatchopsError, OSError) as exc:
        result.warnings.append(
            f"the {action} is complete (every file was written), but recording it in "
            f"{store.root} failed ({exc}); the next patchops command finishes that from "
            f"{store.journal_path}")


def _undo(txn: str, swapped: Sequence[Change], begun: Sequence[Store], cause: BaseException) -> None:
    """Put back the files a failing transaction already swapped, and journal the abort."""
    try:
        for change in reversed(swapped):
            _restore(change.store, change.rel, change.before)
        for store in begun:
            store.append_journal({"op": "abort", "txn": txn, "time": now(),
                                  "reason": f"{type(cause).__name__}: {cause}"})
    except BaseException as exc:
        where = ", ".join(str(store.journal_path) for store in begun)
        raise StoreError(f"patchops failed ({cause}) and could not put every file back "
                         f"({exc}); the backups are intact and the next patchops command "
                         f"restores them from the journal ({where})") from exc


def _checkpoint(event: str, counts: Dict[str, int]) -> None:
    counts[event] = counts.get(event, 0) + 1
    if crash_at is not None and crash_at == (event, counts[event]):
        raise SimulatedCrash(f"simulated crash after {event} #{counts[event]}")
