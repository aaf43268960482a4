"""Roll back: restore byte-identical originals, re-applying the patchsets kept on the same files."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

from patchops.core.errors import DriftError, PatchopsError, PatchsetError
from patchops.patching import file_rewrites as rewriting
from patchops.patching.recorded_patchsets import named_or_recorded
from patchops.patchset.model import did_you_mean, patchset_files
from patchops.patchset.states import PatchState
from patchops.patching.targets import Target, unique_targets
from patchops.core.records import record
from patchops.store.recovery import recover
from patchops.store.site_store import Store, sha256, short
from patchops.store.state import FileEntry, State
from patchops.store.transaction import Change, transact

if TYPE_CHECKING:
    from patchops.host.locate import VllmCopy


@record(frozen=True)
class FileRollback:
    """One file a rollback restored (or found already original)."""

    site_dir: Path
    path: Path
    removed: Tuple[str, ...]         # patchsets rolled back here
    kept: Tuple[str, ...]            # patchsets re-applied on top of the original
    written: bool                    # False when the file was already original
    forced: bool = False             # restored over bytes patchops did not write
    saved: Optional[Path] = None     # objects/<sha> holding those bytes when forced


@record(frozen=True)
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


def rollback(copies: Sequence["VllmCopy"], names: Optional[Sequence[str]] = None, *,
             force: bool = False, patchsets_dirs: Sequence[Path] = ()) -> RollbackReport:
    """Restore byte-identical originals for `names` (None: every patchset) in every copy.

    Patchsets that also changed a file and are not rolled back are re-applied to its
    original. Refuses (DriftError) when a file changed since patchops wrote it, unless
    force=True, which keeps those bytes in objects/ before restoring. One transaction.
    """
    stores: Dict[Path, Store] = {}
    ctxs = unique_targets(copies, stores)
    existing = [ctx for ctx in ctxs if ctx.store.exists()]
    wanted = None if names is None else list(dict.fromkeys(names))
    notes: List[str] = []
    with ExitStack() as stack:
        for store in sorted({ctx.store for ctx in existing}):
            stack.enter_context(store.lock())
        for ctx in existing:
            notes += recover(ctx.store)
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


def _reapply(ctx: Target, rel: str, original: bytes, entry: FileEntry, kept: Sequence[str],
             dirs: Sequence[Path]) -> Tuple[bytes, Optional[FileEntry]]:
    """Return the original with the `kept` patchsets re-applied, and its new state entry."""
    if not kept:
        return original, None
    path = ctx.path(rel)
    patchsets = []
    for name in kept:
        try:
            patchsets.append(named_or_recorded(name, dirs, [ctx.store]))
        except PatchopsError as exc:
            raise PatchsetError(f"{path}: patchset {name!r} also changed this file and must be "
                                f"re-applied after the rollback, but it cannot be loaded ({exc}); "
                                f"pass its folder with --patchsets, or roll it back too. "
                                f"Nothing was written") from exc
    problems: List[str] = []
    rewritten = rewriting.rewrite(original, rel, patchsets, ctx.copy.version, path, problems)
    if rewritten is None:
        raise DriftError(f"cannot roll back: {problems[0]}. Nothing was written")
    bad = [r for r in rewritten.results if r.state not in (PatchState.APPLIES, PatchState.SATISFIED, PatchState.NOT_APPLICABLE)]
    if bad:
        raise DriftError("cannot roll back: re-applying the patchsets kept on " + str(path)
                         + " failed: " + "; ".join(rewriting.where(path, r) for r in bad)
                         + ". Nothing was written")
    new = rewritten.new_source.encode("utf-8") if rewritten.changed else original
    applied = [r.patchset for r in rewritten.results if r.state == PatchState.APPLIES]
    if new == original:
        return original, None
    rewriting.check_compiles(new, path, applied)
    return new, FileEntry(entry.original, sha256(new), [n for n in kept if n in applied])


def _prune_sources(state: State) -> None:
    """Forget the YAML of patchsets no file or satisfied record of `state` names any more."""
    used = {n for entry in state.files.values() for n in entry.patchsets} | set(state.satisfied)
    for name in [n for n in state.patchsets if n not in used]:
        del state.patchsets[name]


def _nothing_to_roll_back(ctxs: Sequence[Target], wanted: Optional[Sequence[str]]) -> str:
    sites = ", ".join(str(ctx.site_dir) for ctx in ctxs) or "no vLLM copy"
    if wanted is None:
        return f"nothing to roll back: patchops has not patched {sites}"
    names = ", ".join(repr(n) for n in wanted)
    # A typo is likelier than a no-op: name the closest applied (or known) patchset.
    known = {n for ctx in ctxs for n in ctx.store.read_state().patchsets} or set(patchset_files())
    text = f"nothing to roll back: {names} is not applied in {sites}{did_you_mean(wanted[0], known)}"
    upstream = sorted({n for ctx in ctxs for n in ctx.store.read_state().satisfied if n in wanted})
    if upstream:
        text += (f" ({', '.join(repr(n) for n in upstream)} was already satisfied upstream; "
                 f"patchops never changed those files)")
    return text + "; nothing was written"
