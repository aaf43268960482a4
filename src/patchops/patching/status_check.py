"""Report each patchset on each copy: applied, not applied, satisfied, not applicable, drifted.

Hashes first: a file patchops wrote is judged by the sha the store recorded, a file found
satisfied before by its record, a file patchops never wrote by the verdict its bytes got
before (`patchops.patching.status_cache`); only what none of those answer is parsed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

from patchops.core.errors import FileIOError, LockedError, PatchopsError
from patchops.patching import file_rewrites as rewriting
from patchops.patchset.states import HAND_EDITED, REPLACED, PatchState, outside_range
from patchops.patching.targets import Target, unique_targets, unwritable
from patchops.core.records import record
from patchops.store.recovery import pending, recover
from patchops.store.site_store import Store, short
from patchops.store.state import FileEntry

if TYPE_CHECKING:
    from patchops.host.locate import VllmCopy
    from patchops.patchset.model import Patchset


@record(frozen=True)
class FileStatus:
    """One target file's part in a status row."""

    path: str                       # relative to the site dir
    state: PatchState               # applied | not-applied | satisfied | not-applicable | drifted
    detail: str
    recorded_sha: Optional[str] = None   # what patchops last wrote, if it did
    current_sha: Optional[str] = None


class StatusRows(List["StatusRow"]):
    """Status rows, plus notes on what status repaired or could not look at safely."""

    def __init__(self, rows=(), notes: Sequence[str] = ()):
        super().__init__(rows)
        self.notes: Tuple[str, ...] = tuple(notes)


@record(frozen=True)
class StatusRow:
    """One patchset on one copy."""

    site_dir: Path
    version: Optional[str]
    patchset: str
    state: PatchState               # applied | not-applied | satisfied | not-applicable | drifted
    detail: str
    files: Tuple[str, ...]          # target files, relative to the site dir
    file_states: Tuple[FileStatus, ...] = ()


def status(copies: Sequence["VllmCopy"], patchsets: Sequence["Patchset"]) -> StatusRows:
    """Report each patchset on each copy, trusting recorded hashes before parsing anything.

    Only files patchops never wrote (or whose hash no longer matches) are parsed with libcst.
    """
    rows: List[StatusRow] = []
    notes: List[str] = []
    for ctx in unique_targets(copies):
        notes += _recover_for_status(ctx.store)
        why = unwritable(ctx, patchsets, copies)
        if why:
            notes.append(f"{why}; until then apply and rollback cannot change this copy")
        rows += _status_copy(ctx, patchsets)
        ctx.save_digests()
    return StatusRows(rows, notes)


def _recover_for_status(store: Store) -> List[str]:
    """Repair what a crashed patchops left, if there is anything and this user may write.

    Status only reads: with a clean journal it takes no lock and opens nothing for
    writing, so it works on a read-only install and beside a running apply.
    """
    if not store.exists():
        return []
    found = pending(store)
    if not found:
        return []
    try:
        with store.lock():
            return recover(store)
    except LockedError:
        return [f"another patchops is working on {store.site_dir}; this status may show its "
                f"files mid-transaction"]
    except FileIOError as exc:
        return [f"{store.root} holds an {', '.join(found)} that needs repair, which needs "
                f"write access ({exc}); run any patchops command as the owner of "
                f"{store.site_dir} to repair it. Until then this status may show it half done"]


def any_drift(rows: Sequence[StatusRow]) -> bool:
    """Return whether any row is drifted (the CLI exits non-zero)."""
    return any(row.state == PatchState.DRIFTED for row in rows)


