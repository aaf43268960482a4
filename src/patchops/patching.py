"""Plan, apply, report and roll back patchsets over every vLLM copy as one transaction.

A library: plain dataclasses back, nothing printed. Files are written only through
`patchops.store`. libcst (via `patchops.rewrite`) is imported lazily and only for files whose
state the store cannot vouch for by hash, so a no-op re-apply or a status of patched copies
stays cheap.
"""

from __future__ import annotations

import difflib
import os
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

from patchops import faults
from patchops.safe_fs import io_error
from patchops.errors import (DriftError, FileIOError, LockedError, PatchopsError, PatchsetError,
                             StoreError)
from patchops.rewrite import APPLIES, DRIFT, NOT_APPLICABLE, SATISFIED
from patchops.store import (Change, FileEntry, PatchsetSource, SatisfiedRecord, State, Store, now,
                            sha256, short, transact)

if TYPE_CHECKING:
    from patchops.locate import VllmCopy
    from patchops.patchset import Patchset
    from patchops.rewrite import FileRewrite

# Per (copy, patchset) in a plan, and per file while planning: rewrite's states (applies,
# satisfied, drift, not-applicable; importing rewrite does not import libcst) plus this one.
APPLIED = "applied"                # patchops already applied it; nothing to do

# Status states.
ST_APPLIED = "applied"
ST_NOT_APPLIED = "not-applied"
ST_SATISFIED = "satisfied"
ST_NOT_APPLICABLE = "not-applicable"
ST_DRIFTED = "drifted"

REPLACED = "file was replaced (reinstall?): patch no longer present"
HAND_EDITED = "hand-edited since patchops wrote it"


# --- results -----------------------------------------------------------------------------------


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class PatchsetOutcome:
    """What applying one patchset means for one copy."""

    site_dir: Path
    version: Optional[str]
    patchset: str
    state: str                # applies | applied | satisfied | drift | not-applicable
    detail: str
    files: Tuple[str, ...]    # target files, relative to the site dir


@dataclass
class ApplyPlan:
    """Every copy's new file contents, computed in memory; `commit_apply` writes them."""

    copies: Tuple["VllmCopy", ...]
    patchsets: Tuple["Patchset", ...]
    outcomes: Tuple[PatchsetOutcome, ...]
    files: Tuple[FilePlan, ...]               # every target file considered, changed or not
    problems: Tuple[str, ...] = ()            # drift and invalid results: the plan cannot apply
    notes: Tuple[str, ...] = ()               # recovered transactions, adopted files
    satisfied: Tuple[Tuple[Path, str, SatisfiedRecord], ...] = ()  # (site, patchset, record) to keep
    force: bool = False
    _stores: Dict[Path, Store] = field(default_factory=dict, repr=False)
    # Per store: the transaction its state.json reflected when planned; commit_apply stops
    # if another patchops committed anything since (issue 6: apply racing rollback).
    _planned_txn: Dict[Path, Optional[str]] = field(default_factory=dict, repr=False)

    @property
    def changes(self) -> Tuple[FilePlan, ...]:
        """Return the files the plan rewrites."""
        return tuple(f for f in self.files if f.changed)

    def problem_message(self) -> str:
        """Return the problems as one paragraph a user can act on."""
        return _drift_paragraph("cannot apply", self.problems, self.force)


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class FileStatus:
    """One target file's part in a status row."""

    path: str                       # relative to the site dir
    state: str                      # applied | not-applied | satisfied | not-applicable | drifted
    detail: str
    recorded_sha: Optional[str] = None   # what patchops last wrote, if it did
    current_sha: Optional[str] = None


class StatusRows(List["StatusRow"]):
    """Status rows, plus notes on what status repaired or could not look at safely."""

    def __init__(self, rows=(), notes: Sequence[str] = ()):
        super().__init__(rows)
        self.notes: Tuple[str, ...] = tuple(notes)


