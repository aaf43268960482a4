"""Say where a patchset that does not fit a file comes closest: an aid for patchset authors.

`apply` refuses drift. For an author trying a patchset (`apply --dry-run`), "reinstall vLLM"
is usually the wrong advice: the file is as pip installed it and the patchset's expectation
is off. Each op that drifted or matched the wrong number of sites gets one line with the file,
the line of the nearest candidate site and the text found there, and whether the file is
what pip installed (RECORD), which tells whose fault the mismatch is.
"""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

from patchops.patchset.ops.base import SiteState, one_line
from patchops.patchset.ops.tree import split_scope
from patchops.store.site_store import sha256


@dataclass(frozen=True)
class Mismatch:
    """One op of one patchset that does not fit one file."""

    path: Path
    patchset: str
    op: int                     # 1-based, as in messages
    describe: str               # "set-keyword ModelConfig(enforce_eager=...)"
    reason: str                 # what the op found, or how many sites it matched
    line: Optional[int]         # of the nearest candidate site
    found: str                  # the text there
    within: Optional[str] = None  # for a near miss: the class/function it is in ("" top level)
    as_installed: Optional[bool] = None  # the file matches RECORD; None: no RECORD to tell

    def message(self) -> str:
        """Return the one-paragraph message: file:line, the op, what was found, and why."""
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        text = f"{where}: the patchset does not match this file: op {self.op} ({self.describe}) {self.reason}"
        if self.found and self.within is None:
            text += f"; line {self.line} reads: {self.found}"
        elif self.found:
            text += f"; nearest candidate: line {self.line} in {self.within or 'the module'}: {self.found}"
        if self.as_installed is True:
            text += "; the file is as pip installed it, so fix the op for this vLLM"
        elif self.as_installed is False:
            text += ("; the file differs from what pip installed (`patchops verify` lists what "
                     "changed), so it may be the file, not the patchset")
        return f'patchset "{self.patchset}": {text}'


def mismatches(plan) -> List[Mismatch]:
    """Return a Mismatch per op that drifted in `plan` (a patching.plan.ApplyPlan), nearest site first."""
    import libcst as cst

    from patchops.patchset.states import PatchState

    by_name = {p.name: p for p in plan.patchsets}
    files = {(Path(f.site_dir), f.rel): f for f in plan.files}
    out: List[Mismatch] = []
    for outcome in plan.outcomes:
        patchset = by_name.get(outcome.patchset)
        if outcome.state != PatchState.DRIFT or patchset is None:
            continue
        for rel in patchset.files_for(outcome.version):
            item = files.get((Path(outcome.site_dir), rel))
            if item is None or _changed_since_patchops(item):
                continue  # a missing file, or one patchops wrote: their messages say it already
            try:
                text = item.old.decode("utf-8")
                module = cst.parse_module(text)
            except (UnicodeDecodeError, cst.ParserSyntaxError):
                continue
            installed = _as_installed(Path(outcome.site_dir), outcome.version, item.path, item.old)
            for number, op in patchset.ops_for(outcome.version):
                if op.file != rel:
                    continue
                result = op.rewrite(module)
                drifted = [s for s in result.sites if s.state is SiteState.DRIFT]
                for site in drifted:
                    out.append(Mismatch(item.path, patchset.name, number, op.describe(),
                                        op.explain(site), site.line, _line(text, site.line), None,
                                        installed))
                if result.error and not drifted:
                    near = nearest(op, text)
                    reason = result.error[len(op.describe()) + 1:] \
                        if result.error.startswith(op.describe() + " ") else result.error
                    if getattr(op, "scope", ""):
                        reason = reason.replace(" sites, expected", f" sites inside {op.scope}, expected", 1)
                    line, found, within = near or (None, "", None)
                    out.append(Mismatch(item.path, patchset.name, number, op.describe(), reason,
                                        line, found, within, installed))
    return out


def nearest(op, text: str) -> Optional[Tuple[int, str, str]]:
    """Return (line, text, enclosing scope) of the site most like what `op` looks for, or None."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    scope = getattr(op, "scope", "") or ""
    wanted = _wanted_names(op)
    if not wanted:
        return None
    best: Optional[Tuple[float, int, str]] = None
    names: Dict[str, Tuple[int, str]] = {}
    for node, chain, name in _named_nodes(tree, op):
        names.setdefault(name, (node.lineno, ".".join(chain)))
        if name in wanted:
            score = 1 + difflib.SequenceMatcher(None, ".".join(chain), scope).ratio()
            if best is None or score > best[0]:
                best = (score, node.lineno, ".".join(chain))
    if best is None:  # a misspelt name: the closest spelling in the file
        close = difflib.get_close_matches(next(iter(wanted)), list(names), n=1, cutoff=0.7)
        if not close:
            return None
        best = (0.0, *names[close[0]])
    return best[1], _line(text, best[1]), best[2]


def _wanted_names(op) -> Tuple[str, ...]:
    """Return the names an op's sites carry: a keyword, a parameter, a function."""
    if op.name == "set-keyword":
        return (op.keyword,)
    if op.name == "set-default":
        return (op.param or op.field,)
    if op.name in ("replace-function", "add-decorator"):
        return (split_scope(op.scope)[-1],)
    if op.name == "insert-code":
        return (op.before,)
    return ()


def _named_nodes(tree: ast.AST, op) -> Iterator[Tuple[ast.AST, Tuple[str, ...], str]]:
    """Yield (node, enclosing class/function names, name) for nodes of the kind `op` targets."""
    def visit(node: ast.AST, chain: Tuple[str, ...]) -> Iterator[Tuple[ast.AST, Tuple[str, ...], str]]:
        for child in ast.iter_child_nodes(node):
            is_def = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            if op.name == "set-keyword" and isinstance(child, ast.keyword) and child.arg:
                yield child.value, chain, child.arg
            elif op.name == "set-default" and op.param and isinstance(child, ast.arg):
                yield child, chain, child.arg
            elif op.name == "set-default" and op.field and isinstance(child, ast.AnnAssign) \
                    and isinstance(child.target, ast.Name):
                yield child, chain, child.target.id
            elif op.name != "set-keyword" and op.name != "set-default" and is_def:
                yield child, chain, child.name
            yield from visit(child, chain + ((child.name,) if is_def else ()))

    return visit(tree, ())


def _line(text: str, number: Optional[int]) -> str:
    lines = text.splitlines()
    if not number or number > len(lines):
        return ""
    return one_line(lines[number - 1].strip(), 100)


def _changed_since_patchops(item) -> bool:
    entry = item.entry_before
    return entry is not None and sha256(item.old) != entry.written


def _as_installed(site_dir: Path, version: Optional[str], path: Path, data: bytes) -> Optional[bool]:
    """Say whether the file holds the bytes RECORD lists for it; None when RECORD cannot tell."""
    from patchops.patching import verify
    from patchops.core.errors import PatchopsError

    try:
        record = verify.find_record(site_dir, version)
        entries = verify.read_record(record)
    except PatchopsError:
        return None
    try:
        rel = path.resolve().relative_to(site_dir.resolve()).as_posix()
    except ValueError:
        return None
    entry = next((e for e in entries if e.path == rel), None)
    if entry is None:
        return None
    return verify.hash_bytes(entry.algorithm, data) == entry.digest
