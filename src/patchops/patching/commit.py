"""Write an apply plan: back up, journal and swap every file of every copy as one transaction."""

from __future__ import annotations

import os
from contextlib import ExitStack
from pathlib import Path
from typing import Dict, Optional, Tuple

from patchops.store import faults
from patchops.core.errors import DriftError, FileIOError, StoreError
from patchops.patching.plan import ApplyPlan, PatchsetOutcome
from patchops.core.records import record
from patchops.store.recovery import recover
from patchops.store.site_store import Store, sha256
from patchops.store.state import PatchsetSource, State


@record(frozen=True)
class ApplyReport:
    """What commit_apply wrote."""

    outcomes: Tuple[PatchsetOutcome, ...]
    written: Tuple[Path, ...]            # files replaced
    backups: Tuple[Path, ...]            # objects/<sha> holding each replaced file's previous bytes
    removed_bytecode: Tuple[Path, ...]
    txn: Optional[str]                   # journal transaction id, None when nothing was written
    notes: Tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.written)


def commit_apply(plan: ApplyPlan) -> ApplyReport:
    """Write a plan: back up, journal, swap every file of every copy as one transaction.

    Writes nothing (not even state.json) when every patchset is already applied or
    satisfied as recorded, so a re-apply keeps every byte and mtime. Under the locks of
    every copy it re-checks every planned file, "nothing to do" ones too, and stops if any
    changed, or any copy saw another transaction, since planning.
    """
    if plan.unwritable:
        raise FileIOError(plan.unwritable_message())
    if plan.problems:
        raise DriftError(plan.problem_message())
    changes = plan.changes
    entry_updates = [f for f in plan.files if f.entry_after != f.entry_before]
    if not changes and not entry_updates and not plan.satisfied:
        return ApplyReport(plan.outcomes, (), (), (), None, plan.notes)
    from patchops.store.transaction import Change, transact  # a no-op re-apply needs no journal, nor its import cost

    faults.point("commit")
    stores = plan._stores
    touched = sorted({stores[_store_key(f.site_dir, stores)] for f in (*entry_updates, *changes)}
                     | {stores[site] for site, _, _ in plan.satisfied})
    notes = list(plan.notes)
    with ExitStack() as stack:
        for store in sorted(stores.values()):
            stack.enter_context(store.lock(create=store in touched))
        for store in sorted(stores.values()):
            if store.exists():
                notes += recover(store)
        _check_unchanged_since_planning(plan)
        states = {store: store.read_state() for store in touched}
        for item in entry_updates:
            store = stores[_store_key(item.site_dir, stores)]
            if item.entry_after is None:
                states[store].files.pop(item.rel, None)
            else:
                states[store].files[item.rel] = item.entry_after
        for site, name, record in plan.satisfied:
            states[stores[site]].satisfied[name] = record
        _record_sources(plan, states)
        result = transact("apply", [Change(stores[_store_key(f.site_dir, stores)], f.rel, f.old, f.new)
                                    for f in changes], states)
    backups = tuple(stores[_store_key(f.site_dir, stores)].object_path(sha256(f.old)) for f in changes)
    return ApplyReport(plan.outcomes, tuple(f.path for f in changes), backups,
                       tuple(result.removed_bytecode), result.txn, (*notes, *result.warnings))


def _check_unchanged_since_planning(plan: ApplyPlan) -> None:
    """Refuse a plan another patchops (or a hand edit) overtook: its "before" is stale."""
    stores = plan._stores
    for site, txn in plan._planned_txn.items():
        if stores[site].read_state().txn != txn:
            raise StoreError(f"another patchops changed {site} while this apply was planning "
                             f"(its last transaction is no longer {txn or 'none'}); nothing was "
                             f"written, run the command again")
    for item in plan.files:
        store = stores[_store_key(item.site_dir, stores)]
        if store.read_file(item.rel) != item.old:
            raise StoreError(f"{item.path} changed while this apply was planning (another "
                             f"patchops ran?); nothing was written, run the command again")
        if store.read_state().files.get(item.rel) != item.entry_before:
            raise StoreError(f"{item.path}: patchops state changed while planning (another "
                             f"patchops ran?); nothing was written, run the command again")


def _record_sources(plan: ApplyPlan, states: Dict[Store, State]) -> None:
    """Keep each patchset's YAML in the stores it now has a record in (status, rollback)."""
    for store, state in states.items():
        used = {n for entry in state.files.values() for n in entry.patchsets} | set(state.satisfied)
        for patchset in plan.patchsets:
            if patchset.name in used and patchset.text:
                sha = store.put_object(patchset.text.encode("utf-8"))
                state.patchsets[patchset.name] = PatchsetSource(str(patchset.path), sha)
        for name in list(state.patchsets):
            if name not in used:
                del state.patchsets[name]


def _store_key(site_dir: Path, stores: Dict[Path, Store]) -> Path:
    key = Path(os.path.realpath(site_dir))
    if key not in stores:
        raise KeyError(site_dir)
    return key
