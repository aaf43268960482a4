"""The library API the CLI calls: plain functions returning plain dataclasses.

Other programs (CI gates, launch scripts) call these directly; nothing here prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional, Sequence

if TYPE_CHECKING:  # lint.rule pulls in packaging; locate/status/apply have no use for it
    from patchops.hardware import Hardware
    from patchops.lint.rule import Diagnostic


# ---------------------------------------------------------------- lint

@dataclass(frozen=True)
class LintResult:
    """One input's findings and the vLLM facts they were judged against."""

    path: str
    vllm_version: str
    facts_origin: str
    diagnostics: List["Diagnostic"]
    hardware: Optional[str] = None   # the assumed hardware and its source, when not stated

    @property
    def errors(self) -> int:
        return sum(d.severity == "error" for d in self.diagnostics)

    @property
    def warnings(self) -> int:
        return sum(d.severity == "warning" for d in self.diagnostics)


def lint(path: Optional[Path] = None, *, command: Optional[str] = None,
         vllm_path: Optional[Path] = None, vllm_version: Optional[str] = None,
         select: Sequence[str] = (), ignore: Sequence[str] = (),
         hardware: Optional["Hardware"] = None) -> LintResult:
    """Lint one serve spec, vLLM config or launch script (`path`) or a launch `command`.

    `hardware` (from `--hardware` or `hardware.detect()`) fills the `hardware:` fields the
    input leaves unstated; what the input states wins.
    """
    from patchops.lint.runner import lint_config
    from patchops.lint.select import facts_for_config

    cfg, assumed = _load_input(path, command, hardware)
    facts = facts_for_config(cfg, vllm_path=vllm_path, vllm_version=vllm_version)
    return LintResult(path=cfg.path, vllm_version=facts.version, facts_origin=facts.origin,
                      diagnostics=lint_config(cfg, facts, select=select, ignore=ignore),
                      hardware=assumed)


@dataclass(frozen=True)
class ExplainResult:
    """The effective engine settings of one input (lint.explain.Row each) and what judged them."""

    path: str
    vllm_version: str
    facts_origin: str
    rows: list
    hardware: Optional[str] = None


def explain(path: Optional[Path] = None, *, command: Optional[str] = None,
            vllm_path: Optional[Path] = None, vllm_version: Optional[str] = None,
            hardware: Optional["Hardware"] = None) -> ExplainResult:
    """Return the settings vLLM will run `path` or `command` with, each with its origin."""
    from patchops.lint.explain import explain as effective
    from patchops.lint.select import facts_for_config

    cfg, assumed = _load_input(path, command, hardware)
    facts = facts_for_config(cfg, vllm_path=vllm_path, vllm_version=vllm_version)
    return ExplainResult(path=cfg.path, vllm_version=facts.version, facts_origin=facts.origin,
                         rows=effective(cfg, facts), hardware=assumed)


def _load_input(path, command, hardware):
    """Read one input and fill the hardware it leaves unstated; return (cfg, what was assumed)."""
    from patchops.lint.loaders import load_command, load_file

    if (path is None) == (command is None):
        raise ValueError("pass exactly one of path or command")
    cfg = load_command(command) if command is not None else load_file(Path(path))
    return cfg, (_assume_hardware(cfg, hardware) if hardware is not None else None)


def _assume_hardware(cfg, hardware: "Hardware") -> Optional[str]:
    """Add the hardware fields `cfg` does not state; say what was assumed, or None if nothing."""
    from patchops.lint.config import Setting

    added = [key for key in hardware.context() if key not in cfg.context]
    for key in added:
        cfg.context[key] = Setting(key=key, name=key, value=hardware.context()[key], line=0,
                                   column=0, source=hardware.source)
    return hardware.describe() if added else None


def plan_launch(path: Optional[Path] = None, *, command: Optional[str] = None,
                python: Optional[str] = None, extra: Sequence[str] = (),
                select: Sequence[str] = (), ignore: Sequence[str] = (),
                hardware: Optional["Hardware"] = None):
    """Lint a config against the copy that will run it; return (LintResult, Launch).

    The interpreter is `python`, else the spec's `vllm.python`, else this one. With `extra`
    arguments the assembled command line is linted, since those arguments override the file.
    """
    from patchops import launching
    from patchops.lint.loaders import load_command, load_file

    if (path is None) == (command is None):
        raise ValueError("pass exactly one of path or command")
    cfg = load_command(command) if command is not None else load_file(Path(path))
    stated = cfg.context.get("vllm.python")
    python, copy = launching.winning_copy(python or (str(stated.value) if stated else None))
    launch = launching.build_launch(cfg, python, copy.site_dir, extra)
    checked = dict(command=launch.as_written()) if extra else dict(path=path, command=command)
    result = lint(**checked, vllm_path=copy.site_dir, select=select, ignore=ignore,
                  hardware=hardware)
    return result, launch


def rules(code: Optional[str] = None):
    """Return every rule class, or the one whose code or name is `code`."""
    from patchops.errors import UsageError
    from patchops.lint.rules import ALL_RULES

    if code is None:
        return list(ALL_RULES)
    wanted = code.upper() if code[:2].upper() == "PO" else code
    match = [rule for rule in ALL_RULES if wanted in (rule.code, rule.name)]
    if not match:
        raise UsageError(f"no rule {code!r}; `patchops rules` lists them all")
    return match


# ---------------------------------------------------------------- locate and patch

