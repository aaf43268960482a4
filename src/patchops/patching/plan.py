"""Plan an apply: every copy's patched files computed in memory, nothing written.

A file patchops already patched (its hash is the one the store recorded) or found satisfied
before is answered from the store's hashes; only the others are rewritten (libcst, via
`patchops.patching.file_rewrites`). `patchops.patching.commit` writes the plan.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

from patchops.store import faults
from patchops.core.errors import DriftError, FileIOError
from patchops.patching import file_rewrites as rewriting
from patchops.patchset.states import REPLACED, PatchState, outside_range
from patchops.patching.targets import Target, recover_stores, unique_targets, unwritable
from patchops.core.records import field, record
from patchops.store.site_store import Store, now, sha256, short
from patchops.store.state import FileEntry, SatisfiedRecord, State

if TYPE_CHECKING:
    from patchops.host.locate import VllmCopy
    from patchops.patchset.model import Patchset


@record(frozen=True)
class FilePlan:
    """One target file of one copy: its bytes now and after the plan."""

    site_dir: Path
    rel: str                                  # relative to the package: "engine/arg_utils.py"
    path: Path                                # the file, as the copy spells it
    version: Optional[str]
    old: bytes
    new: bytes
    patchsets: Tuple[str, ...]                # what this plan applies here, in order
    entry_before: Optional[FileEntry] = None  # state.json's record before
    entry_after: Optional[FileEntry] = None   # state.json's record after

    @property
    def changed(self) -> bool:
        return self.old != self.new

    @property
    def display(self) -> str:
        """Return the path relative to the site dir: `vllm/engine/arg_utils.py`."""
        return f"{self.path.parent.relative_to(self.site_dir).as_posix()}/{self.path.name}" \
            if _is_under(self.path, self.site_dir) else str(self.path)


@record(frozen=True)
class PatchsetOutcome:
    """What applying one patchset means for one copy."""

    site_dir: Path
    version: Optional[str]
    patchset: str
    state: PatchState         # applies | applied | satisfied | drift | not-applicable
    detail: str
    files: Tuple[str, ...]    # target files, relative to the site dir


@record
class ApplyPlan:
    """Every copy's new file contents, computed in memory; `commit_apply` writes them."""

    copies: Tuple["VllmCopy", ...]
    patchsets: Tuple["Patchset", ...]
    outcomes: Tuple[PatchsetOutcome, ...]
    files: Tuple[FilePlan, ...]               # every target file considered, changed or not
    problems: Tuple[str, ...] = ()            # drift and invalid results: the plan cannot apply
    unwritable: Tuple[str, ...] = ()          # copies it would write that patchops cannot, and why
    notes: Tuple[str, ...] = ()               # recovered transactions, adopted files
    satisfied: Tuple[Tuple[Path, str, SatisfiedRecord], ...] = ()  # (site, patchset, record) to keep
    force: bool = False
    _stores: Dict[Path, Store] = field(default_factory=dict, repr=False)
    # Per store: the transaction its state.json reflected when planned; commit_apply stops
    # if another patchops committed anything since (a rollback racing this apply would otherwise be undone).
    _planned_txn: Dict[Path, Optional[str]] = field(default_factory=dict, repr=False)

    @property
    def changes(self) -> Tuple[FilePlan, ...]:
        """Return the files the plan rewrites."""
        return tuple(f for f in self.files if f.changed)

    def problem_message(self) -> str:
        """Return the problems as one paragraph a user can act on."""
        return _drift_paragraph("cannot apply", self.problems, self.force)

    def unwritable_message(self) -> str:
        """Return the copies patchops cannot write as one paragraph."""
        return "; ".join(self.unwritable) + ". Nothing was written"


def plan_apply(copies: Sequence["VllmCopy"], patchsets: Sequence["Patchset"], *,
               force: bool = False, check: bool = True) -> ApplyPlan:
    """Compute every copy's patched files in memory, without writing anything.

    Raises DriftError when a file is neither pristine nor patched (unless check=False, which
    returns the plan with `problems` for display; commit_apply still refuses it) and
    PatchsetError when a result would not compile. A file patchops patched but that changed
    since is drift too; force=True takes its current bytes as the new original instead
    (after a vLLM upgrade), keeping the old backup. A copy the plan would write that patchops
    cannot write (read-only, immutable, another owner) raises FileIOError saying why (with
    check=False it is listed in `unwritable`).
    """
    stores: Dict[Path, Store] = {}
    ctxs = unique_targets(copies, stores)
    # Asked first: a copy that cannot be written must not fail halfway through recovery.
    blocked = {ctx.store.site_dir: unwritable(ctx, patchsets, copies)
               for ctx in ctxs}
    notes = recover_stores([ctx.store for ctx in ctxs])
    outcomes: List[PatchsetOutcome] = []
    files: List[FilePlan] = []
    problems: List[str] = []
    satisfied: List[Tuple[Path, str, SatisfiedRecord]] = []
    planned_txn: Dict[Path, Optional[str]] = {}
    for ctx in ctxs:
        faults.point("plan-copy", ctx.site_dir)
        state = ctx.store.read_state()
        planned_txn[ctx.store.site_dir] = state.txn
        _plan_copy(ctx, state, list(patchsets), force, outcomes, files, problems, notes, satisfied)
        ctx.save_digests()
    writes = {Path(os.path.realpath(f.site_dir)) for f in files
              if f.changed or f.entry_after != f.entry_before} | {site for site, _, _ in satisfied}
    plan = ApplyPlan(copies=tuple(ctx.copy for ctx in ctxs), patchsets=tuple(patchsets),
                     outcomes=tuple(outcomes), files=tuple(files), problems=tuple(problems),
                     unwritable=tuple(why for site, why in blocked.items() if why and site in writes),
                     notes=tuple(notes), satisfied=tuple(satisfied), force=force, _stores=stores,
                     _planned_txn=planned_txn)
    if check and plan.unwritable:
        raise FileIOError(plan.unwritable_message())
    if check and problems:
        raise DriftError(plan.problem_message())
    return plan


