"""What the copy and patch commands print: locate, patchsets, apply, status, rollback, verify, capture.

Lint's output is in cli/render/lint.py (text), cli/render/formats.py (JSON, SARIF, GitHub),
cli/render/rules.py and cli/render/explain.py; diffs in cli/render/diff.py.
"""

from __future__ import annotations

from typing import Dict, Optional

from patchops.cli.output import Line, Output
from patchops.core.records import as_dict


def print_json(console: Output, data) -> None:
    """Print JSON, highlighted on a terminal and plain for pipes."""
    console.print_json(data)


def location_dict(location) -> dict:
    winner = location.winner
    return {
        "python": location.python,
        "winner": str(winner.site_dir) if winner else None,
        "copies": [{
            "site_dir": str(c.site_dir), "package_dir": str(c.package_dir), "version": c.version,
            "version_source": c.version_source, "found_via": list(c.found_via),
            "aliases": [str(a) for a in c.aliases], "wins": c.wins, "importable": c.importable,
        } for c in location.copies],
        "search_path": [{"path": p, "origin": o} for p, o in location.search_path],
    }


def location_text(console: Output, location) -> None:
    if not location.copies:
        console.print(f"no vLLM copy found on the import path of {location.python} or under the "
                      "vendor roots; pass --python with the interpreter that runs vLLM (patchops "
                      "installed with pipx or in its own venv sees only its own), or add a root "
                      "with --root DIR or PATCHOPS_ROOTS")
        return
    for c in location.copies:
        mark = "wins" if c.wins else ("shadowed" if c.importable else "not on the import path")
        console.print(Line.assemble(("* " if c.wins else "  "), (str(c.site_dir), "bold"),
                                    f"  vLLM {c.version or 'unknown'}  ",
                                    (f"[{mark}]", "green" if c.wins else "yellow")))
        console.print(Line(f"    found via {', '.join(c.found_via)}; version from {c.version_source}",
                           style="dim"))
        for alias in c.aliases:
            console.print(Line(f"    = {alias} (same files)", style="dim"))
    winner = location.winner
    console.print(Line(f"{location.python}: `import vllm` loads "
                       + (str(winner.package_dir) if winner else "no copy (none is on its path)")))


def patchset_dicts(patchsets) -> list:
    return [{"name": p.name, "summary": p.summary, "vllm": str(p.versions), "files": list(p.files),
             "path": str(p.path), "description": p.description, "notes": p.notes} for p in patchsets]


def patchsets_text(console: Output, patchsets) -> None:
    for p in patchsets:
        console.print(Line.assemble((p.name, "bold"), f"  vLLM {p.versions}  ", p.summary))
        console.print(Line(f"    {p.path}", style="dim"))


def patchset_text(console: Output, p) -> None:
    """Print one patchset in full: what it changes, where, and what to do after applying it."""
    console.print(Line.assemble((p.name, "bold"), f"  vLLM {p.versions}"))
    console.print(Line(p.summary))
    if p.description:
        console.print(Line("\n" + p.description))
    console.print(Line(f"\nfiles: {', '.join(f'vllm/{rel}' for rel in p.files)}"))
    console.print(Line(f"source: {p.path}", style="dim"))
    _patchset_notes(console, [p])


def _patchset_notes(console: Output, patchsets) -> None:
    for p in patchsets:
        if p.notes:
            console.print(Line(f"note ({p.name}): {' '.join(p.notes.split())}", style="yellow"))


STATE_STYLE = {"applies": "green", "applied": "green", "satisfied": "cyan", "not-applied": "yellow",
               "not-applicable": "dim", "drift": "bold red", "drifted": "bold red"}


def _note(console: Output, note: str, style: str = "yellow") -> None:
    console.print(Line(f"note: {note}", style=style))


def _copy_heading(console: Output, site_dir, version, wins: Optional[bool]) -> None:
    mark = {True: "  [imported]", False: "  [shadowed]", None: ""}[wins]
    console.print(Line.assemble((str(site_dir), "bold"), f"  vLLM {version or 'unknown'}",
                                (mark, "green" if wins else "yellow")))


def _state_line(console: Output, patchset: str, state: str, detail: str) -> None:
    line = Line(f"  {patchset}: ")
    line.append(state, style=STATE_STYLE.get(state, ""))
    said = state.replace("-", " ")
    if detail.startswith(said + " "):   # "not applied in X" under state not-applied: say it once
        line.append(detail[len(said):], style="dim")
    elif detail:
        line.append(f" - {detail}", style="dim")
    console.print(line)