@dataclass(frozen=True)
class StatusRow:
    """One patchset on one copy."""

    site_dir: Path
    version: Optional[str]
    patchset: str
    state: str                      # applied | not-applied | satisfied | not-applicable | drifted
    detail: str
    files: Tuple[str, ...]          # target files, relative to the site dir
    file_states: Tuple[FileStatus, ...] = ()


@dataclass(frozen=True)
class FileRollback:
    """One file a rollback restored (or found already original)."""

    site_dir: Path
    path: Path
    removed: Tuple[str, ...]         # patchsets rolled back here
    kept: Tuple[str, ...]            # patchsets re-applied on top of the original
    written: bool                    # False when the file was already original
    forced: bool = False             # restored over bytes patchops did not write
    saved: Optional[Path] = None     # objects/<sha> holding those bytes when forced


@dataclass(frozen=True)
class RollbackReport:
    """What rollback restored."""

    files: Tuple[FileRollback, ...]
    patchsets: Tuple[str, ...]       # names rolled back somewhere
    removed_bytecode: Tuple[Path, ...]
    txn: Optional[str]
    notes: Tuple[str, ...] = ()

    @property
    def restored(self) -> Tuple[Path, ...]:
        return tuple(f.path for f in self.files if f.written)

    @property
    def changed(self) -> bool:
        return bool(self.restored)


# --- copies ------------------------------------------------------------------------------------


@dataclass
class _Copy:
    copy: "VllmCopy"
    store: Store

    @property
    def site_dir(self) -> Path:
        return self.copy.site_dir

    def path(self, rel: str) -> Path:
        return self.copy.package_dir / rel

    def display(self, rel: str) -> str:
        return f"{self.copy.package_dir.name}/{rel}"


def _unique_copies(copies: Sequence["VllmCopy"], stores: Optional[Dict[Path, Store]] = None) -> List[_Copy]:
    """Drop copies that reach the same files (lib64 -> lib symlinks): each is patched once."""
    seen = set()
    result = []
    for copy in copies:
        key = os.path.realpath(copy.package_dir)
        if key in seen:
            continue
        seen.add(key)
        store = Store(copy.site_dir, copy.package_dir.name)
        if stores is not None:
            store = stores.setdefault(store.site_dir, store)
        result.append(_Copy(copy, store))
    return result


def _recover(stores: Sequence[Store]) -> List[str]:
    """Repair what a crashed patchops left, in every store that exists."""
    notes = []
    for store in sorted(stores):
        if store.exists():
            with store.lock(create=False):
                notes += store.recover()
    return notes


def _read(path: Path) -> Optional[bytes]:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise io_error(exc, "read", path) from exc


# --- apply -------------------------------------------------------------------------------------


def plan_apply(copies: Sequence["VllmCopy"], patchsets: Sequence["Patchset"], *,
               force: bool = False, check: bool = True) -> ApplyPlan:
    """Compute every copy's patched files in memory, without writing anything.

    Raises DriftError when a file is neither pristine nor patched (unless check=False, which
    returns the plan with `problems` for display; commit_apply still refuses it) and
    PatchsetError when a result would not compile. A file patchops patched but that changed
    since is drift too; force=True takes its current bytes as the new original instead
    (after a vLLM upgrade), keeping the old backup.
    """
    stores: Dict[Path, Store] = {}
    ctxs = _unique_copies(copies, stores)
    notes = _recover([ctx.store for ctx in ctxs])
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
    plan = ApplyPlan(copies=tuple(ctx.copy for ctx in ctxs), patchsets=tuple(patchsets),
                     outcomes=tuple(outcomes), files=tuple(files), problems=tuple(problems),
                     notes=tuple(notes), satisfied=tuple(satisfied), force=force, _stores=stores,
                     _planned_txn=planned_txn)
    if check and problems:
        raise DriftError(plan.problem_message())
    return plan