def _plan_copy(ctx: Target, state: State, patchsets: List["Patchset"], force: bool,
               outcomes: List[PatchsetOutcome], files: List[FilePlan], problems: List[str],
               notes: List[str], satisfied: List[Tuple[Path, str, SatisfiedRecord]]) -> None:
    version = ctx.copy.version
    applicable = []
    for patchset in patchsets:
        if patchset.applies_to(version):
            applicable.append(patchset)
        else:
            outcomes.append(PatchsetOutcome(
                ctx.site_dir, version, patchset.name, PatchState.NOT_APPLICABLE,
                outside_range(version, patchset), tuple(ctx.display(rel) for rel in patchset.files)))
    # Per patchset: rel -> (state, message); per patchset: rel -> sha newly found satisfied.
    per_file: Dict[str, Dict[str, Tuple[PatchState, str]]] = {p.name: {} for p in applicable}
    found_satisfied: Dict[str, Dict[str, str]] = {p.name: {} for p in applicable}
    for rel in _ordered_files(applicable, version):
        wanted = [p for p in applicable if rel in p.files_for(version)]
        path = ctx.path(rel)
        ctx.store.target(rel)  # a link out of the copy is refused before anything is read
        data, current = ctx.read_hashed(rel)
        if data is None or current is None:
            for result in rewriting.missing(rel, wanted, version, path):
                per_file[result.patchset][rel] = (result.state, result.message)
                if result.state == PatchState.DRIFT:
                    problems.append(rewriting.where(path, result))
            continue
        entry = state.files.get(rel)
        base = entry
        if entry is not None and current != entry.written:
            if current == entry.original:
                base = None  # reinstalled as it was: patch it again from scratch
                notes.append(f"{path}: {REPLACED}; patching it again")
            elif force:
                base = None
                notes.append(f"{path}: changed since patchops wrote it (recorded sha "
                             f"{short(entry.written)}, current {short(current)}); --force takes "
                             f"the current file as the new original, the old one stays in "
                             f"{ctx.store.objects}")
            else:
                message = (f"{path}: changed since patchops wrote it (recorded sha "
                           f"{short(entry.written)}, current {short(current)})")
                problems.append(message)
                for p in wanted:
                    per_file[p.name][rel] = (PatchState.DRIFT, message)
                files.append(FilePlan(ctx.site_dir, rel, path, version, data, data, (), entry, entry))
                continue
        todo = []
        for p in wanted:
            record = state.satisfied.get(p.name)
            if base is not None and p.name in base.patchsets:
                per_file[p.name][rel] = (PatchState.APPLIED, "")
            elif record is not None and record.files.get(rel) == current:
                per_file[p.name][rel] = (PatchState.SATISFIED, "")
            else:
                todo.append(p)
        new = data
        applied_now: List[str] = []
        if todo:
            rewritten = rewriting.rewrite(data, rel, todo, version, path, problems)
            if rewritten is None:
                for p in todo:
                    per_file[p.name][rel] = (PatchState.DRIFT, f"{path}: not valid UTF-8 Python")
            else:
                result_states = {r.patchset: r for r in rewritten.results}
                for p in todo:
                    result = result_states.get(p.name)
                    if result is None:
                        per_file[p.name][rel] = (PatchState.NOT_APPLICABLE, "")
                        continue
                    per_file[p.name][rel] = (result.state, result.message)
                    if result.state == PatchState.DRIFT:
                        problems.append(rewriting.where(path, result))
                    elif result.state == PatchState.SATISFIED:
                        found_satisfied[p.name][rel] = current
                    elif result.state == PatchState.APPLIES:
                        applied_now.append(p.name)
                if rewritten.changed and not any(per_file[p.name][rel][0] == PatchState.DRIFT for p in todo):
                    new = rewritten.new_source.encode("utf-8")
                    rewriting.check_compiles(new, path, applied_now)
        entry_after = base
        if new != data:
            if base is not None:
                entry_after = FileEntry(base.original, sha256(new), base.patchsets + applied_now)
            else:
                entry_after = FileEntry(current, sha256(new), applied_now)
        files.append(FilePlan(ctx.site_dir, rel, path, version, data, new, tuple(applied_now),
                              entry, entry_after))
        if new != data:
            # Record satisfaction against the bytes the file will hold, so the next run can
            # answer from the hash; other patchsets' sites do not overlap this one's.
            for p in todo:
                if rel in found_satisfied[p.name]:
                    found_satisfied[p.name][rel] = sha256(new)
    for p in applicable:
        states = per_file[p.name]
        combined = _combine([s for s, _ in states.values()])
        outcomes.append(PatchsetOutcome(ctx.site_dir, version, p.name, combined,
                                        _outcome_detail(combined, states, ctx),
                                        tuple(ctx.display(rel) for rel in p.files_for(version))))
        if found_satisfied[p.name]:
            record = state.satisfied.get(p.name)
            files_sha = dict(record.files) if record is not None else {}
            files_sha.update(found_satisfied[p.name])
            satisfied.append((ctx.store.site_dir, p.name, SatisfiedRecord(files_sha, version, now())))