def locate(*, python: Optional[str] = None, roots: Sequence[Path] = ()):
    """Return every vLLM copy `python` could import plus vendor-root copies (a Location)."""
    from patchops import locate as locating

    return locating.locate(python=python, roots=roots)


def patchsets(patchset_dirs: Sequence[Path] = ()):
    """Return every known patchset (shipped, $PATCHOPS_PATCHSETS, `patchset_dirs`), by name."""
    from patchops.patchset import find_patchsets

    return sorted(find_patchsets(patchset_dirs).values(), key=lambda p: p.name)


def target_copies(*, python: Optional[str] = None, roots: Sequence[Path] = (),
                  sites: Sequence[Path] = ()):
    """Return the copies a patch command works on: `sites` if given, else every located copy."""
    from patchops import locate as locating
    from patchops.errors import LocateError

    if sites:
        return [locating.locate_site(site) for site in sites]
    location = locating.locate(python=python, roots=roots)
    if not location.copies:
        raise LocateError(f"no vLLM copy found on the import path of {location.python} or under "
                          "the vendor roots; point PYTHONPATH at it, or pass --root DIR or --site DIR")
    return list(location.copies)


def plan_apply(names: Sequence[str], *, python: Optional[str] = None, roots: Sequence[Path] = (),
               sites: Sequence[Path] = (), patchset_dirs: Sequence[Path] = (), force: bool = False,
               check: bool = True):
    """Compute, in memory, what applying patchsets `names` to every copy changes (an ApplyPlan).

    With check=False a plan with drift is returned (its `problems` say where) instead of
    raising DriftError, so --dry-run can show both the diff and the problems.
    """
    from patchops import patching
    from patchops.patchset import get_patchset

    wanted = [get_patchset(name, patchset_dirs) for name in dict.fromkeys(names)]
    copies = target_copies(python=python, roots=roots, sites=sites)
    return patching.plan_apply(copies, wanted, force=force, check=check)


def diff(plan) -> str:
    """Return a plan's changes as a unified diff."""
    from patchops import patching

    return patching.unified_diff(plan)


def mismatches(plan):
    """Return, for a plan with drift, where each drifted op comes closest (Mismatch list)."""
    from patchops import mismatch

    return mismatch.mismatches(plan)


def commit_apply(plan):
    """Write a plan to every copy as one transaction, backing up originals (an ApplyReport)."""
    from patchops import patching

    return patching.commit_apply(plan)


def status(names: Optional[Sequence[str]] = None, *, python: Optional[str] = None,
           roots: Sequence[Path] = (), sites: Sequence[Path] = (),
           patchset_dirs: Sequence[Path] = ()):
    """Return a StatusRow per copy and patchset.

    Without names: the patchsets patchops recorded in the copies' stores, answered from
    hashes alone; if none is recorded anywhere, every known patchset.
    """
    from patchops import patching
    from patchops.patchset import find_patchsets, get_patchset

    copies = target_copies(python=python, roots=roots, sites=sites)
    if not names:
        names = _recorded_patchsets(copies) or list(find_patchsets(patchset_dirs))
    return patching.status(copies, [get_patchset(name, patchset_dirs) for name in names])


def _recorded_patchsets(copies) -> List[str]:
    from patchops.store import Store

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
    """Restore originals for `names` (None: all) in every copy, keeping other patchsets."""
    from patchops import patching

    copies = target_copies(python=python, roots=roots, sites=sites)
    return patching.rollback(copies, names, force=force, patchsets_dirs=patchset_dirs)


# ---------------------------------------------------------------- verify, diff, export, capture

def verify(*, python: Optional[str] = None, roots: Sequence[Path] = (), sites: Sequence[Path] = ()):
    """Check every file of every copy against its RECORD (a CopyVerification per copy)."""
    from patchops import verify as verifying

    return verifying.verify(target_copies(python=python, roots=roots, sites=sites))


def any_difference(results) -> bool:
    """Return whether any copy differs from its RECORD in a way patchops did not write."""
    return any(result.differs for result in results)


def capture(name: str, files: Sequence[Path], *, base: Optional[Path] = None, from_wheel: bool = False,
            out_dir: Path = Path("patchsets"), versions: Optional[str] = None, force: bool = False,
            record: bool = True):
    """Write patchsets/NAME.yaml reproducing hand edits of `files` (a CaptureResult)."""
    from patchops import capture as capturing

    return capturing.capture(name, files, base=base, from_wheel=from_wheel, out_dir=out_dir,
                             versions=versions, force=force, record=record)


def file_diffs(target: Optional[str] = None, *, python: Optional[str] = None,
               roots: Sequence[Path] = (), sites: Sequence[Path] = ()):
    """Return recorded files (of patchset or file `target`) diffed against their stored originals."""
    from patchops import diffs

    return diffs.diff(target_copies(python=python, roots=roots, sites=sites), target)


def export(name: str, *, python: Optional[str] = None, roots: Sequence[Path] = (),
           sites: Sequence[Path] = (), patchset_dirs: Sequence[Path] = ()) -> str:
    """Return what patchset `name` does to the copies' pristine files, as a `patch -p1` patch."""
    from patchops import diffs
    from patchops.patchset import get_patchset

    patchset = get_patchset(name, patchset_dirs)
    return diffs.export(target_copies(python=python, roots=roots, sites=sites), patchset)


def write_text(path: Path, text: str) -> None:
    """Write an output file (a patch) atomically."""
    from patchops.store import atomic_write

    atomic_write(path, text.encode("utf-8"))
