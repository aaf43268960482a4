"""Swap a set of file changes across stores as one journaled transaction.

Backups first, then a `begin` record per store, the swaps (each journaled), then the commit
records, coordinator first: the coordinator's commit record is the commit point for every
copy (`patchops.store.recovery` finishes a transaction a crash interrupted).
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from patchops.core.errors import PatchopsError, StoreError
from patchops.core.records import field, record
from patchops.store.site_store import Store, now, sha256
from patchops.store.state import State

#: Test hook: ("swap", n) raises SimulatedCrash right after the n-th file swap of a
#: transaction; ("begin", n) / ("commit", n) after the n-th store's begin / commit record.
crash_at: Optional[Tuple[str, int]] = None


class SimulatedCrash(BaseException):
    """Stop a transaction the way a killed process would: no cleanup code catches it.

    A BaseException, so the transaction's own undo path (which catches Exception and
    KeyboardInterrupt) is skipped and only the journal can repair the files.
    """


@record(frozen=True)
class Change:
    """Replace one file's `before` bytes (None: the file is missing) with `after`, in one store."""

    store: Store
    rel: str
    before: Optional[bytes]
    after: bytes


@record
class TxnResult:
    """What a transaction wrote, and what went wrong after its commit point (not a failure)."""

    txn: Optional[str]
    written: List[Path] = field(default_factory=list)
    removed_bytecode: List[Path] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)


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
        if change.store.read_file(change.rel) != change.before:
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
        _undo(txn, action, swapped, begun, exc)
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


def _undo(txn: str, action: str, swapped: Sequence[Change], begun: Sequence[Store],
          cause: BaseException) -> None:
    """Put back every file a failing transaction changed, going on past one that refuses.

    A file still holding its "before" bytes (the swap that failed never reached it) is left
    alone. The abort is journaled only when every file is back; otherwise the journal stays
    open, so the next patchops command restores the rest (the backstop for a kill too).
    """
    stuck = []
    for change in reversed(swapped):
        try:
            if change.store.read_file(change.rel) != change.before:
                change.store.restore(change.rel, change.before)
        except (PatchopsError, OSError) as exc:
            stuck.append(f"{change.store.display(change.rel)} ({exc})")
    where = ", ".join(str(store.journal_path) for store in begun)
    if stuck:
        raise StoreError(f"patchops failed ({cause}) and put back every file this {action} "
                         f"changed except {len(stuck)} still holding its new bytes: "
                         f"{'; '.join(stuck)}. The backups are intact: once those files can "
                         f"be written, the next patchops command restores them from the "
                         f"journal ({where})") from cause
    try:
        for store in begun:
            store.append_journal({"op": "abort", "txn": txn, "time": now(),
                                  "reason": f"{type(cause).__name__}: {cause}"})
    except (PatchopsError, OSError) as exc:
        # Every file is back: the next command finds nothing to restore and journals the abort.
        unjournaled = f"; the journal could not record that ({exc}), the next command does"
    else:
        unjournaled = ""
    if isinstance(cause, PatchopsError):
        cause.message += (f"; nothing was changed (every file this {action} wrote was put "
                          f"back){unjournaled}")


def _sha_or_none(data: Optional[bytes]) -> Optional[str]:
    return None if data is None else sha256(data)


def _checkpoint(event: str, counts: Dict[str, int]) -> None:
    counts[event] = counts.get(event, 0) + 1
    if crash_at is not None and crash_at == (event, counts[event]):
        raise SimulatedCrash(f"simulated crash after {event} #{counts[event]}")
