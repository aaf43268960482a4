"""The library API for the copies: locate, patchsets, apply, status, rollback, verify, diff, capture.

Reached through `patchops.api` (its names load this module on first use), so `status` and
`apply` never load lint's modules and start near the typer+rich import floor. Plain functions returning plain records
(patchops.core.records); nothing here prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from patchops.core.records import record

if TYPE_CHECKING:
    from patchops.host.locate import VllmCopy
    from patchops.patching.status_check import StatusRow

def locate(*, python: Optional[str] = None, roots: Sequence[Path] = ()):
    """Return every vLLM copy `python` could import plus vendor-root copies (a Location)."""
    from patchops.host import locate as locating

    return locating.locate(python=python, roots=roots)


def patchsets(patchset_dirs: Sequence[Path] = ()):
    """Return every known patchset (shipped, $PATCHOPS_PATCHSETS, `patchset_dirs`), by name."""
    from patchops.patchset.model import find_patchsets

    return sorted(find_patchsets(patchset_dirs).values(), key=lambda p: p.name)


def patchset(name: str, patchset_dirs: Sequence[Path] = ()):
    """Return the patchset called `name` (or at path `name`)."""
    from patchops.patchset.model import get_patchset

    return get_patchset(name, patchset_dirs)


@record(frozen=True)
class Targets:
    """The copies a patch command works on, and which copy `import vllm` loads."""

    python: str
    copies: Tuple["VllmCopy", ...]
    winner: Optional["VllmCopy"]   # None when no copy is on the interpreter's import path
    explicit: bool = False         # chosen with --site rather than located

    def notes(self) -> List[str]:
        """Say when a copy named with --site is not the one `import vllm` loads."""
        if not self.explicit:
            return []
        loads = (f"`import vllm` in {self.python} loads {self.winner.package_dir}"
                 if self.winner else f"{self.python} imports no vLLM copy")
        return [f"{copy.site_dir} is {'shadowed' if copy.importable else 'not on the import path'}"
                f": {loads}; patching it changes nothing when vLLM runs with that interpreter "
                "(pass --python for another one)"
                for copy in self.copies if not copy.wins]


def find_targets(*, python: Optional[str] = None, roots: Sequence[Path] = (),
            sites: Sequence[Path] = ()) -> Targets:
    """Return the copies to work on: `sites` if given, else every located copy, flagged with
    whether `import vllm` loads them."""
    import os

    from patchops.host import locate as locating
    from patchops.core import records
    from patchops.core.errors import LocateError

    location = locating.locate(python=python, roots=roots)
    if sites:
        located = {os.path.realpath(c.package_dir): c for c in location.copies}
        chosen = []
        for site in sites:
            copy = locating.locate_site(site)
            known = located.get(os.path.realpath(copy.package_dir))
            chosen.append(records.replace(copy, wins=known.wins if known else False,
                                              importable=known.importable if known else False))
        return Targets(location.python, tuple(chosen), location.winner, explicit=True)
    if not location.copies:
        own = " (patchops's own interpreter)" if python is None else ""
        raise LocateError(f"no vLLM copy found on the import path of {location.python}{own} or "
                          "under the vendor roots; pass --python with the interpreter that runs "
                          "vLLM, point PYTHONPATH at its site-packages, or pass --root DIR or "
                          "--site DIR")
    return Targets(location.python, location.copies, location.winner)


def target_copies(*, python: Optional[str] = None, roots: Sequence[Path] = (),
                  sites: Sequence[Path] = ()):
    """Return the copies a patch command works on: `sites` if given, else every located copy."""
    return list(find_targets(python=python, roots=roots, sites=sites).copies)


def plan_apply(names: Sequence[str], *, python: Optional[str] = None, roots: Sequence[Path] = (),
               sites: Sequence[Path] = (), patchset_dirs: Sequence[Path] = (), force: bool = False,
               check: bool = True, targets: Optional[Targets] = None):
    """Compute, in memory, what applying patchsets `names` to every copy changes (an ApplyPlan).

    With check=False a plan with drift is returned (its `problems` say where) instead of
    raising DriftError, so --dry-run can show both the diff and the problems. `targets`
    (from find_targets()) saves locating again.
    """
    from patchops import patching
    from patchops.patchset import index as patchset_index

    wanted = [patchset_index.get(name, patchset_dirs) for name in dict.fromkeys(names)]
    copies = (targets or find_targets(python=python, roots=roots, sites=sites)).copies
    return patching.plan_apply(copies, wanted, force=force, check=check)


def diff(plan) -> str:
    """Return a plan's changes as a unified diff."""
    from patchops import patching

    return patching.unified_diff(plan)


def mismatches(plan):
    """Return, for a plan with drift, where each drifted op comes closest (Mismatch list)."""
    from patchops.patching import mismatch

    return mismatch.mismatches(plan)


def commit_apply(plan):
    """Write a plan to every copy as one transaction, backing up originals (an ApplyReport)."""
    from patchops import patching

    return patching.commit_apply(plan)


@record(frozen=True)
class StatusReport:
    """Status rows per copy and patchset, the copies they describe, and what was skipped."""

    targets: Targets
    rows: Tuple["StatusRow", ...]
    notes: Tuple[str, ...] = ()   # patchset files that could not be loaded, skipped


