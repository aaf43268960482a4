"""Unit tests for the store: atomic writes, hash-checked backups, journal, lock, recovery."""

from __future__ import annotations

import json
import os
import py_compile
import stat
from pathlib import Path

import pytest

from patchops.store import site_store as store_mod
from patchops.store import transaction
from patchops.store import faults
from patchops.core.errors import FileIOError, StoreError
from patchops.store.safe_fs import TMP_SUFFIX
from patchops.store.recovery import recover
from patchops.store.site_files import atomic_write, remove_stale_bytecode
from patchops.store.site_store import Store, sha256
from patchops.store.state import FileEntry, SatisfiedRecord, State
from patchops.store.transaction import Change, SimulatedCrash, transact


def make_site(root: Path, files: dict) -> Path:
    """Create a site dir holding vllm/ with the given {rel: text} files."""
    for rel, text in files.items():
        path = root / "vllm" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture
def fault(monkeypatch):
    """Return a function setting PATCHOPS_FAULT for this process, counting from zero."""

    def set_fault(spec: str) -> None:
        faults.reset()
        monkeypatch.setenv(faults.ENV, spec)

    yield set_fault
    faults.reset()


# --- atomic_write ------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o755, 0o600])
def test_atomic_write_replaces_bytes_and_keeps_mode(tmp_path, mode):
    path = tmp_path / "mod.py"
    path.write_bytes(b"old\n")
    path.chmod(mode)
    atomic_write(path, b"new\n")
    assert path.read_bytes() == b"new\n"
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mod.py"]  # no temp file left


def test_atomic_write_keeps_owner(tmp_path):
    path = tmp_path / "mod.py"
    path.write_bytes(b"old\n")
    before = path.stat()
    atomic_write(path, b"new\n")
    after = path.stat()
    assert (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)


def test_atomic_write_new_file_follows_umask(tmp_path):
    old = os.umask(0o027)
    try:
        atomic_write(tmp_path / "fresh", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "fresh").stat().st_mode) == 0o640


def test_atomic_write_through_symlink_keeps_the_link(tmp_path):
    real = tmp_path / "real.py"
    real.write_bytes(b"old")
    link = tmp_path / "link.py"
    link.symlink_to(real)
    atomic_write(link, b"new")
    assert link.is_symlink()
    assert real.read_bytes() == b"new"


@pytest.mark.parametrize("step", ["write", "fsync", "rename"])
def test_atomic_write_failure_leaves_old_bytes_and_no_temp(tmp_path, fault, step):
    path = tmp_path / "mod.py"
    path.write_bytes(b"old")
    fault(f"{step}:1:enospc")
    with pytest.raises(FileIOError, match=f"cannot write {path}: No space left on device") as info:
        atomic_write(path, b"new")
    assert TMP_SUFFIX not in str(info.value)
    assert info.value.exit_code == 5
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mod.py"]


# --- bytecode ----------------------------------------------------------------------------------


