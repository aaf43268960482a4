"""What one Ray task does on one node: the same patchops.api call a user would run there.

Every function here runs on the node it reports on, against that node's own copies, found
the way `patchops locate` finds them there (the worker's interpreter and environment:
PYTHONPATH, PATCHOPS_ROOTS, the vendor roots). Results are small frozen dataclasses of
strings, so the driver needs nothing from the node but patchops itself. A PatchopsError
comes back as a NodeFailure rather than an exception, so the driver can tell "the node
refused" from "the node died".
"""

from __future__ import annotations

import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple, TypeVar, Union

from patchops import api
from patchops.core import records
from patchops.core.errors import LockedError, PatchopsError
from patchops.store.site_store import Store, sha256

T = TypeVar("T")

# How patching.rollback starts the message for copies it never patched.
NOTHING_TO_ROLL_BACK = "nothing to roll back"
CLAIM_WAIT = 10.0   # seconds a node waits for another holding a shared copy's lock


@dataclass(frozen=True)
class Where:
    """How a node finds its copies (the options `patchops status` takes, read there) and the
    patchsets it applies: the driver's files, sent along, so every node applies the same ones."""

    python: Optional[str] = None
    roots: Tuple[str, ...] = ()
    sites: Tuple[str, ...] = ()
    patchsets: Tuple[Tuple[str, str], ...] = ()    # (file name, YAML text)

    def kwargs(self) -> dict:
        return dict(python=self.python, roots=[Path(r) for r in self.roots],
                    sites=[Path(s) for s in self.sites])

    @contextmanager
    def patchset_dirs(self) -> Iterator[List[Path]]:
        """Write the driver's patchsets into a temporary folder for the call to look up first."""
        if not self.patchsets:
            yield []
            return
        with tempfile.TemporaryDirectory(prefix="patchops-fleet-patchsets-") as folder:
            for name, text in self.patchsets:
                Path(folder, name).write_text(text, encoding="utf-8")
            yield [Path(folder)]


def driver_patchsets(dirs: Sequence[Path] = ()) -> Tuple[Tuple[str, str], ...]:
    """Return every patchset file this machine sees (`dirs`, $PATCHOPS_PATCHSETS, shipped)."""
    from patchops.patchset.model import patchset_files

    return tuple((path.name, path.read_text(encoding="utf-8"))
                 for path in patchset_files(dirs).values())


@dataclass(frozen=True)
class NodeFailure:
    """A node's patchops refused (its message), or the node could not run the call."""

    message: str
    died: bool = False          # the node or its worker went away: its result is unknown


@dataclass(frozen=True)
class CopyFacts:
    """One copy on a node: its version and the sha256 of each file a patchset targets."""

    site_dir: str
    version: Optional[str]
    files: Tuple[Tuple[str, Optional[str]], ...]   # (path under the site dir, sha or None)
    store_id: Optional[str] = None                 # the same on every node that sees this copy


@dataclass(frozen=True)
class PatchState:
    """One patchset on one copy of a node (a status row or a plan outcome)."""

    site_dir: str
    version: Optional[str]
    patchset: str
    state: str
    detail: str


@dataclass(frozen=True)
class NodeStatus:
    copies: Tuple[CopyFacts, ...]
    states: Tuple[PatchState, ...]


@dataclass(frozen=True)
class NodePlan:
    """What applying would do on a node; `changes` is what the commit must find again."""

    outcomes: Tuple[PatchState, ...]
    changes: Tuple[Tuple[str, str, str], ...]      # (file, sha now, sha after)
    problems: Tuple[str, ...]
    notes: Tuple[str, ...]
    writes: Tuple[str, ...] = ()                   # site dirs the commit writes (files or state)
    store_ids: Tuple[Tuple[str, Optional[str]], ...] = ()   # (site dir, id once patchops wrote there)


@dataclass(frozen=True)
class NodeCommit:
    """What a node's commit wrote; `applied` is what undoing it must roll back, per copy."""

    written: Tuple[str, ...]
    backups: Tuple[str, ...]
    applied: Tuple[Tuple[str, Tuple[str, ...]], ...]   # (site dir, patchsets applied now)
    txn: Optional[str]