def _plan_copy(ctx: _Copy, state: State, patchsets: List["Patchset"], force: bool,
               outcomes: List[PatchsetOutcome], files: List[FilePlan], problems: List[str],
               notes: List[str], satisfied: List[Tuple[Path, str, SatisfiedRecord]]) -> None:
    version = ctx.copy.version
    applicable = []
    for patchset in patchsets:
        if patchset.applies_to(version):
            applicable.append(patchset)
        else:
            outcomes.append(PatchsetOutcome(
                ctx.site_dir, version, patchset.name, NOT_APPLICABLE,
                _outside(version, patchset), tuple(ctx.display(rel) for rel in patchset.files)))
    # Per patchset: rel -> (state, message); per patchset: rel -> sha newly found satisfied.
    per_file: Dict[str, Dict[str, Tuple[str, str]]] = {p.name: {} for p in applicable}
    found_satisfied: Dict[str, Dict[str, str]] = {p.name: {} for p in applicable}
    for rel in _ordered_files(applicable, version):
        wanted = [p for p in applicable if rel in _files(p, version)]
        path = ctx.path(rel)
        ctx.store.target(rel)  # a link out of the copy is refused before anything is read
        data = ctx.store.read_file(rel)
        if data is None:
            for result in _missing(rel, wanted, version, path):
                per_file[result.patchset][rel] = (result.state, result.message)
                if result.state == DRIFT:
                    problems.append(_where(path, result))
            continue
        current = sha256(data)
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
                    per_file[p.name][rel] = (DRIFT, message)
                files.append(FilePlan(ctx.site_dir, rel, path, version, data, data, (), entry, entry))
                continue
        todo = []
        for p in wanted:
            record = state.satisfied.get(p.name)
            if base is not None and p.name in base.patchsets:
                per_file[p.name][rel] = (APPLIED, "")
            elif record is not None and record.files.get(rel) == current:
                per_file[p.name][rel] = (SATISFIED, "")
            else:
                todo.append(p)
        new = data
        applied_now: List[str] = []
        if todo:
            rewritten = _rewrite(data, rel, todo, version, path, problems)
            if rewritten is None:
                for p in todo:
                    per_file[p.name][rel] = (DRIFT, f"{path}: not valid UTF-8 Python")
            else:
                result_states = {r.patchset: r for r in rewritten.results}
                for p in todo:
                    result = result_states.get(p.name)
                    if result is None:
                        per_file[p.name][rel] = (NOT_APPLICABLE, "")
                        continue
                    per_file[p.name][rel] = (result.state, result.message)
                    if result.state == DRIFT:
                        problems.append(_where(path, result))
                    elif result.state == SATISFIED:
                        found_satisfied[p.name][rel] = current
                    elif result.state == APPLIES:
                        applied_now.append(p.name)
                if rewritten.changed and not any(per_file[p.name][rel][0] == DRIFT for p in todo):
                    new = rewritten.new_source.encode("utf-8")
                    _check_compiles(new, path, applied_now)
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
                                        tuple(ctx.display(rel) for rel in _files(p, version))))
        if found_satisfied[p.name]:
            record = state.satisfied.get(p.name)
            files_sha = dict(record.files) if record is not None else {}
            files_sha.update(found_satisfied[p.name])
            satisfied.append((ctx.store.site_dir, p.name, SatisfiedRecord(files_sha, version, now())))


def _files(patchset: "Patchset", version: Optional[str]) -> Tuple[str, ...]:
    """Return the files the patchset's ops touch on `version` (ops may have their own range)."""
    return patchset.files_for(version)


def _ordered_files(patchsets: Sequence["Patchset"], version: Optional[str]) -> List[str]:
    seen: List[str] = []
    for patchset in patchsets:
        for rel in _files(patchset, version):
            if rel not in seen:
                seen.append(rel)
    return seen