def _by_copy(items):
    """Group outcomes or status rows by copy, keeping the copies' order."""
    groups: Dict[str, list] = {}
    for item in items:
        groups.setdefault(str(item.site_dir), []).append(item)
    return groups.items()


def _wins(targets, site_dir: str) -> Optional[bool]:
    if targets is None:
        return None
    copy = next((c for c in targets.copies if str(c.site_dir) == site_dir), None)
    return None if copy is None else copy.wins


def plan_text(console: Output, plan, diff: str = "", *, targets=None, stat: bool = False) -> None:
    """Print per copy what the plan means for each patchset, the diff or its --stat, and notes."""
    for note in targets.notes() if targets is not None else ():
        _note(console, note)
    for site_dir, outcomes in _by_copy(plan.outcomes):
        _copy_heading(console, site_dir, outcomes[0].version, _wins(targets, site_dir))
        for outcome in outcomes:
            _state_line(console, outcome.patchset, outcome.state, outcome.detail)
    for note in dict.fromkeys(plan.notes):
        _note(console, note)
    if diff:
        from patchops.cli.render.diff import colour_diff, diff_stat  # only a plan with changes diffs

        if stat:
            for row in diff_stat(diff):
                console.print(row)
        else:
            colour_diff(console, diff)
    if not plan.problems and not plan.changes:
        console.print("nothing to write: every patchset is applied, satisfied or not applicable")
    applying = {o.patchset for o in plan.outcomes if o.state == "applies"}
    _patchset_notes(console, [p for p in plan.patchsets if p.name in applying])


def problems_text(plan, mismatches=()) -> None:
    """Print a plan's drift as `error: ...` on stderr, as every other refusal is printed.

    `mismatches` (for --dry-run: where a patchset that does not fit comes closest, and whether
    the file is as pip installed it) replace the generic advice.
    """
    errors = Output(stderr=True)
    for mismatch in mismatches:
        errors.print(Line.assemble(("error:", "bold red"), " ", mismatch.message()))
    if plan.problems and not mismatches:
        errors.print(Line.assemble(("error:", "bold red"), " ", plan.problem_message()))
    if plan.unwritable:
        errors.print(Line.assemble(("error:", "bold red"), " ", plan.unwritable_message()))


def apply_report_text(console: Output, report, shown=()) -> None:
    """Print what apply wrote; notes in `shown` (the plan's, printed already) are not repeated."""
    for note in dict.fromkeys(report.notes):
        if note not in shown:
            _note(console, note)
    for path, backup in zip(report.written, report.backups):
        console.print(Line(f"patched {path} (original kept as {backup})"))
    for pyc in report.removed_bytecode:
        console.print(Line(f"removed stale bytecode {pyc}", style="dim"))


def plan_dict(plan, targets=None, mismatches=()) -> dict:
    """Return a plan (dry run) as JSON-ready data."""
    return {
        "dry_run": True,
        "outcomes": [_outcome_dict(o, targets) for o in plan.outcomes],
        "changes": [{"site_dir": str(f.site_dir), "file": f.display, "patchsets": list(f.patchsets)}
                    for f in plan.changes],
        "problems": list(plan.problems),
        "unwritable": list(plan.unwritable),
        "mismatches": [m.message() for m in mismatches],
        "notes": list(dict.fromkeys([*(targets.notes() if targets else ()), *plan.notes])),
        "patchset_notes": {p.name: p.notes for p in plan.patchsets if p.notes},
    }


def apply_report_dict(report, plan, targets=None) -> dict:
    """Return what apply wrote as JSON-ready data."""
    return {
        "dry_run": False,
        "outcomes": [_outcome_dict(o, targets) for o in report.outcomes],
        "written": [{"path": str(p), "backup": str(b)} for p, b in zip(report.written, report.backups)],
        "removed_bytecode": [str(p) for p in report.removed_bytecode],
        "transaction": report.txn,
        "notes": list(dict.fromkeys([*(targets.notes() if targets else ()), *report.notes])),
        "patchset_notes": {p.name: p.notes for p in plan.patchsets if p.notes},
    }


def _outcome_dict(outcome, targets) -> dict:
    return {"site_dir": str(outcome.site_dir), "version": outcome.version,
            "wins": _wins(targets, str(outcome.site_dir)), "patchset": outcome.patchset,
            "state": outcome.state, "detail": outcome.detail, "files": list(outcome.files)}


