"""Finish what a crashed patchops left in a store: roll its transaction back, or forward if committed.

A transaction may span several copies (CoreX's lib and lib64). The first store is the
coordinator: the transaction is committed once the coordinator's journal says so. A crash
before that rolls every file back to its "before" bytes on the next run; a crash after it
rolls the other copies forward. Either way every file ends original or fully patched.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

from patchops.store import safe_fs
from patchops.core.errors import FileIOError
from patchops.store.safe_fs import TMP_SUFFIX
from patchops.store.site_store import Store, now, sha256, short
from patchops.store.state import State


def pending(store: Store) -> List[str]:
    """Return what recover() would repair, without writing: unfinished txns, a stale state."""
    records = store.read_journal()
    ended = outcomes(records)
    found = [f"interrupted transaction {r['txn']}" for r in records
             if r.get("op") == "begin" and isinstance(r.get("txn"), str) and r["txn"] not in ended]
    committed = [txn for txn in ended if ended[txn] == "commit"]
    if not found and committed and store.read_state().txn != committed[-1]:
        found.append(f"state.json older than transaction {committed[-1]}")
    if store.temp_files():
        found.append("temp files of an interrupted write")
    return found


def recover(store: Store) -> List[str]:
    """Finish what a crashed patchops left: roll its transaction back, or forward if committed.

    Must hold the lock. Returns one message per repair (transactions finished, state.json
    rebuilt, temp files removed); nothing when there was nothing to do, in which case
    nothing is written.
    """
    messages = store.remove_temp_files()
    records = store.read_journal()
    if not records:
        return messages
    txns: Dict[str, dict] = {}
    ended = outcomes(records)
    committed_order = [txn for txn in ended if ended[txn] == "commit"]
    for record in records:
        if record.get("op") == "begin" and isinstance(record.get("txn"), str):
            txns[record["txn"]] = record
    for txn, begin in txns.items():
        if txn in ended:
            continue
        if _coordinator_committed(store, begin):
            messages.append(_roll_forward(store, begin))
            committed_order.append(txn)
        else:
            messages.append(_roll_back(store, begin))
    if committed_order:
        last = committed_order[-1]
        state_data = txns.get(last, {}).get("state")
        if state_data is not None and store.read_state().txn != last:
            # Crashed between the commit record and state.json: the begin record has it.
            store.write_state(State.from_json(state_data))
            messages.append(f"recovered {store.state_path}: a patchops stopped after "
                            f"committing transaction {last} but before recording it; "
                            f"rebuilt it from {store.journal_path}")
    return messages


def outcomes(records: Sequence[Mapping]) -> Dict[str, str]:
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


def _coordinator_committed(store: Store, begin: Mapping) -> bool:
    coordinator = begin.get("coordinator")
    if not coordinator or Path(coordinator) == store.root:
        return False
    # An unreadable coordinator journal raises: guessing "not committed" could undo
    # a transaction the other copies finished.
    other = Store(Path(coordinator).parent)
    return outcomes(other.read_journal()).get(begin["txn"]) == "commit"


def _roll_back(store: Store, begin: Mapping) -> str:
    """Put every file of an unfinished transaction back to its "before" bytes."""
    kept = []
    for item in reversed(list(begin.get("files", []))):
        rel, before, after = item["file"], item["before"], item["after"]
        _clean_temp(store, rel)
        current = _current_sha(store, rel)
        if current == before:
            continue
        if current is not None and current != after:
            # Changed after the crash: keep those bytes too before restoring.
            store.put_object(store.read_file(rel) or b"")
            kept.append(f"{store.display(rel)} (sha {short(current)})")
        store.restore(rel, None if before is None else store.get_object(before))
    store.append_journal({"op": "abort", "txn": begin["txn"], "time": now(),
                          "reason": "recovered: interrupted transaction rolled back",
                          "kept": kept})
    text = (f"recovered an interrupted {begin.get('action', 'patchops')} in {store.site_dir} "
            f"(transaction {begin['txn']}): restored its files to their previous bytes")
    if kept:
        text += "; files changed since then were kept in " + str(store.objects) + ": " + ", ".join(kept)
    return text


def _roll_forward(store: Store, begin: Mapping) -> str:
    """Finish a transaction the coordinator copy committed: every file to "after"."""
    kept = []
    for item in begin.get("files", []):
        rel, before, after = item["file"], item["before"], item["after"]
        _clean_temp(store, rel)
        current = _current_sha(store, rel)
        if current == after:
            continue
        if current not in (before, None):
            store.put_object(store.read_file(rel) or b"")
            kept.append(f"{store.display(rel)} (sha {short(current)})")
        store.write_file(rel, store.get_object(after))
        store.remove_bytecode(rel)
    store.append_journal({"op": "commit", "txn": begin["txn"], "time": now(), "recovered": True})
    if begin.get("state") is not None:
        store.write_state(State.from_json(begin["state"]))
    text = (f"recovered an interrupted {begin.get('action', 'patchops')} in {store.site_dir} "
            f"(transaction {begin['txn']}): the other copies had committed it, so it was "
            f"completed here too")
    if kept:
        text += "; files changed since then were kept in " + str(store.objects) + ": " + ", ".join(kept)
    return text


def _current_sha(store: Store, rel: str) -> Optional[str]:
    data = store.read_file(rel)
    return None if data is None else sha256(data)


def _clean_temp(store: Store, rel: str) -> None:
    """Remove a temp file an interrupted atomic_write left beside `rel`."""
    target = store.target(rel)
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