def _missing(rel: str, patchsets: Sequence["Patchset"], version: Optional[str], path: Path):
    """Report patchsets on a target file that does not exist (drift unless `sites` allows 0)."""
    from patchops.rewrite import missing_file_results

    return missing_file_results(rel, patchsets, version, display_path=str(path))


# Vendor images usually hold byte-identical copies (lib and lib64): each distinct file is parsed
# once per process. Keyed by content, target, the patchset objects (by identity: their op
# parameters may hold lists) and version; values keep the patchsets alive, so an id is never
# reused, and the path the rewrite ran under, so messages can be re-pointed at another copy.
_REWRITES: Dict[tuple, Tuple[tuple, str, "FileRewrite"]] = {}


def _rewrite(data: bytes, rel: str, patchsets: Sequence["Patchset"], version: Optional[str],
             path: Path, problems: List[str]):
    """Run the libcst rewrite (imported here, not at module load: see the module docstring)."""
    from patchops.rewrite import rewrite_source

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(f"{path}: not valid UTF-8 ({exc.reason} at byte {exc.start})")
        return None
    key = (sha256(data), rel, tuple(map(id, patchsets)), version)
    if key in _REWRITES:
        _, first_path, done = _REWRITES[key]
        return replace(done, results=tuple(
            replace(r, message=r.message.replace(first_path, str(path))) for r in done.results))
    done = rewrite_source(text, rel, patchsets, version, display_path=str(path))
    _REWRITES[key] = (tuple(patchsets), str(path), done)
    return done