def _status_copy(ctx: Target, patchsets: Sequence["Patchset"]) -> List[StatusRow]:
    version = ctx.copy.version
    state = ctx.store.read_state()
    applicable = [p for p in patchsets if p.applies_to(version)]
    # Per (patchset, rel): FileStatus, or None while a libcst check is pending.
    found: Dict[Tuple[str, str], FileStatus] = {}
    pending: Dict[str, List["Patchset"]] = {}
    data_of: Dict[str, Optional[bytes]] = {}
    sha_of: Dict[str, str] = {}   # each file is read and hashed once, however many patchsets name it
    for p in applicable:
        for rel in p.files_for(version):
            if rel not in data_of:
                data_of[rel], sha = ctx.read_hashed(rel)
                if sha is not None:
                    sha_of[rel] = sha
            data = data_of[rel]
            shown = ctx.display(rel)
            if data is None:
                [result] = rewriting.missing(rel, [p], version, ctx.path(rel)) or [None]
                ok = result is not None and result.state == PatchState.SATISFIED
                found[p.name, rel] = FileStatus(shown, PatchState.SATISFIED if ok else PatchState.DRIFTED,
                                                result.message if result else f"{shown} is missing")
                continue
            current = sha_of[rel]
            entry = state.files.get(rel)
            record = state.satisfied.get(p.name)
            if entry is not None and p.name in entry.patchsets:
                found[p.name, rel] = _recorded_status(ctx, rel, entry, current, data, p)
            elif record is not None and record.files.get(rel) == current:
                found[p.name, rel] = FileStatus(shown, PatchState.SATISFIED, "already satisfied upstream",
                                                None, current)
            else:
                pending.setdefault(rel, []).append(p)
    for rel, wanted in pending.items():
        data = data_of[rel]
        assert data is not None
        shown = ctx.display(rel)
        current = sha_of[rel]
        # Hash before parse: the same bytes, patchsets and version got this answer before.
        from patchops.patching import status_cache as verdicts

        remembered_key = verdicts.key(current, rel, wanted, version)
        remembered = verdicts.get(remembered_key, ctx.path(rel))
        if remembered is not None and all(p.name in remembered for p in wanted):
            for p in wanted:
                state, detail = remembered[p.name]
                found[p.name, rel] = FileStatus(shown, state, detail, None, current)
            continue
        problems: List[str] = []
        rewritten = _rewrite_quietly(data, rel, wanted, version, ctx.path(rel), problems)
        results = {r.patchset: r for r in rewritten.results} if rewritten is not None else {}
        for p in wanted:
            result = results.get(p.name)
            if result is None:
                detail = problems[0] if problems else "no target site in this file"
                found[p.name, rel] = FileStatus(shown, PatchState.DRIFTED if problems else PatchState.NOT_APPLICABLE,
                                                detail, None, current)
            elif result.state == PatchState.APPLIES:
                found[p.name, rel] = FileStatus(shown, PatchState.NOT_APPLIED, "not applied", None, current)
            elif result.state == PatchState.SATISFIED:
                found[p.name, rel] = FileStatus(shown, PatchState.SATISFIED, "already satisfied upstream",
                                                None, current)
            elif result.state == PatchState.DRIFT:
                found[p.name, rel] = FileStatus(shown, PatchState.DRIFTED, rewriting.where(ctx.path(rel), result),
                                                None, current)
            else:
                found[p.name, rel] = FileStatus(shown, PatchState.NOT_APPLICABLE,
                                                result.message or "no target site in this file",
                                                None, current)
        verdicts.put(remembered_key, ctx.path(rel),
                     {p.name: (found[p.name, rel].state, found[p.name, rel].detail) for p in wanted})
    rows = []
    applicable_names = {p.name for p in applicable}
    for p in patchsets:
        shown_files = tuple(ctx.display(rel) for rel in (p.files_for(version) or p.files))
        if p.name not in applicable_names:
            rows.append(StatusRow(ctx.site_dir, version, p.name, PatchState.NOT_APPLICABLE,
                                  outside_range(version, p), shown_files))
            continue
        file_states = tuple(found[p.name, rel] for rel in p.files_for(version))
        combined = _combine_status([f.state for f in file_states])
        rows.append(StatusRow(ctx.site_dir, version, p.name, combined,
                              _status_detail(combined, file_states), shown_files, file_states))
    return rows


def _recorded_status(ctx: Target, rel: str, entry: FileEntry, current: str, data: bytes,
                     patchset: "Patchset") -> FileStatus:
    """Judge a file patchops wrote by its hash; parse it only to explain a mismatch."""
    shown = ctx.display(rel)
    if current == entry.written:
        return FileStatus(shown, PatchState.APPLIED, "applied by patchops", entry.written, current)
    hashes = f"recorded sha {short(entry.written)}, current {short(current)}"
    if current == entry.original:
        why = REPLACED
    else:
        why = HAND_EDITED
        rewritten = _rewrite_quietly(data, rel, [patchset], ctx.copy.version, ctx.path(rel), [])
        result = next((r for r in rewritten.results if r.patchset == patchset.name), None) \
            if rewritten is not None else None
        if result is not None and result.state == PatchState.APPLIES:
            why = REPLACED
        elif result is not None and result.state == PatchState.SATISFIED:
            why = HAND_EDITED + "; the patch is still present"
    return FileStatus(shown, PatchState.DRIFTED, f"{shown}: {why}; {hashes}", entry.written, current)


def _rewrite_quietly(data: bytes, rel: str, patchsets: Sequence["Patchset"], version: Optional[str],
                     path: Path, problems: List[str]):
    """Rewrite for a report: a file that cannot be parsed is a problem, not an exception."""
    try:
        return rewriting.rewrite(data, rel, patchsets, version, path, problems)
    except PatchopsError as exc:
        problems.append(str(exc))
        return None


def _combine_status(states: Sequence[PatchState]) -> PatchState:
    for wanted in (PatchState.DRIFTED, PatchState.NOT_APPLIED):
        if wanted in states:
            return wanted
    relevant = [s for s in states if s != PatchState.NOT_APPLICABLE]
    if not relevant:
        return PatchState.NOT_APPLICABLE
    if PatchState.APPLIED in relevant:
        return PatchState.APPLIED
    return PatchState.SATISFIED


def _status_detail(state: PatchState, files: Sequence[FileStatus]) -> str:
    if state == PatchState.DRIFTED:
        return "; ".join(f.detail for f in files if f.state == PatchState.DRIFTED)
    if state == PatchState.NOT_APPLIED:
        missing = [f.path for f in files if f.state == PatchState.NOT_APPLIED]
        return "not applied in " + ", ".join(missing)
    if state == PatchState.APPLIED:
        return "applied by patchops"
    if state == PatchState.SATISFIED:
        return "already satisfied upstream; nothing to do"
    return "; ".join(f.detail for f in files) or "no target site in this vLLM"