def status_dicts(report) -> list:
    """Return status rows as JSON-ready data; `wins` says whether `import vllm` loads the copy."""
    return [{
        "site_dir": str(row.site_dir), "version": row.version,
        "wins": _wins(report.targets, str(row.site_dir)), "patchset": row.patchset,
        "state": row.state, "detail": row.detail, "files": list(row.files),
        "file_states": [as_dict(f) for f in row.file_states],
    } for row in report.rows]


def status_notes(console: Output, report) -> None:
    """Print status's notes (a repaired transaction, a copy being patched) apart from its JSON."""
    for note in report.targets.notes() + list(report.notes):
        _note(console, note)


def status_text(console: Output, report) -> None:
    """Print status per copy: a heading naming the copy and whether Python imports it, then rows."""
    for note in report.targets.notes() + list(report.notes):
        _note(console, note)
    for site_dir, rows in _by_copy(report.rows):
        _copy_heading(console, site_dir, rows[0].version, _wins(report.targets, site_dir))
        for row in rows:
            _state_line(console, row.patchset, row.state, row.detail)
    if not report.rows:
        console.print("no patchset known")
    elif report.targets.winner is None:
        _note(console, f"{report.targets.python} imports none of these copies")


def rollback_report_dict(report) -> dict:
    return {
        "restored": [{"path": str(f.path), "site_dir": str(f.site_dir), "rolled_back": list(f.removed),
                      "kept": list(f.kept), "forced": f.forced,
                      "saved": str(f.saved) if f.saved else None} for f in report.files if f.written],
        "already_original": [str(f.path) for f in report.files if not f.written],
        "patchsets": list(report.patchsets),
        "removed_bytecode": [str(p) for p in report.removed_bytecode],
        "transaction": report.txn,
        "notes": list(dict.fromkeys(report.notes)),
    }


def rollback_report_text(console: Output, report) -> None:
    for note in dict.fromkeys(report.notes):
        _note(console, note)
    for item in report.files:
        if not item.written:
            continue
        line = f"restored {item.path} (rolled back {', '.join(item.removed)}"
        line += f"; kept {', '.join(item.kept)})" if item.kept else ")"
        if item.forced:
            line += f"; the edited file is kept as {item.saved}"
        console.print(Line(line))
    if not report.changed and not report.notes:
        console.print("nothing to restore: the files are already original")


VERIFY_STYLE = {"modified": "bold red", "missing": "bold red", "extra": "yellow", "patched": "green"}


def verify_dicts(results) -> list:
    return [{
        "site_dir": str(r.site_dir), "version": r.version,
        "record": str(r.record) if r.record else None, "listed": r.listed, "hashed": r.hashed,
        "differs": r.differs, "error": r.error, "skipped": list(r.skipped),
        "files": [{"path": f.path, "state": f.state, "detail": f.detail,
                   "patchsets": list(f.patchsets)} for f in r.findings],
    } for r in results]


def verify_text(console: Output, results) -> None:
    """Print one line per differing file, then a summary line per copy."""
    for r in results:
        head = f"{r.site_dir} (vLLM {r.version or 'unknown'})"
        if r.error:
            console.print(Line(f"{head}: cannot verify: {r.error}", style="bold red"))
            continue
        for f in r.findings:
            line = Line("  ")
            line.append(f"{f.state:<8}", style=VERIFY_STYLE.get(f.state, ""))
            line.append(f" {f.path}")
            by = f" by {', '.join(f.patchsets)}" if f.patchsets else ""
            line.append(f" ({f.detail}{by})", style="dim")
            console.print(line)
        counts = {}
        for f in r.findings:
            counts[f.state] = counts.get(f.state, 0) + 1
        found = ", ".join(f"{n} {state}" for state, n in sorted(counts.items())) or "no difference"
        skipped = f"; {len(r.skipped)} outside the site folder not checked" if r.skipped else ""
        console.print(Line(f"{head}: {r.listed} files in {r.record.parent.name}/RECORD, "
                           f"{r.hashed} hashed: {found}{skipped}",
                           style="bold red" if r.differs else "green"))


def capture_text(console: Output, result) -> None:
    for item in result.files:
        ops = ", ".join(op.describe() for op in item.ops)
        console.print(Line(f"{item.path}: {ops} (pristine text from {item.pristine_from})"))
    console.print(Line(f"wrote {result.path} (vLLM {result.versions or 'any'})", style="green"))
    for path in result.recorded:
        console.print(Line(f"recorded {path} as patched by {result.name}: `patchops rollback "
                           f"{result.name} --patchsets {result.path.parent}` restores the pristine file",
                           style="dim"))