def test_remove_stale_bytecode_removes_only_that_module(tmp_path):
    src = tmp_path / "arg_utils.py"
    src.write_text("X = 1\n")
    other = tmp_path / "arg_utils_extra.py"
    other.write_text("Y = 1\n")
    pyc = py_compile.compile(str(src), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    keep = py_compile.compile(str(other))
    opt = tmp_path / "__pycache__" / "arg_utils.cpython-311.opt-1.pyc"
    opt.write_bytes(b"")
    removed = remove_stale_bytecode(src)
    assert sorted(removed) == sorted([Path(pyc), opt])
    assert not Path(pyc).exists() and not opt.exists()
    assert Path(keep).exists()


# --- objects -----------------------------------------------------------------------------------


def test_objects_are_content_addressed_and_hash_checked(tmp_path):
    store = Store(make_site(tmp_path, {}))
    sha = store.put_object(b"original bytes")
    assert sha == sha256(b"original bytes")
    assert store.object_path(sha).read_bytes() == b"original bytes"
    assert store.get_object(sha) == b"original bytes"
    assert store.put_object(b"original bytes") == sha  # once


def test_corrupted_backup_fails_loudly(tmp_path):
    store = Store(make_site(tmp_path, {}))
    sha = store.put_object(b"original bytes")
    store.object_path(sha).write_bytes(b"bit rot")
    with pytest.raises(StoreError, match="fails its hash check") as info:
        store.get_object(sha)
    assert str(store.object_path(sha)) in str(info.value)
    assert not store.has_object(sha)
    store.put_object(b"original bytes")  # a corrupted copy is replaced when the bytes come back
    assert store.get_object(sha) == b"original bytes"


def test_missing_backup_fails_loudly(tmp_path):
    store = Store(make_site(tmp_path, {}))
    with pytest.raises(StoreError, match="is missing"):
        store.get_object("0" * 64)


# --- state and journal -------------------------------------------------------------------------


def test_state_round_trips(tmp_path):
    store = Store(make_site(tmp_path, {}))
    assert store.read_state() == State()
    assert not store.exists()  # reading creates nothing
    state = State(files={"engine/arg_utils.py": FileEntry("a" * 64, "b" * 64, ["one", "two"])},
                  satisfied={"three": SatisfiedRecord({"x.py": "c" * 64}, "0.8.5", "now")},
                  txn="t1")
    store.write_state(state)
    assert store.read_state() == state


def test_journal_appends_after_a_torn_line(tmp_path):
    store = Store(make_site(tmp_path, {}))
    store.append_journal({"op": "abort", "txn": "a"})
    with open(store.journal_path, "a") as handle:
        handle.write('{"op": "beg')  # crash mid-append
    store.append_journal({"op": "commit", "txn": "b"})
    assert [r["txn"] for r in store.read_journal()] == ["a", "b"]


# --- lock --------------------------------------------------------------------------------------


def test_second_patchops_on_the_same_copy_is_refused(tmp_path):
    site = make_site(tmp_path, {})
    first, second = Store(site), Store(site)
    with first.lock():
        with first.lock():  # re-entrant for the same Store
            pass
        with pytest.raises(StoreError, match="another patchops is working on"):
            with second.lock():
                pass
    with second.lock():
        pass


def test_lock_without_create_does_not_create_the_store(tmp_path):
    store = Store(make_site(tmp_path, {}))
    with store.lock(create=False):
        pass
    assert not store.exists()


# --- transactions ------------------------------------------------------------------------------


def two_copies(tmp_path):
    """Return two stores with two files each, and the original bytes of each file."""
    files = {"a.py": "A = 1\n", "sub/b.py": "B = 1\n"}
    stores = [Store(make_site(tmp_path / name, files)) for name in ("lib", "lib64")]
    return stores, {rel: text.encode() for rel, text in files.items()}


def changes_for(stores, files):
    return [Change(store, rel, data, data.replace(b"1", b"2")) for store in stores
            for rel, data in files.items()]


def new_states(stores, files):
    return {store: State(files={rel: FileEntry(sha256(data), sha256(data.replace(b"1", b"2")), ["p"])
                                for rel, data in files.items()}) for store in stores}


def locked(stores):
    from contextlib import ExitStack
    stack = ExitStack()
    for store in stores:
        stack.enter_context(store.lock())
    return stack


def file_bytes(stores, files):
    return {(store.site_dir.name, rel): store.path(rel).read_bytes() for store in stores for rel in files}


def test_transaction_swaps_backs_up_and_journals(tmp_path):
    stores, files = two_copies(tmp_path)
    pyc = py_compile.compile(str(stores[0].path("a.py")),
                             invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    with locked(stores):
        result = transact("apply", changes_for(stores, files), new_states(stores, files))
    assert all(data == files[rel].replace(b"1", b"2")
               for (_, rel), data in file_bytes(stores, files).items())
    assert Path(pyc) in result.removed_bytecode and not Path(pyc).exists()
    for store in stores:
        for data in files.values():
            assert store.get_object(sha256(data)) == data  # originals kept
        ops = [r["op"] for r in store.read_journal()]
        assert ops == ["begin", "done", "done", "commit"]
        begin = store.read_journal()[0]
        assert begin["coordinator"] == str(stores[0].root)
        assert [f["file"] for f in begin["files"]] == ["a.py", "sub/b.py"]
        assert store.read_state().txn == result.txn
        assert store.read_state().files["a.py"].patchsets == ["p"]


def test_transaction_refuses_a_file_changed_since_the_plan(tmp_path):
    stores, files = two_copies(tmp_path)
    changes = changes_for(stores, files)
    stores[1].path("a.py").write_text("A = 'edited'\n")
    with locked(stores), pytest.raises(StoreError, match="changed while patchops"):
        transact("apply", changes, new_states(stores, files))
    assert stores[0].path("a.py").read_bytes() == files["a.py"]
    assert not stores[0].journal_path.exists()


def test_failure_mid_transaction_puts_every_file_back(tmp_path, monkeypatch):
    stores, files = two_copies(tmp_path)
    real = store_mod.atomic_write
    calls = []

    def flaky(path, data):
        if "vllm" in str(path):
            calls.append(path)
            if len(calls) == 3:
                raise OSError(28, "No space left on device")
        real(path, data)

    monkeypatch.setattr(store_mod, "atomic_write", flaky)
    with locked(stores), pytest.raises(OSError, match="No space"):
        transact("apply", changes_for(stores, files), new_states(stores, files))
    assert all(data == files[rel] for (_, rel), data in file_bytes(stores, files).items())
    for store in stores:
        assert [r["op"] for r in store.read_journal()][-1] == "abort"
        assert store.read_state() == State()
        with store.lock():
            assert recover(store) == []  # nothing left to repair


@pytest.mark.parametrize("swaps", [1, 2, 3, 4])
def test_crash_mid_transaction_is_rolled_back_by_recovery(tmp_path, monkeypatch, swaps):
    stores, files = two_copies(tmp_path)
    monkeypatch.setattr(transaction, "crash_at", ("swap", swaps))
    with locked(stores), pytest.raises(SimulatedCrash):
        transact("apply", changes_for(stores, files), new_states(stores, files))
    monkeypatch.setattr(transaction, "crash_at", None)
    swapped = sum(data != files[rel] for (_, rel), data in file_bytes(stores, files).items())
    assert swapped == swaps  # the crash left a half-done transaction
    messages = []
    for store in stores:
        with store.lock():
            messages += recover(store)
    assert all("recovered an interrupted apply" in m for m in messages) and len(messages) == 2
    assert all(data == files[rel] for (_, rel), data in file_bytes(stores, files).items())
    for store in stores:
        assert store.read_journal()[-1]["op"] == "abort"
        assert store.read_state() == State()
        for data in files.values():
            assert store.get_object(sha256(data)) == data  # backups intact
        with store.lock():
            assert recover(store) == []


def test_crash_after_the_coordinator_commits_is_rolled_forward(tmp_path, monkeypatch):
    stores, files = two_copies(tmp_path)
    states = new_states(stores, files)
    monkeypatch.setattr(transaction, "crash_at", ("commit", 1))
    with locked(stores), pytest.raises(SimulatedCrash):
        transact("apply", changes_for(stores, files), states)
    monkeypatch.setattr(transaction, "crash_at", None)
    # Recover the second copy first: it must look at the coordinator's journal.
    with stores[1].lock():
        [message] = recover(stores[1])
    assert "completed here too" in message
    with stores[0].lock():
        recover(stores[0])
    assert all(data == files[rel].replace(b"1", b"2")
               for (_, rel), data in file_bytes(stores, files).items())
    for store in stores:
        assert store.read_state().files == states[store].files
        assert store.read_journal()[-1]["op"] == "commit"


def test_crash_before_state_is_written_is_repaired_from_the_journal(tmp_path, monkeypatch):
    stores, files = two_copies(tmp_path)
    states = new_states(stores, files)
    monkeypatch.setattr(transaction, "crash_at", ("commit", 2))
    with locked(stores), pytest.raises(SimulatedCrash):
        transact("apply", changes_for(stores, files), states)
    monkeypatch.setattr(transaction, "crash_at", None)
    assert stores[0].read_state() == State()
    for store in stores:
        with store.lock():
            [note] = recover(store)  # a repair is reported, never silent
            assert note.startswith(f"recovered {store.state_path}") and "rebuilt it" in note
            assert recover(store) == []  # and only once
        assert store.read_state().files == states[store].files


def test_recovery_keeps_bytes_changed_after_the_crash(tmp_path, monkeypatch):
    stores, files = two_copies(tmp_path)
    monkeypatch.setattr(transaction, "crash_at", ("swap", 1))
    with locked(stores), pytest.raises(SimulatedCrash):
        transact("apply", changes_for(stores, files), new_states(stores, files))
    monkeypatch.setattr(transaction, "crash_at", None)
    stores[0].path("a.py").write_bytes(b"A = 'by hand'\n")
    with stores[0].lock():
        [message] = recover(stores[0])
    assert "were kept" in message
    assert stores[0].path("a.py").read_bytes() == files["a.py"]
    assert stores[0].get_object(sha256(b"A = 'by hand'\n")) == b"A = 'by hand'\n"


def test_recovery_with_a_torn_begin_record_changes_nothing(tmp_path):
    stores, files = two_copies(tmp_path)
    store = stores[0]
    store.root.mkdir()
    store.journal_path.write_text('{"op":"begin","txn":"x","files":[{"file":"a.py"')
    with store.lock():
        assert recover(store) == []
    assert store.path("a.py").read_bytes() == files["a.py"]


def test_journal_lines_are_json(tmp_path):
    stores, files = two_copies(tmp_path)
    with locked(stores):
        transact("apply", changes_for(stores, files), new_states(stores, files))
    for line in stores[0].journal_path.read_text().splitlines():
        assert isinstance(json.loads(line), dict)


# --- promises observed through the calls (mutations a result check misses) ---------------------


def _fd_path(fd: int) -> str:
    return os.readlink(f"/proc/self/fd/{fd}")


@pytest.fixture
def syscalls(monkeypatch):
    """Record write, fsync, rename and unlink calls as (call, real path) in order."""
    events = []
    real_write, real_fsync, real_replace, real_unlink = os.write, os.fsync, os.replace, os.unlink

    def at(dir_fd, name):
        return os.path.join(_fd_path(dir_fd), name) if dir_fd is not None else os.path.abspath(name)

    def write(fd, data):
        events.append(("write", _fd_path(fd)))
        return real_write(fd, data)

    def fsync(fd):
        events.append(("fsync", _fd_path(fd)))
        return real_fsync(fd)

    def replace(src, dst, *, src_dir_fd=None, dst_dir_fd=None):
        events.append(("rename", at(dst_dir_fd, dst)))
        return real_replace(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)

    def unlink(path, *, dir_fd=None):
        events.append(("unlink", at(dir_fd, path)))
        return real_unlink(path, dir_fd=dir_fd)

    monkeypatch.setattr(os, "write", write)
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(os, "unlink", unlink)
    return events


def test_every_store_write_is_fsynced_before_it_counts(tmp_path, syscalls):
    stores, files = two_copies(tmp_path)
    py_compile.compile(str(stores[0].path("a.py")),
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    with locked(stores):
        transact("apply", changes_for(stores, files), new_states(stores, files))
    renames = [i for i, (call, _) in enumerate(syscalls) if call == "rename"]
    assert len(renames) == 2 * (2 + 4 + 1 + 1)  # per store: 2 files, 4 objects, state.json, id
    for i in renames:
        target = syscalls[i][1]
        folder = os.path.dirname(target)
        # The temp file's bytes are flushed after its last write and before the rename ...
        temp = [j for j in range(i) if syscalls[j][0] == "write"
                and os.path.basename(syscalls[j][1]).startswith("." + os.path.basename(target) + ".")]
        assert temp, target
        assert ("fsync", syscalls[temp[-1]][1]) in syscalls[temp[-1] + 1:i], target
        # ... and the folder's entry right after it, before anything else is written.
        following = syscalls[i + 1]
        assert following == ("fsync", folder), (target, following)
    for i, (call, path) in enumerate(syscalls):
        if call == "write" and path.endswith("journal.jsonl"):
            assert syscalls[i + 1] == ("fsync", path)  # each journal record is durable at once
        if call == "unlink" and "__pycache__" in path:
            assert ("fsync", os.path.dirname(path)) in syscalls[i + 1:]
    for store in stores:
        # A new journal's folder entry is flushed once, right after its first record.
        first = next(i for i, e in enumerate(syscalls) if e == ("write", str(store.journal_path)))
        assert syscalls[first + 2] == ("fsync", str(store.root))


def test_journal_record_is_fsynced_before_the_swap_it_announces(tmp_path, syscalls):
    stores, files = two_copies(tmp_path)
    with locked(stores):
        transact("apply", changes_for(stores, files), new_states(stores, files))
    first_swap = next(i for i, (call, path) in enumerate(syscalls)
                      if call == "rename" and path.endswith("a.py"))
    begins = [i for i, (call, path) in enumerate(syscalls[:first_swap])
              if call == "fsync" and path.endswith("journal.jsonl")]
    assert len(begins) == 2  # both stores' begin records are on disk before any file moves


def test_roll_forward_keeps_bytes_edited_after_the_crash(tmp_path, monkeypatch):
    stores, files = two_copies(tmp_path)
    monkeypatch.setattr(transaction, "crash_at", ("commit", 1))  # coordinator committed, lib64 not
    with locked(stores), pytest.raises(SimulatedCrash):
        transact("apply", changes_for(stores, files), new_states(stores, files))
    monkeypatch.setattr(transaction, "crash_at", None)
    edited = b"B = 'edited by hand after the crash'\n"
    stores[1].path("sub/b.py").write_bytes(edited)
    with stores[1].lock():
        [note] = recover(stores[1])
    assert "completed here too" in note and f"{stores[1].display('sub/b.py')} (sha" in note
    assert stores[1].get_object(sha256(edited)) == edited
    assert stores[1].path("sub/b.py").read_bytes() == files["sub/b.py"].replace(b"1", b"2")


def test_rewritten_file_gets_the_old_files_owner(tmp_path, monkeypatch):
    path = tmp_path / "mod.py"
    path.write_bytes(b"old\n")
    old = path.stat()
    calls = []
    real_fchown = os.fchown

    def fchown(fd, uid, gid):
        calls.append((os.fstat(fd).st_ino, uid, gid))
        real_fchown(fd, uid, gid)

    # Run as if someone else: the file's owner differs from ours, so it must be handed back.
    monkeypatch.setattr(os, "fchown", fchown)
    monkeypatch.setattr(os, "geteuid", lambda: old.st_uid + 1)
    monkeypatch.setattr(os, "getegid", lambda: old.st_gid + 1)
    atomic_write(path, b"new\n")
    assert calls == [(path.stat().st_ino, old.st_uid, old.st_gid)]


def test_rewritten_file_keeps_a_foreign_owner_when_root(tmp_path):
    path = tmp_path / "mod.py"
    path.write_bytes(b"old\n")
    if os.geteuid() == 0:
        os.chown(path, 12345, 23456)  # as on vendor images: files owned by a build user
    before = path.stat()
    atomic_write(path, b"new\n")
    after = path.stat()
    assert (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)
    assert path.read_bytes() == b"new\n"


def test_store_id_is_written_once_under_the_lock_and_read_through_any_spelling(tmp_path):
    site = tmp_path / "lib" / "site-packages"
    (site / "vllm").mkdir(parents=True)
    (tmp_path / "lib64").symlink_to("lib")
    store = Store(site)
    assert store.identity() is None and not store.root.exists()   # reading writes nothing
    with store.lock():
        first = store.identity()
    assert first and len(first) == 32 and store.id_path.read_text() == first + "\n"
    other = Store(tmp_path / "lib64" / "site-packages")   # another node's spelling
    assert other.identity() == first and other.claim_identity() == first
    with store.lock():
        pass
    assert store.id_path.read_text() == first + "\n"
    assert Store(tmp_path / "elsewhere").identity() is None
