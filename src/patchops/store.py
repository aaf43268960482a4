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
import stat
import tempfile
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from patchops.errors import StoreError

STORE_DIR = ".patchops"
STATE_VERSION = 1
TMP_SUFFIX = ".patchops-tmp"

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


def atomic_write(path: PathLike, data: bytes) -> None:
    """Replace `path` with `data` so readers see the old or the new bytes, never a mix.

    Temp file in the same folder, write, flush, fsync, the old file's mode and owner,
    os.replace, fsync the folder. A symlinked path writes through to its target, so the
    link stays a link. A new file gets 0o666 minus the umask, as open() would give it.
    """
    target = Path(os.path.realpath(os.fspath(path)))
    folder = target.parent
    try:
        old = os.stat(target)
    except FileNotFoundError:
        old = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=TMP_SUFFIX, dir=folder)
    except OSError as exc:
        raise StoreError(f"cannot write {target}: {exc.strerror or exc}; "
                         f"run patchops as the owner of {folder}") from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            if old is not None:
                _keep_owner(handle.fileno(), old)
                # After chown: chown clears setuid/setgid bits, chmod puts them back.
                os.fchmod(handle.fileno(), stat.S_IMODE(old.st_mode))
            else:
                os.fchmod(handle.fileno(), 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(folder)


def _keep_owner(fd: int, old: os.stat_result) -> None:
    """Give the temp file the old file's owner: root must, anyone else does when allowed."""
    if (old.st_uid, old.st_gid) == (os.geteuid(), os.getegid()):
        return
    try:
        os.fchown(fd, old.st_uid, old.st_gid)
    except PermissionError:
        if os.geteuid() == 0:
            raise
        # Not root: keep the group at least when we belong to it, else the file is ours.
        try:
            os.fchown(fd, -1, old.st_gid)
        except PermissionError:
            pass


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def fsync_dir(folder: PathLike) -> None:
    """Flush a folder's entry list, so a rename survives a power cut."""
    try:
        fd = os.open(os.fspath(folder), os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_stale_bytecode(source: PathLike) -> List[Path]:
    """Delete `__pycache__/<stem>.*.pyc` next to a module whose source patchops replaced.

    Vendor images may ship unchecked hash-based pyc files, which Python keeps running
    whatever the source says; timestamp pyc would merely be rebuilt. Returns what was removed.
    """
    source = Path(os.path.realpath(os.fspath(source)))
    cache = source.parent / "__pycache__"
    removed: List[Path] = []
    if not cache.is_dir():
        return removed
    for pyc in sorted(cache.glob(f"{source.stem}.*.pyc")):
        # "<stem>.<tag>[.opt-N].pyc" only: a module named "<stem>.x" cannot exist.
        if pyc.name.split(".")[0] != source.stem:
            continue
        try:
            pyc.unlink()
            removed.append(pyc)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise StoreError(f"cannot remove stale bytecode {pyc}: {exc.strerror or exc}; "
                             f"delete it by hand, or Python may keep running the old code") from exc
    return removed


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
class State:
    """The content of state.json: per file entries keyed by path relative to the package."""

    files: Dict[str, FileEntry] = field(default_factory=dict)
    satisfied: Dict[str, SatisfiedRecord] = field(default_factory=dict)
    txn: Optional[str] = None    # last committed transaction this state reflects

    def to_json(self) -> dict:
        return {
            "version": STATE_VERSION,
            "txn": self.txn,
            "files": {rel: entry.to_json() for rel, entry in sorted(self.files.items())},
            "satisfied": {name: rec.to_json() for name, rec in sorted(self.satisfied.items())},
        }

    @classmethod
    def from_json(cls, data: Mapping) -> "State":
        return cls(
            files={str(rel): FileEntry.from_json(e) for rel, e in dict(data.get("files", {})).items()},
            satisfied={str(n): SatisfiedRecord.from_json(r)
                       for n, r in dict(data.get("satisfied", {})).items()},
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
        """Return whether patchops ever wrote anything for this copy."""
        return self.root.is_dir()

    def path(self, rel: str) -> Path:
        """Return the file `rel` (relative to the package folder) as a path."""
        return self.files_root / rel

    def display(self, rel: str) -> str:
        """Return a file's full path, for messages."""
        return str(self.path(rel))

    # -- lock --------------------------------------------------------------------------------

    @contextmanager
    def lock(self, *, create: bool = True) -> Iterator["Store"]:
        """Hold the store's lock; a second patchops on the same copy gets a StoreError.

        Re-entrant within one Store object. With create=False a missing store is not
        created and the lock is skipped (status on a copy patchops never touched); a
        store the user cannot write (status as non-root) is locked through a read-only fd.
        """
        if self._lock_depth:
            self._lock_depth += 1
            try:
                yield self
            finally:
                self._lock_depth -= 1
            return
        if not create and not self.lock_path.exists():
            yield self
            return
        fd = self._open_lock(create)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise StoreError(f"another patchops is working on {self.site_dir} "
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

    def _open_lock(self, create: bool) -> int:
        try:
            if create:
                self.objects.mkdir(parents=True, exist_ok=True)
            return os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except PermissionError as exc:
            if not create and self.lock_path.exists():
                return os.open(self.lock_path, os.O_RDONLY)
            raise StoreError(f"cannot create {self.lock_path}: permission denied; run patchops "
                             f"as the owner of {self.site_dir} (root on vendor images)") from exc
        except OSError as exc:
            raise StoreError(f"cannot create {self.lock_path}: {exc.strerror or exc}") from exc

    @property
    def locked(self) -> bool:
        return self._lock_depth > 0

    # -- objects -----------------------------------------------------------------------------

    def object_path(self, sha: str) -> Path:
        return self.objects / sha

    def has_object(self, sha: str) -> bool:
        """Return whether a backup with this hash exists and still matches it."""
        try:
            return sha256(self.object_path(sha).read_bytes()) == sha
        except FileNotFoundError:
            return False

    def put_object(self, data: bytes) -> str:
        """Keep `data` under its hash (once; a corrupted copy is replaced) and return the hash."""
        sha = sha256(data)
        if not self.has_object(sha):
            self.objects.mkdir(parents=True, exist_ok=True)
            atomic_write(self.object_path(sha), data)
        return sha

    def get_object(self, sha: str) -> bytes:
        """Return the backup with this hash, refusing loudly if it is missing or corrupted."""
        path = self.object_path(sha)
        try:
            data = path.read_bytes()
        except FileNotFoundError as exc:
            raise StoreError(f"backup {path} is missing; the original bytes with sha256 "
                             f"{short(sha)} cannot be restored from this store. Reinstall vLLM "
                             f"to get pristine files") from exc
        got = sha256(data)
        if got != sha:
            raise StoreError(f"backup {path} fails its hash check (expected {short(sha)}, "
                             f"got {short(got)}): the backup is corrupted, nothing was restored. "
                             f"Reinstall vLLM to get pristine files")
        return data

    # -- state -------------------------------------------------------------------------------

    def read_state(self) -> State:
        """Return state.json, or an empty state when patchops never wrote here."""
        try:
            text = self.state_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return State()
        try:
            return State.from_json(json.loads(text))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise StoreError(f"{self.state_path} is not valid patchops state ({exc}); the "
                             f"backups in {self.objects} are intact, restore state.json from "
                             f"the last 'begin' record of {self.journal_path}") from exc

    def write_state(self, state: State) -> None:
        """Replace state.json atomically."""
        self.root.mkdir(parents=True, exist_ok=True)
        data = json.dumps(state.to_json(), indent=2, sort_keys=True) + "\n"
        atomic_write(self.state_path, data.encode("utf-8"))

    # -- journal -----------------------------------------------------------------------------

    def append_journal(self, record: Mapping) -> None:
        """Append one JSON line to the journal and fsync it before returning."""
        self.root.mkdir(parents=True, exist_ok=True)
        line = json.dumps(dict(record), sort_keys=True, separators=(",", ":")) + "\n"
        new = not self.journal_path.exists()
        fd = os.open(self.journal_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            # A crash mid-append leaves a torn last line; start ours on a fresh one.
            size = os.fstat(fd).st_size
            if size and not _ends_with_newline(self.journal_path, size):
                line = "\n" + line
            os.write(fd, line.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        if new:
            fsync_dir(self.root)

    def read_journal(self) -> List[dict]:
        """Return the journal's records in order; a torn (unparsable) line is skipped."""
        try:
            return _journal_records(self.journal_path.read_text(encoding="utf-8", errors="replace"))
        except FileNotFoundError:
            return []

    # -- recovery ----------------------------------------------------------------------------

    def recover(self) -> List[str]:
        """Finish what a crashed patchops left: roll its transaction back, or forward if committed.

        Must hold the lock. Returns one message per repaired transaction; nothing when the
        journal is clean, in which case nothing is written.
        """
        if not self.journal_path.exists():
            return []
        records = self.read_journal()
        txns: Dict[str, dict] = {}
        ended = _outcomes(records)
        committed_order = [txn for txn in ended if ended[txn] == "commit"]
        for record in records:
            if record.get("op") == "begin" and isinstance(record.get("txn"), str):
                txns[record["txn"]] = record
        messages = []
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
        return messages

    def _coordinator_committed(self, begin: Mapping) -> bool:
        coordinator = begin.get("coordinator")
        if not coordinator or Path(coordinator) == self.root:
            return False
        other = Path(coordinator) / "journal.jsonl"
        try:
            text = other.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
        return _outcomes(_journal_records(text)).get(begin["txn"]) == "commit"

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
                self.put_object(self.path(rel).read_bytes())
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
        for item in begin.get("files", []):
            rel, before, after = item["file"], item["before"], item["after"]
            self._clean_temp(rel)
            current = self._current_sha(rel)
            if current == after:
                continue
            if current not in (before, None):
                self.put_object(self.path(rel).read_bytes())
            atomic_write(self.path(rel), self.get_object(after))
            remove_stale_bytecode(self.path(rel))
        self.append_journal({"op": "commit", "txn": begin["txn"], "time": now(), "recovered": True})
        if begin.get("state") is not None:
            self.write_state(State.from_json(begin["state"]))
        return (f"recovered an interrupted {begin.get('action', 'patchops')} in {self.site_dir} "
                f"(transaction {begin['txn']}): the other copies had committed it, so it was "
                f"completed here too")

    def _current_sha(self, rel: str) -> Optional[str]:
        try:
            return sha256(self.path(rel).read_bytes())
        except FileNotFoundError:
            return None

    def _clean_temp(self, rel: str) -> None:
        """Remove a temp file an interrupted atomic_write left beside `rel`."""
        target = Path(os.path.realpath(self.path(rel)))
        for tmp in target.parent.glob(f".{target.name}.*{TMP_SUFFIX}"):
            try:
                tmp.unlink()
            except OSError:
                pass


def _sha_or_none(data: Optional[bytes]) -> Optional[str]:
    return None if data is None else sha256(data)


def _restore(store: "Store", rel: str, data: Optional[bytes]) -> None:
    """Put a file back to `data`; None means it did not exist, so remove it."""
    path = store.path(rel)
    if data is None:
        try:
            os.unlink(os.path.realpath(path))
        except FileNotFoundError:
            pass
        fsync_dir(Path(os.path.realpath(path)).parent)
    else:
        atomic_write(path, data)
    remove_stale_bytecode(path)


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


def _ends_with_newline(path: Path, size: int) -> bool:
    with open(path, "rb") as handle:
        handle.seek(size - 1)
        return handle.read(1) == b"\n"


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
    """What a transaction wrote."""

    txn: Optional[str]
    written: List[Path] = field(default_factory=list)
    removed_bytecode: List[Path] = field(default_factory=list)


def current_bytes(store: Store, rel: str) -> Optional[bytes]:
    """Return the file's bytes, None if it does not exist."""
    try:
        return store.path(rel).read_bytes()
    except FileNotFoundError:
        return None


def transact(action: str, changes: Sequence[Change], states: Mapping[Store, State]) -> TxnResult:
    """Swap every change in, across stores, as one transaction; then write each new state.

    The caller holds every store's lock and has already run recover(). `states` gives the
    new state.json of each store (those without file changes are written after the commit,
    outside the journal). Backups of before and after go to objects/ first, then the begin
    records, then the swaps (each journaled), then the commit records, coordinator first.
    On an exception the swapped files are put back before it propagates; a crash (or
    SimulatedCrash) is repaired by the next recover().
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
            atomic_write(change.store.path(change.rel), change.after)
            swapped.append(change)
            result.written.append(change.store.path(change.rel))
            result.removed_bytecode += remove_stale_bytecode(change.store.path(change.rel))
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
        store.append_journal({"op": "commit", "txn": txn, "time": now()})
        _checkpoint("commit", counts)
    for store in stores:
        store.write_state(new_states[store])
    for store, state in states.items():
        if store not in new_states:
            store.write_state(state)
    return result


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