def _ordered_files(patchsets: Sequence["Patchset"], version: Optional[str]) -> List[str]:
    seen: List[str] = []
    for patchset in patchsets:
        for rel in patchset.files_for(version):
            if rel not in seen:
                seen.append(rel)
    return seen


def _combine(states: Sequence[PatchState]) -> PatchState:
    if PatchState.DRIFT in states:
        return PatchState.DRIFT
    relevant = [s for s in states if s != PatchState.NOT_APPLICABLE]
    if not relevant:
        return PatchState.NOT_APPLICABLE
    if PatchState.APPLIES in relevant:
        return PatchState.APPLIES
    if all(s == PatchState.SATISFIED for s in relevant):
        return PatchState.SATISFIED
    return PatchState.APPLIED


def _outcome_detail(state: PatchState, per_file: Dict[str, Tuple[PatchState, str]], ctx: Target) -> str:
    if state == PatchState.APPLIES:
        changed = [ctx.display(rel) for rel, (s, _) in per_file.items() if s == PatchState.APPLIES]
        return "patches " + ", ".join(changed)
    if state == PatchState.APPLIED:
        return "already applied by patchops; nothing to do"
    if state == PatchState.SATISFIED:
        return "already satisfied upstream; nothing to do"
    if state == PatchState.DRIFT:
        return "; ".join(m for s, m in per_file.values() if s == PatchState.DRIFT and m)
    return "; ".join(m for _, m in per_file.values() if m) or "no target site in this vLLM"


def _drift_paragraph(what: str, problems: Sequence[str], force: bool) -> str:
    text = f"{what}: " + "; ".join(p.rstrip(".") for p in problems) + ". Nothing was written. "
    changed = any("changed since patchops wrote it" in p for p in problems)
    other = any("changed since patchops wrote it" not in p for p in problems)
    if other:
        text += ("Each target must be as vLLM (or the vendor) shipped it, or already patched. "
                 "If the file is as shipped, the patchset does not know this vendor's code: add "
                 "the value found to the op's `pristine:` list (or widen its match) in the "
                 "patchset file; if someone edited the file, reinstall vLLM to get it back. ")
    if changed and not force:
        text += ("For files changed since patchops wrote them, `patchops rollback --force` "
                 "restores the original (keeping the changed file in the store), or "
                 "`patchops apply --force` takes the current file as the new original. ")
    return text + "`patchops status` shows what patchops recorded."


def unified_diff(plan: ApplyPlan) -> str:
    """Return the plan's changes as a unified diff, for --dry-run.

    Paths are relative to the site dir (`a/vllm/engine/arg_utils.py`), so `git apply` or
    `patch -p1` run there take it; a change identical in several copies (lib and lib64) is
    shown once, under a `#` line naming the copies (both tools skip such lines).
    """
    groups: Dict[Tuple[str, bytes, bytes], List[FilePlan]] = {}
    for item in plan.changes:
        groups.setdefault((item.display, item.old, item.new), []).append(item)
    chunks = []
    for (name, old_bytes, new_bytes), items in groups.items():
        sites = ", ".join(str(item.site_dir) for item in items)
        chunks.append(f"# in {sites}\n" if len(items) == 1 else
                      f"# identical in {len(items)} copies: {sites}\n")
        old = old_bytes.decode("utf-8", "replace").splitlines(keepends=True)
        new = new_bytes.decode("utf-8", "replace").splitlines(keepends=True)
        for line in difflib.unified_diff(old, new, fromfile=f"a/{name}", tofile=f"b/{name}"):
            chunks.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(chunks)


def _is_under(path: Path, parent: Path) -> bool:
    try:
        path.relative_to(parent)
        return True
    except ValueError:
        return False
