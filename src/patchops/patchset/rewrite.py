"""Run patchsets over one file's source: the new source, and each patchset's state there.

Nothing here touches the disk; the transaction engine reads the file, calls
rewrite_source(), and writes new_source only if every patchset it applies is "applies" or
"satisfied" across all its files.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from patchops.core.errors import PatchsetError
from patchops.patchset.states import PatchState

if TYPE_CHECKING:  # the ops load with the first rewrite: plan and status import only the states
    import libcst

    from patchops.patchset.ops.base import Op, OpOutcome, Site
    from patchops.patchset.model import Patchset



@dataclass(frozen=True)
class PatchsetResult:
    """What one patchset found in one file (or, combined, in all its files)."""

    patchset: str
    state: PatchState  # APPLIES, SATISFIED, DRIFT or NOT_APPLICABLE
    sites: Tuple[Site, ...]
    message: str  # one line; for drift it names file:line and what was found


@dataclass(frozen=True)
class FileRewrite:
    """One file's source before and after the patchsets that target it."""

    rel_path: str
    source: str
    new_source: str
    results: Tuple[PatchsetResult, ...]

    @property
    def changed(self) -> bool:
        """Say whether new_source differs from source."""
        return self.new_source != self.source


def rewrite_source(source: str, rel_path: str, patchsets: Sequence[Patchset], version: Optional[str],
                   *, display_path: Optional[str] = None) -> FileRewrite:
    """Apply, in order, the ops of `patchsets` that target `rel_path`; report each patchset.

    A patchset whose version range excludes `version` is "not-applicable"; None means the
    version is unknown, and the site states decide. A patchset with drift leaves the source
    as it was; later patchsets still run. Site lines refer to the source as the patchset
    found it (the file itself, unless an earlier patchset in the list changed it).
    Patchsets without ops for `rel_path` get no result. Raises PatchsetError if the source
    cannot be parsed.
    """
    shown = display_path or f"vllm/{rel_path}"
    results: List[PatchsetResult] = []
    original: Optional["libcst.Module"] = None
    current: Optional["libcst.Module"] = None
    for patchset in patchsets:
        active, skipped = _select(patchset, rel_path, version, shown)
        if skipped is not None:
            results.append(skipped)
            continue
        if not active:
            continue
        if current is None:
            original = current = _parse(source, shown)
        result, current = _run(patchset, active, current, shown, version)
        results.append(result)
    new_source = source if current is None or current is original else current.code
    return FileRewrite(rel_path, source, new_source, tuple(results))


def missing_file_results(rel_path: str, patchsets: Sequence[Patchset], version: Optional[str],
                         *, display_path: Optional[str] = None) -> Tuple[PatchsetResult, ...]:
    """Report patchsets whose ops target `rel_path` when that file does not exist.

    A running op on a missing file matched 0 sites: drift, unless its `sites` allows 0.
    Ops limited by their own `vllm:` range to versions that have the file never get here
    when the version is known.
    """
    shown = display_path or f"vllm/{rel_path}"
    results: List[PatchsetResult] = []
    for patchset in patchsets:
        active, skipped = _select(patchset, rel_path, version, shown)
        if skipped is not None:
            results.append(skipped)
            continue
        needed = [(i, op) for i, op in active if 0 not in op.sites]
        if needed:
            i, op = needed[0]
            results.append(PatchsetResult(patchset.name, PatchState.DRIFT, (), _say(
                patchset, f"op {i} ({op.describe()}) targets {shown}, which does not exist",
                version)))
        elif active:
            results.append(PatchsetResult(patchset.name, PatchState.SATISFIED, (), _say(
                patchset, f"nothing to do: {shown} does not exist and no op needs it", version)))
    return tuple(results)