def _check_compiles(new: bytes, path: Path, names: Sequence[str]) -> None:
    """Refuse a rewrite that would not compile: the next `import vllm` would fail."""
    try:
        compile(new, str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise PatchsetError(
            f"{path}:{exc.lineno or 0}: patchset {', '.join(names) or '?'} would produce "
            f"invalid Python ({exc.msg}); nothing was written. Fix the patchset") from exc


def _where(path: Path, result) -> str:
    """Return a rewrite result's message, naming file:line if it does not already."""
    message = (getattr(result, "message", "") or "").strip() or f"patchset {result.patchset!r} drifted"
    if str(path) in message:
        return message
    line = _first_line(getattr(result, "sites", ()))
    where = f"{path}:{line}" if line else str(path)
    return f"{where}: {message}"


def _first_line(sites) -> Optional[int]:
    for site in sites or ():
        if isinstance(site, int):
            return site
        if isinstance(site, (tuple, list)) and site and isinstance(site[0], int):
            return site[0]
        for attr in ("line", "lineno"):
            value = getattr(site, attr, None)
            if isinstance(value, int):
                return value
    return None


def _combine(states: Sequence[str]) -> str:
    if DRIFT in states:
        return DRIFT
    relevant = [s for s in states if s != NOT_APPLICABLE]
    if not relevant:
        return NOT_APPLICABLE
    if APPLIES in relevant:
        return APPLIES
    if all(s == SATISFIED for s in relevant):
        return SATISFIED
    return APPLIED


def _outcome_detail(state: str, per_file: Dict[str, Tuple[str, str]], ctx: _Copy) -> str:
    if state == APPLIES:
        changed = [ctx.display(rel) for rel, (s, _) in per_file.items() if s == APPLIES]
        return "patches " + ", ".join(changed)
    if state == APPLIED:
        return "already applied by patchops; nothing to do"
    if state == SATISFIED:
        return "already satisfied upstream; nothing to do"
    if state == DRIFT:
        return "; ".join(m for s, m in per_file.values() if s == DRIFT and m)
    return "; ".join(m for _, m in per_file.values() if m) or "no target site in this vLLM"


def _outside(version: Optional[str], patchset: "Patchset") -> str:
    return f"not for vLLM {version or 'unknown'} (it supports vLLM {patchset.versions})"


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


def commit_apply(plan: ApplyPlan) -> ApplyReport:
    """Write a plan: back up, journal, swap every file of every copy as one transaction.

    Writes nothing (not even state.json) when every patchset is already applied or
    satisfied as recorded, so a re-apply keeps every byte and mtime. Under the locks of
    every copy it re-checks every planned file, "nothing to do" ones too, and stops if any
    changed, or any copy saw another transaction, since planning.
    """
    if plan.problems:
        raise DriftError(plan.problem_message())
    changes = plan.changes
    entry_updates = [f for f in plan.files if f.entry_after != f.entry_before]
    if not changes and not entry_updates and not plan.satisfied:
        return ApplyReport(plan.outcomes, (), (), (), None, plan.notes)
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
                notes += store.recover()
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


# --- status ------------------------------------------------------------------------------------


def status(copies: Sequence["VllmCopy"], patchsets: Sequence["Patchset"]) -> StatusRows:
    """Report each patchset on each copy, trusting recorded hashes before parsing anything.

    Only files patchops never wrote (or whose hash no longer matches) are parsed with libcst.
    """
    rows: List[StatusRow] = []
    notes: List[str] = []
    for ctx in _unique_copies(copies):
        notes += _recover_for_status(ctx.store)
        rows += _status_copy(ctx, patchsets)
    return StatusRows(rows, notes)


def _recover_for_status(store: Store) -> List[str]:
    """Repair what a crashed patchops left, if there is anything and this user may write.

    Status only reads: with a clean journal it takes no lock and opens nothing for
    writing, so it works on a read-only install and beside a running apply.
    """
    if not store.exists():
        return []
    pending = store.pending()
    if not pending:
        return []
    try:
        with store.lock():
            return store.recover()
    except LockedError:
        return [f"another patchops is working on {store.site_dir}; this status may show its "
                f"files mid-transaction"]
    except FileIOError as exc:
        return [f"{store.root} holds an {', '.join(pending)} that needs repair, which needs "
                f"write access ({exc}); run any patchops command as the owner of "
                f"{store.site_dir} to repair it. Until then this status may show it half done"]


def any_drift(rows: Sequence[StatusRow]) -> bool:
    """Return whether any row is drifted (the CLI exits non-zero)."""
    return any(row.state == ST_DRIFTED for row in rows)


def _status_copy(ctx: _Copy, patchsets: Sequence["Patchset"]) -> List[StatusRow]:
    version = ctx.copy.version
    state = ctx.store.read_state()
    applicable = [p for p in patchsets if p.applies_to(version)]
    # Per (patchset, rel): FileStatus, or None while a libcst check is pending.
    found: Dict[Tuple[str, str], FileStatus] = {}
    pending: Dict[str, List["Patchset"]] = {}
    data_of: Dict[str, Optional[bytes]] = {}
    for p in applicable:
        for rel in _files(p, version):
            if rel not in data_of:
                data_of[rel] = _read(ctx.path(rel))
            data = data_of[rel]
            shown = ctx.display(rel)
            if data is None:
                [result] = _missing(rel, [p], version, ctx.path(rel)) or [None]
                ok = result is not None and result.state == SATISFIED
                found[p.name, rel] = FileStatus(shown, ST_SATISFIED if ok else ST_DRIFTED,
                                                result.message if result else f"{shown} is missing")
                continue
            current = sha256(data)
            entry = state.files.get(rel)
            record = state.satisfied.get(p.name)
            if entry is not None and p.name in entry.patchsets:
                found[p.name, rel] = _recorded_status(ctx, rel, entry, current, data, p)
            elif record is not None and record.files.get(rel) == current:
                found[p.name, rel] = FileStatus(shown, ST_SATISFIED, "already satisfied upstream",
                                                None, current)
            else:
                pending.setdefault(rel, []).append(p)
    for rel, wanted in pending.items():
        data = data_of[rel]
        assert data is not None
        shown = ctx.display(rel)
        current = sha256(data)
        # Hash before parse: the same bytes, patchsets and version got this answer before.
        from patchops import verdicts

        remembered_key = verdicts.key(current, rel, [p.path for p in wanted], version)
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
                found[p.name, rel] = FileStatus(shown, ST_DRIFTED if problems else ST_NOT_APPLICABLE,
                                                detail, None, current)
            elif result.state == APPLIES:
                found[p.name, rel] = FileStatus(shown, ST_NOT_APPLIED, "not applied", None, current)
            elif result.state == SATISFIED:
                found[p.name, rel] = FileStatus(shown, ST_SATISFIED, "already satisfied upstream",
                                                None, current)
            elif result.state == DRIFT:
                found[p.name, rel] = FileStatus(shown, ST_DRIFTED, _where(ctx.path(rel), result),
                                                None, current)
            else:
                found[p.name, rel] = FileStatus(shown, ST_NOT_APPLICABLE,
                                                result.message or "no target site in this file",
                                                None, current)
        verdicts.put(remembered_key, ctx.path(rel),
                     {p.name: (found[p.name, rel].state, found[p.name, rel].detail) for p in wanted})
    rows = []
    applicable_names = {p.name for p in applicable}
    for p in patchsets:
        shown_files = tuple(ctx.display(rel) for rel in (_files(p, version) or p.files))
        if p.name not in applicable_names:
            rows.append(StatusRow(ctx.site_dir, version, p.name, ST_NOT_APPLICABLE,
                                  _outside(version, p), shown_files))
            continue
        file_states = tuple(found[p.name, rel] for rel in _files(p, version))
        combined = _combine_status([f.state for f in file_states])
        rows.append(StatusRow(ctx.site_dir, version, p.name, combined,
                              _status_detail(combined, file_states), shown_files, file_states))
    return rows


def _recorded_status(ctx: _Copy, rel: str, entry: FileEntry, current: str, data: bytes,
                     patchset: "Patchset") -> FileStatus:
    """Judge a file patchops wrote by its hash; parse it only to explain a mismatch."""
    shown = ctx.display(rel)
    if current == entry.written:
        return FileStatus(shown, ST_APPLIED, "applied by patchops", entry.written, current)
    hashes = f"recorded sha {short(entry.written)}, current {short(current)}"
    if current == entry.original:
        why = REPLACED
    else:
        why = HAND_EDITED
        rewritten = _rewrite_quietly(data, rel, [patchset], ctx.copy.version, ctx.path(rel), [])
        result = next((r for r in rewritten.results if r.patchset == patchset.name), None) \
            if rewritten is not None else None
        if result is not None and result.state == APPLIES:
            why = REPLACED
        elif result is not None and result.state == SATISFIED:
            why = HAND_EDITED + "; the patch is still present"
    return FileStatus(shown, ST_DRIFTED, f"{shown}: {why}; {hashes}", entry.written, current)


def _rewrite_quietly(data: bytes, rel: str, patchsets: Sequence["Patchset"], version: Optional[str],
                     path: Path, problems: List[str]):
    """Rewrite for a report: a file that cannot be parsed is a problem, not an exception."""
    try:
        return _rewrite(data, rel, patchsets, version, path, problems)
    except PatchopsError as exc:
        problems.append(str(exc))
        return None


def _combine_status(states: Sequence[str]) -> str:
    for wanted in (ST_DRIFTED, ST_NOT_APPLIED):
        if wanted in states:
            return wanted
    relevant = [s for s in states if s != ST_NOT_APPLICABLE]
    if not relevant:
        return ST_NOT_APPLICABLE
    if ST_APPLIED in relevant:
        return ST_APPLIED
    return ST_SATISFIED


def _status_detail(state: str, files: Sequence[FileStatus]) -> str:
    if state == ST_DRIFTED:
        return "; ".join(f.detail for f in files if f.state == ST_DRIFTED)
    if state == ST_NOT_APPLIED:
        missing = [f.path for f in files if f.state == ST_NOT_APPLIED]
        return "not applied in " + ", ".join(missing)
    if state == ST_APPLIED:
        return "applied by patchops"
    if state == ST_SATISFIED:
        return "already satisfied upstream; nothing to do"
    return "; ".join(f.detail for f in files) or "no target site in this vLLM"


# --- rollback ----------------------------------------------------------------------------------


def rollback(copies: Sequence["VllmCopy"], names: Optional[Sequence[str]] = None, *,
             force: bool = False, patchsets_dirs: Sequence[Path] = ()) -> RollbackReport:
    """Restore byte-identical originals for `names` (None: every patchset) in every copy.

    Patchsets that also changed a file and are not rolled back are re-applied to its
    original. Refuses (DriftError) when a file changed since patchops wrote it, unless
    force=True, which keeps those bytes in objects/ before restoring. One transaction.
    """
    stores: Dict[Path, Store] = {}
    ctxs = _unique_copies(copies, stores)
    existing = [ctx for ctx in ctxs if ctx.store.exists()]
    wanted = None if names is None else list(dict.fromkeys(names))
    notes: List[str] = []
    with ExitStack() as stack:
        for store in sorted({ctx.store for ctx in existing}):
            stack.enter_context(store.lock())
        for ctx in existing:
            notes += ctx.store.recover()
        changes: List[Change] = []
        planned: List[FileRollback] = []
        problems: List[str] = []
        problem_stores: set = set()
        states: Dict[Store, State] = {}
        rolled: List[str] = []
        for ctx in existing:
            state = ctx.store.read_state()
            new_state = state.copy()
            touched = False
            for rel, entry in sorted(state.files.items()):
                removed = [n for n in entry.patchsets if wanted is None or n in wanted]
                if not removed:
                    continue
                rolled += [n for n in removed if n not in rolled]
                kept = [n for n in entry.patchsets if n not in removed]
                path = ctx.path(rel)
                ctx.store.target(rel)
                data = ctx.store.read_file(rel)
                current = sha256(data) if data is not None else None
                if current == entry.original:
                    # vLLM was reinstalled: the file is the original already; forget the entry.
                    new_state.files.pop(rel)
                    touched = True
                    planned.append(FileRollback(ctx.site_dir, path, tuple(removed), (), False))
                    continue
                forced = current != entry.written
                if forced and not force:
                    problem_stores.add(str(ctx.store.objects))
                    problems.append(f"{path} changed since patchops wrote it (expected sha "
                                    f"{short(entry.written)}, current "
                                    f"{short(current) if current else 'missing'})")
                    continue
                original = ctx.store.get_object(entry.original)
                new, new_entry = _reapply(ctx, rel, original, entry, kept, patchsets_dirs)
                if new_entry is None:
                    new_state.files.pop(rel)
                else:
                    new_state.files[rel] = new_entry
                touched = True
                saved = ctx.store.object_path(current) if forced and current else None
                changes.append(Change(ctx.store, rel, data, new))
                planned.append(FileRollback(ctx.site_dir, path, tuple(removed), tuple(kept),
                                            True, forced, saved))
            if touched:
                _prune_sources(new_state)
                states[ctx.store] = new_state
        if problems:
            raise DriftError(
                "cannot roll back: " + "; ".join(problems) + ". Someone edited the file or "
                "reinstalled vLLM since; nothing was written. `patchops rollback --force` "
                "restores the original anyway and first keeps the current bytes in "
                + " and ".join(sorted(problem_stores))
                + " (after a vLLM upgrade, `patchops apply --force` is the way forward instead)")
        if not planned:
            raise PatchopsError(_nothing_to_roll_back(ctxs, wanted))
        if wanted is not None:
            absent = [n for n in wanted if n not in rolled]
            if absent:
                notes.append(f"{', '.join(repr(n) for n in absent)} not applied in any copy; "
                             f"left alone")
        result = transact("rollback", changes, states)
    return RollbackReport(tuple(planned), tuple(rolled),
                          tuple(result.removed_bytecode), result.txn, (*notes, *result.warnings))


def _reapply(ctx: _Copy, rel: str, original: bytes, entry: FileEntry, kept: Sequence[str],
             dirs: Sequence[Path]) -> Tuple[bytes, Optional[FileEntry]]:
    """Return the original with the `kept` patchsets re-applied, and its new state entry."""
    if not kept:
        return original, None
    path = ctx.path(rel)
    patchsets = []
    for name in kept:
        try:
            patchsets.append(_named_or_recorded(name, dirs, [ctx.store]))
        except PatchopsError as exc:
            raise PatchsetError(f"{path}: patchset {name!r} also changed this file and must be "
                                f"re-applied after the rollback, but it cannot be loaded ({exc}); "
                                f"pass its folder with --patchsets, or roll it back too. "
                                f"Nothing was written") from exc
    problems: List[str] = []
    rewritten = _rewrite(original, rel, patchsets, ctx.copy.version, path, problems)
    if rewritten is None:
        raise DriftError(f"cannot roll back: {problems[0]}. Nothing was written")
    bad = [r for r in rewritten.results if r.state not in (APPLIES, SATISFIED, NOT_APPLICABLE)]
    if bad:
        raise DriftError("cannot roll back: re-applying the patchsets kept on " + str(path)
                         + " failed: " + "; ".join(_where(path, r) for r in bad)
                         + ". Nothing was written")
    new = rewritten.new_source.encode("utf-8") if rewritten.changed else original
    applied = [r.patchset for r in rewritten.results if r.state == APPLIES]
    if new == original:
        return original, None
    _check_compiles(new, path, applied)
    return new, FileEntry(entry.original, sha256(new), [n for n in kept if n in applied])


def _prune_sources(state: State) -> None:
    """Forget the YAML of patchsets no file or satisfied record of `state` names any more."""
    used = {n for entry in state.files.values() for n in entry.patchsets} | set(state.satisfied)
    for name in [n for n in state.patchsets if n not in used]:
        del state.patchsets[name]


def load_patchsets(copies: Sequence["VllmCopy"], names: Sequence[str],
                   dirs: Sequence[Path] = ()) -> List["Patchset"]:
    """Load patchsets by name, falling back to the YAML a copy's store kept when it was applied.

    So `patchops status` after `apply --patchsets DIR` needs no `--patchsets` (issue 6).
    """
    stores = [ctx.store for ctx in _unique_copies(copies)]
    return [_named_or_recorded(name, dirs, stores) for name in names]


def _named_or_recorded(name: str, dirs: Sequence[Path], stores: Sequence[Store]) -> "Patchset":
    from patchops.patchset import UnknownPatchset, get_patchset, load_patchset_text

    try:
        return get_patchset(name, dirs=tuple(dirs))
    except UnknownPatchset:
        for store in stores:
            source = store.read_state().patchsets.get(name) if store.exists() else None
            if source is not None:
                text = store.get_object(source.sha).decode("utf-8")
                return load_patchset_text(text, Path(source.path))
        raise


def _nothing_to_roll_back(ctxs: Sequence[_Copy], wanted: Optional[Sequence[str]]) -> str:
    sites = ", ".join(str(ctx.site_dir) for ctx in ctxs) or "no vLLM copy"
    if wanted is None:
        return f"nothing to roll back: patchops has not patched {sites}"
    names = ", ".join(repr(n) for n in wanted)
    text = f"nothing to roll back: {names} is not applied in {sites}"
    upstream = sorted({n for ctx in ctxs for n in ctx.store.read_state().satisfied if n in wanted})
    if upstream:
        text += (f" ({', '.join(repr(n) for n in upstream)} was already satisfied upstream; "
                 f"patchops never changed those files)")
    return text + "; nothing was written"


def _is_under(path: Path, parent: Path) -> bool:
    try:
        path.relative_to(parent)
        return True
    except ValueError:
        return False