def status_report(names: Optional[Sequence[str]] = None, *, python: Optional[str] = None,
                  roots: Sequence[Path] = (), sites: Sequence[Path] = (),
                  patchset_dirs: Sequence[Path] = ()) -> StatusReport:
    """Return a StatusRow per copy and patchset, with the copies and which one `import vllm` loads.

    Without names: the patchsets patchops recorded in the copies' stores, answered from
    hashes alone; if none is recorded anywhere, every known patchset (a patchset file that
    cannot be loaded is then a note, not an error: one broken file in PATCHOPS_PATCHSETS
    must not hide the status of the rest).
    """
    from patchops import patching
    from patchops.patchset import index as patchset_index
    from patchops.core.errors import PatchopsError
    from patchops.patchset.model import patchset_files

    chosen = find_targets(python=python, roots=roots, sites=sites)
    notes: List[str] = []
    recorded = [] if names else _recorded_patchsets(chosen.copies)
    if names or recorded:   # a recorded patchset may be known only from the YAML its store kept
        wanted = patching.load_patchsets(chosen.copies, names or recorded, patchset_dirs)
    else:
        wanted = []
        for path in patchset_files(patchset_dirs).values():
            try:
                wanted.append(patchset_index.load(path))
            except PatchopsError as error:
                notes.append(f"skipped: {error.message}")
    rows = patching.status(chosen.copies, wanted)
    return StatusReport(chosen, tuple(rows), (*notes, *rows.notes))


def status(names: Optional[Sequence[str]] = None, *, python: Optional[str] = None,
           roots: Sequence[Path] = (), sites: Sequence[Path] = (),
           patchset_dirs: Sequence[Path] = ()):
    """Return a StatusRow per copy and patchset (status_report() also says which copy wins)."""
    return list(status_report(names, python=python, roots=roots, sites=sites,
                              patchset_dirs=patchset_dirs).rows)


def _recorded_patchsets(copies) -> List[str]:
    from patchops.store.site_store import Store

    names: List[str] = []
    for copy in copies:
        store = Store(copy.site_dir)
        if store.exists():
            state = store.read_state()
            for entry in state.files.values():
                names.extend(entry.patchsets)
            names.extend(state.satisfied)
    return list(dict.fromkeys(names))


def any_drift(rows) -> bool:
    """Return whether any status row is drifted."""
    from patchops import patching

    return patching.any_drift(rows)


def rollback(names: Optional[Sequence[str]] = None, *, force: bool = False,
             python: Optional[str] = None, roots: Sequence[Path] = (), sites: Sequence[Path] = (),
             patchset_dirs: Sequence[Path] = ()):
    """Restore originals for `names` (None: all) in every copy, keeping other patchsets.

    `--all` with nothing applied anywhere returns an empty report, as a repeated apply does;
    naming a patchset that is applied nowhere is still an error (a typo must not pass).
    """
    from patchops import patching
    from patchops.core.errors import PatchopsError

    copies = target_copies(python=python, roots=roots, sites=sites)
    try:
        return patching.rollback(copies, names, force=force, patchsets_dirs=patchset_dirs)
    except PatchopsError as error:
        # Raised after recovery, so an interrupted transaction was already repaired.
        if names is None and error.message.startswith("nothing to roll back"):
            return patching.RollbackReport((), (), (), None, (error.message,))
        raise


# ---------------------------------------------------------------- verify, diff, export, capture

def verify(*, python: Optional[str] = None, roots: Sequence[Path] = (), sites: Sequence[Path] = ()):
    """Check every file of every copy against its RECORD (a CopyVerification per copy)."""
    from patchops.patching import verify as verifying

    return verifying.verify(target_copies(python=python, roots=roots, sites=sites))


def any_difference(results) -> bool:
    """Return whether any copy differs from its RECORD in a way patchops did not write."""
    return any(result.differs for result in results)


def capture(name: str, files: Sequence[Path], *, base: Optional[Path] = None, from_wheel: bool = False,
            out_dir: Path = Path("patchsets"), versions: Optional[str] = None, force: bool = False,
            record: bool = True):
    """Write patchsets/NAME.yaml reproducing hand edits of `files` (a CaptureResult)."""
    from patchops.patching import capture as capturing

    return capturing.capture(name, files, base=base, from_wheel=from_wheel, out_dir=out_dir,
                             versions=versions, force=force, record=record)


def file_diffs(target: Optional[str] = None, *, python: Optional[str] = None,
               roots: Sequence[Path] = (), sites: Sequence[Path] = ()):
    """Return recorded files (of patchset or file `target`) diffed against their stored originals."""
    from patchops.patching import diff as diffs

    return diffs.diff(target_copies(python=python, roots=roots, sites=sites), target)


def export(name: str, *, python: Optional[str] = None, roots: Sequence[Path] = (),
           sites: Sequence[Path] = (), patchset_dirs: Sequence[Path] = ()) -> str:
    """Return what patchset `name` does to the copies' pristine files, as a `patch -p1` patch."""
    from patchops.patching import diff as diffs
    from patchops.patchset.model import get_patchset

    patchset = get_patchset(name, patchset_dirs)
    return diffs.export(target_copies(python=python, roots=roots, sites=sites), patchset)


def write_text(path: Path, text: str) -> None:
    """Write an output file (a patch) atomically."""
    from patchops.store.site_files import atomic_write

    atomic_write(path, text.encode("utf-8"))