def _select(patchset: Patchset, rel_path: str, version: Optional[str],
            shown: str) -> Tuple[List[Tuple[int, Op]], Optional[PatchsetResult]]:
    """Return the ops for `rel_path` that run on `version`, or the not-applicable result."""
    targeted = [(i, op) for i, op in enumerate(patchset.ops, 1) if op.file == rel_path]
    if not targeted:
        return [], None
    if not patchset.applies_to(version):
        return [], PatchsetResult(patchset.name, PatchState.NOT_APPLICABLE, (), (
            f'patchset "{patchset.name}": not for vLLM {version} (it supports vLLM {patchset.versions})'))
    active = [(i, op) for i, op in targeted if op.applies_to(version)]
    if not active:
        ranges = ", ".join(f"op {i}: {op.vllm}" for i, op in targeted)
        return [], PatchsetResult(patchset.name, PatchState.NOT_APPLICABLE, (), (
            f'patchset "{patchset.name}": no op for {shown} runs on vLLM {version} ({ranges})'))
    return active, None


def _parse(source: str, shown: str) -> "libcst.Module":
    import libcst as cst

    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        raise PatchsetError(f"{shown}:{exc.raw_line}:{exc.raw_column + 1}: cannot parse the file "
                            f"to patch it: {exc.message}") from None


def _run(patchset: Patchset, active: Sequence[Tuple[int, Op]], module: "libcst.Module", shown: str,
         version: Optional[str]) -> Tuple[PatchsetResult, "libcst.Module"]:
    """Run one patchset's ops on `module`; return its result and the module to continue with.

    Every op first runs on the module as the patchset found it, so reported lines are the
    file's lines even when an earlier op inserts code. Only when the patchset applies are
    the ops chained, each on the previous one's output, to build the new module.
    """
    from patchops.patchset.ops.base import SiteState
    from patchops.patchset.ops.positions import positions_off

    outcomes: List[Tuple[int, Op, OpOutcome]] = [(i, op, op.rewrite(module)) for i, op in active]
    problem = _first_problem(patchset, outcomes, shown, version)
    sites = tuple(site for _, _, out in outcomes for site in out.sites)
    if problem:
        return PatchsetResult(patchset.name, PatchState.DRIFT, sites, problem), module
    pristine = [site for site in sites if site.state is SiteState.PRISTINE]
    if not pristine:
        return PatchsetResult(patchset.name, PatchState.SATISFIED, sites, _say(
            patchset, f"already applied in {shown} ({_count(sites)})", version)), module

    current = module
    chained: List[Tuple[int, Op, OpOutcome]] = []
    with positions_off():  # these sites are not reported; the first run's are
        for i, op, first in outcomes:
            out = first if current is module else op.rewrite(current)
            chained.append((i, op, out))
            current = out.module
    problem = _first_problem(patchset, chained, shown, version)
    if problem:  # the ops' edits collide: refuse rather than guess
        return PatchsetResult(patchset.name, PatchState.DRIFT, sites, problem + " (after the earlier ops ran)"), module
    lines = ", ".join(str(site.line) for site in pristine)
    return PatchsetResult(patchset.name, PatchState.APPLIES, sites, _say(
        patchset, f"will rewrite {_count(pristine)} in {shown} (line{'s' if len(pristine) > 1 else ''} "
        f"{lines})", version)), current


def _first_problem(patchset: Patchset, outcomes: Sequence[Tuple[int, Op, OpOutcome]], shown: str,
                   version: Optional[str]) -> Optional[str]:
    from patchops.patchset.ops.base import SiteState

    problems: List[str] = []
    for i, op, out in outcomes:
        label = f"op {i} ({op.describe()})"
        if out.error:
            detail = out.error
            if detail.startswith(op.describe() + " "):
                detail = detail[len(op.describe()) + 1:]
            problems.append(f"{label} in {shown}: {detail}")
        problems += [f"{label} in {shown}:{site.line}: {op.explain(site)}"
                     for site in out.sites if site.state is SiteState.DRIFT]
    if not problems:
        return None
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return _say(patchset, problems[0] + more, version)


def _say(patchset: Patchset, text: str, version: Optional[str]) -> str:
    suffix = f" (vLLM {version})" if version else ""
    return f'patchset "{patchset.name}": {text}{suffix}'


def _count(sites: Sequence[Site]) -> str:
    return f"{len(sites)} site{'s' if len(sites) != 1 else ''}"