@dataclass(frozen=True)
class NodeRollback:
    restored: Tuple[str, ...]
    notes: Tuple[str, ...]


@dataclass(frozen=True)
class NodeLint:
    vllm_version: str
    facts_origin: str
    diagnostics: Tuple[Tuple[int, int, str, str, str, str], ...]  # line, col, severity, code, name, message


@dataclass(frozen=True)
class CopyCheck:
    """One copy of a node checked against its RECORD (`patchops verify`)."""

    site_dir: str
    version: Optional[str]
    listed: int
    findings: Tuple[Tuple[str, str, str], ...]   # (path, state, detail) of files unlike RECORD
    error: Optional[str]

    @property
    def differs(self) -> bool:
        return any(state != "patched" for _, state, _ in self.findings)


Result = Union[T, NodeFailure]


def refusing(function: Callable[..., T]) -> Callable[..., Result]:
    """Return `function` with a PatchopsError turned into a NodeFailure carrying its message."""

    def run(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except PatchopsError as error:
            return NodeFailure(error.message)

    run.__name__ = run.__qualname__ = function.__name__
    run.__doc__ = function.__doc__
    return run


@refusing
def status(names: Sequence[str], where: Where) -> NodeStatus:
    """Return every copy's patchset states and target-file hashes on this node."""
    from patchops.patchset.model import find_patchsets

    with where.patchset_dirs() as dirs:
        wanted = list(names) or sorted(find_patchsets(dirs))
        rows = api.status(wanted, patchset_dirs=dirs, **where.kwargs())
    files: Dict[str, Dict[str, None]] = {}
    versions: Dict[str, Optional[str]] = {}
    for row in rows:
        versions[str(row.site_dir)] = row.version
        files.setdefault(str(row.site_dir), {}).update(dict.fromkeys(row.files))
    copies = tuple(CopyFacts(site, versions[site],
                             tuple((name, _sha(Path(site, name))) for name in sorted(names_)),
                             Store(site).identity())
                   for site, names_ in files.items())
    return NodeStatus(copies, tuple(_state(row) for row in rows))


@refusing
def plan(names: Sequence[str], where: Where, force: bool) -> NodePlan:
    """Plan the apply on this node and write nothing; drift comes back as `problems`."""
    with where.patchset_dirs() as dirs:
        found = api.plan_apply(names, patchset_dirs=dirs, force=force, check=False,
                               **where.kwargs())
    writes = {str(f.site_dir) for f in found.files if f.changed or f.entry_after != f.entry_before}
    writes |= {str(c.site_dir) for c in found.copies
               if Store(c.site_dir).site_dir in {site for site, _, _ in found.satisfied}}
    return NodePlan(tuple(_state(o) for o in found.outcomes), _changes(found),
                    tuple(found.problems), tuple(found.notes), tuple(sorted(writes)),
                    tuple((str(c.site_dir), Store(c.site_dir).identity()) for c in found.copies))


@refusing
def claim(sites: Sequence[str]) -> Tuple[Tuple[str, str], ...]:
    """Return (site dir, store id) of each copy, writing an id where it has none.

    Several nodes claim a shared copy at once; the one holding its lock writes the id, the
    others wait for it (a few seconds at most) and read it.
    """
    claimed = []
    for site in sites:
        deadline = time.monotonic() + CLAIM_WAIT
        while True:
            try:
                claimed.append((site, Store(site).claim_identity()))
                break
            except LockedError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
    return tuple(claimed)


@refusing
def commit(names: Sequence[str], where: Where, force: bool,
           expected: Tuple[Tuple[str, str, str], ...], only: Sequence[str]) -> NodeCommit:
    """Plan again for the copies in `only` (another node commits the copies it shares with
    this one) and write it, if their files are still what the first plan saw."""
    targets = api.find_targets(**where.kwargs())
    targets = records.replace(targets, copies=tuple(c for c in targets.copies
                                                    if str(c.site_dir) in only))
    with where.patchset_dirs() as dirs:
        found = api.plan_apply(names, patchset_dirs=dirs, force=force, targets=targets)
        if _changes(found) != expected:
            raise PatchopsError("its files changed between the fleet's plan and its commit "
                                "(another patchops ran there?); nothing was written on it")
        report = api.commit_apply(found)
    applied: Dict[str, list] = {}
    for outcome in report.outcomes:
        if outcome.state == "applies":
            applied.setdefault(str(outcome.site_dir), []).append(outcome.patchset)
    return NodeCommit(tuple(map(str, report.written)), tuple(map(str, report.backups)),
                      tuple((site, tuple(done)) for site, done in applied.items()), report.txn)


@refusing
def undo(done: NodeCommit, where: Where) -> NodeRollback:
    """Roll back, copy by copy, the patchsets a fleet commit applied here."""
    restored, notes = [], []
    with where.patchset_dirs() as dirs:
        for site, names in done.applied:
            report = api.rollback(list(names), sites=[Path(site)], patchset_dirs=dirs)
            restored += [str(path) for path in report.restored]
            notes += report.notes
    return NodeRollback(tuple(restored), tuple(notes))


@refusing
def copies(where: Where) -> Tuple[Tuple[str, Optional[str]], ...]:
    """Return (site dir, store id or None) of each copy on this node; writes nothing."""
    return tuple((str(c.site_dir), Store(c.site_dir).identity())
                 for c in api.target_copies(**where.kwargs()))


@refusing
def rollback(names: Optional[Sequence[str]], where: Where, force: bool,
             others: Sequence[str] = ()) -> NodeRollback:
    """Roll back `names` (None: all) on this node's copies but `others` (site dirs another
    node that sees them rolls back); nothing to roll back is no failure."""
    kwargs = where.kwargs()
    if others:
        kwargs["sites"] = [c.site_dir for c in api.target_copies(**kwargs)
                           if str(c.site_dir) not in others]
        if not kwargs["sites"]:
            return NodeRollback((), ("every copy here is rolled back by another node that sees it",))
    try:
        with where.patchset_dirs() as dirs:
            report = api.rollback(None if names is None else list(names), force=force,
                                  patchset_dirs=dirs, **kwargs)
    except PatchopsError as error:
        if error.message.startswith(NOTHING_TO_ROLL_BACK):  # a node that joined later
            return NodeRollback((), (error.message,))
        raise
    return NodeRollback(tuple(str(path) for path in report.restored), tuple(report.notes))


@refusing
def verify(where: Where) -> Tuple[CopyCheck, ...]:
    """Check every file of this node's copies against the hashes pip recorded (RECORD)."""
    return tuple(CopyCheck(str(r.site_dir), r.version, r.listed,
                           tuple((f.path, f.state, f.detail) for f in r.findings), r.error)
                 for r in api.verify(**where.kwargs()))


@refusing
def lint(name: str, text: str, where: Where, select: Sequence[str], ignore: Sequence[str]) -> NodeLint:
    """Lint the driver's config (sent as text) against the copy vLLM would import here."""
    copies = api.target_copies(**where.kwargs())
    copy = next((c for c in copies if c.wins), copies[0])
    with tempfile.TemporaryDirectory(prefix="patchops-fleet-") as folder:
        path = Path(folder, Path(name).name)
        path.write_text(text, encoding="utf-8")
        result = api.lint(path, vllm_path=copy.site_dir, select=select, ignore=ignore)
    return NodeLint(result.vllm_version, result.facts_origin,
                    tuple((d.line, d.column, d.severity, d.code, d.name, d.message)
                          for d in result.diagnostics))


def _state(row) -> PatchState:
    return PatchState(str(row.site_dir), row.version, row.patchset, row.state, row.detail)


def _changes(found) -> Tuple[Tuple[str, str, str], ...]:
    return tuple((str(f.path), sha256(f.old), sha256(f.new)) for f in found.changes)


def _sha(path: Path) -> Optional[str]:
    try:
        return sha256(path.read_bytes())
    except OSError:
        return None
