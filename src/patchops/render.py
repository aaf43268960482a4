"""Turn API results into text, JSON, SARIF and GitHub annotations (the only rich user besides cli)."""

from __future__ import annotations

import json
import textwrap
from dataclasses import asdict
from typing import Dict, List, Optional

from patchops.output import Line, Output

from patchops import __version__

# The distribution is vllm-patchops: `patchops` on PyPI is an unrelated project.
PROJECT_URL = "https://pypi.org/project/vllm-patchops/"
SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


# ---------------------------------------------------------------- lint

def lint_summary(diagnostics) -> Dict[str, int]:
    summary = {"error": 0, "warning": 0, "info": 0}
    for diagnostic in diagnostics:
        summary[diagnostic.severity] += 1
    return summary


def lint_text(console: Output, results, *, concise: bool = False, unsafe: bool = False,
              fixed: Optional[int] = None) -> None:
    """Print each finding as `file:line:col: severity: message [CODE name]`, then a summary.

    The full form adds the source line with a caret under the column, the fix (marked
    `(--fix)` when `lint --fix` makes it) and the vLLM message; `concise` prints one line per
    finding (`[CODE]` only), as `ruff --output-format concise` does. `fixed` is how many
    fixes `lint --fix` made; `unsafe` whether unsafe fixes count as fixable.
    """
    for result in results:
        lines = result.source_lines
        for d in result.diagnostics:
            line = Line(f"{d.file}:{d.line}:{d.column}:", style="bold")
            line.append(f" {d.severity}:", style=SEVERITY_STYLE[d.severity])
            line.append(f" {d.message} ")
            line.append(f"[{d.code}]" if concise else f"[{d.code} {d.name}]", style="dim")
            console.print(line)
            if concise:
                continue
            if 0 < d.line <= len(lines):
                for row in snippet(lines[d.line - 1], d.line, d.column, console.width):
                    console.print(Line(row, style="dim"))
            if d.fix:
                console.print(Line(f"  fix{_fix_mark(d, unsafe)}: {d.fix}", style="green"))
            if d.vllm_message:
                console.print(Line(f"  vLLM: {d.vllm_message}", style="dim"))
    for hardware in sorted({r.hardware for r in results if r.hardware}):
        console.print(Line(f"assumed hardware: {hardware}", style="dim"))
    if fixed is not None:
        remaining = sum(len(r.diagnostics) for r in results)
        console.print(Line(f"fixed {_plural(fixed, 'finding')}, {remaining} remaining", style="bold"))
    console.print(Line(lint_summary_line(results, unsafe=unsafe), style="dim"))


def _fix_mark(d, unsafe: bool) -> str:
    """Return ` (--fix)` or ` (--unsafe-fixes)` for a finding `lint --fix` can fix."""
    if d.autofix is None:
        return ""
    return " (--fix)" if d.autofix.applicability == "safe" or unsafe else " (--unsafe-fixes)"


def fixable_note(diagnostics, unsafe: bool = False) -> str:
    """Return `; 2 fixable with --fix (1 more with --unsafe-fixes)`, or "" when none is."""
    safe = sum(d.autofix is not None and (d.autofix.applicability == "safe" or unsafe) for d in diagnostics)
    more = sum(d.autofix is not None for d in diagnostics) - safe
    if not safe:
        return f"; {more} fixable with --fix --unsafe-fixes" if more else ""
    extra = f" ({more} more with --unsafe-fixes)" if more else ""
    return f"; {safe} fixable with --fix{extra}"


def fix_diff_summary(fixes) -> str:
    """Return what `lint --diff` would do: `would fix 3 findings in 2 files, 1 remaining`."""
    changed = [f for f in fixes if f.changed]
    remaining = sum(len(f.result.diagnostics) for f in fixes)
    return (f"would fix {_plural(sum(f.fixed for f in fixes), 'finding')} in "
            f"{_plural(len(changed), 'file')}, {remaining} remaining")


def snippet(text: str, line: int, column: int, width: int = 80) -> List[str]:
    """Return the source line and a caret under `column`, cut around it to fit `width`."""
    gutter = f"{line:>4} | "
    room = max(width - len(gutter), 20)
    text = text.expandtabs(1)
    start = 0
    if len(text) > room:  # a long launch command: show the part around the column
        start = max(0, min(column - 1 - room // 3, len(text) - room))
    shown = text[start:start + room]
    if start:
        shown = "..." + shown[3:]
    if start + room < len(text):
        shown = shown[:-3] + "..."
    caret = " " * (len(gutter) - 2) + "| " + " " * max(column - 1 - start, 0) + "^"
    return [gutter + shown.rstrip(), caret]


def lint_summary_line(results, unsafe: bool = False) -> str:
    """Return `2 errors, 1 warning in 3 files; against vLLM 0.8.5: 2 files, ...; 1 not linted`."""
    counts = lint_summary([d for result in results for d in result.diagnostics])
    text = ", ".join(_plural(counts[key], key) for key in ("error", "warning", "info"))
    against: Dict[str, int] = {}
    for result in results:
        if result.error is None:
            key = f"vLLM {result.vllm_version} from {_origin(result.facts_origin)}"
            against[key] = against.get(key, 0) + 1
    text += f" in {_plural(len(results), 'input')}"
    if against:
        text += "; linted against " + ", ".join(
            key if len(against) == 1 else f"{key} ({n})" for key, n in against.items())
    failed = sum(result.error is not None for result in results)
    if failed:
        text += f"; {failed} not linted"
    text += fixable_note([d for result in results for d in result.diagnostics], unsafe)
    text += "".join(f"; {r.model_note}" for r in results if r.model_note)
    return text


def _origin(origin: str) -> str:
    """Return where facts came from in a few words: `shipped facts` or the copy's folder."""
    return "shipped facts" if origin.startswith("shipped facts") else origin


def _plural(count: int, noun: str) -> str:
    if noun == "info":
        return f"{count} info"
    return f"{count} {noun}" + ("" if count == 1 else "s")


def lint_json(results) -> str:
    diagnostics = [d for result in results for d in result.diagnostics]
    document = {
        "vllm_version": results[0].vllm_version if results else None,
        "diagnostics": [_diagnostic_dict(d) for d in diagnostics],
        "summary": lint_summary(diagnostics),
        "inputs": [{"file": r.path, "vllm_version": r.vllm_version or None,
                    "facts_origin": r.facts_origin or None, "linted": r.error is None,
                    "error": r.error, "assumed_hardware": r.hardware,
                    "model_config": r.model_config,
                    "skipped": list(r.skipped)} for r in results],
    }
    return json.dumps(document, indent=2)


def _diagnostic_dict(d) -> dict:
    """Return a finding as JSON; `fix` as ruff has it: message, applicability, edits (or null)."""
    data = asdict(d)
    data["fields"] = list(d.fields)
    del data["autofix"]
    data["fix"] = _fix_dict(d)
    return data


def _fix_dict(d) -> Optional[dict]:
    if d.fix is None and d.autofix is None:
        return None
    found = d.autofix
    return {"message": d.fix,
            "applicability": found.applicability if found else "display-only",
            "edits": [{"content": e.content,
                       "location": {"row": e.start_at[0], "column": e.start_at[1]},
                       "end_location": {"row": e.end_at[0], "column": e.end_at[1]}}
                      for e in (found.edits if found else ())]}


def _sarif_fixes(d) -> dict:
    """Return SARIF's `fixes` (3.55) for a finding `lint --fix` can fix, else {}."""
    if d.autofix is None:
        return {}
    return {"fixes": [{
        "description": {"text": d.autofix.title},
        "artifactChanges": [{
            "artifactLocation": {"uri": sarif_uri(d.file)},
            "replacements": [{
                "deletedRegion": {"startLine": e.start_at[0], "startColumn": e.start_at[1],
                                  "endLine": e.end_at[0], "endColumn": e.end_at[1]},
                "insertedContent": {"text": e.content},
            } for e in d.autofix.edits],
        }],
    }]}


def lint_sarif(results, rules) -> str:
    """Return a SARIF 2.1.0 log with one run and the rule catalogue as the driver's rules."""
    diagnostics = [d for result in results for d in result.diagnostics]
    index = {rule.code: i for i, rule in enumerate(rules)}
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "patchops",
                "version": __version__,
                "informationUri": PROJECT_URL,
                "rules": [{
                    "id": rule.code,
                    "name": rule.name,
                    "shortDescription": {"text": rule.summary()},
                    "fullDescription": {"text": rule.docs()},
                    "defaultConfiguration": {"level": SARIF_LEVEL[rule.severity]},
                    "properties": {"vllm_versions": rule.versions, "fix": rule.fixable},
                } for rule in rules],
            }},
            "results": [{
                "ruleId": d.code,
                **({"ruleIndex": index[d.code]} if d.code in index else {}),
                "level": SARIF_LEVEL[d.severity],
                "message": {"text": _with_fix(d)},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": sarif_uri(d.file)},
                    "region": {"startLine": d.line, "startColumn": d.column},
                }}],
                "properties": {"fields": list(d.fields), "vllm_message": d.vllm_message,
                               "fix": d.autofix.applicability if d.autofix else None},
                **_sarif_fixes(d),
            } for d in diagnostics],
            "invocations": [{"executionSuccessful": all(r.error is None for r in results)}],
        }],
    }
    return json.dumps(log, indent=2)


def sarif_uri(path: str) -> str:
    """Return `path` as a URI reference: `file:` for absolute paths, percent-encoded otherwise.

    `<command>` and `<stdin>` become `%3Ccommand%3E`, a relative reference code-scanning
    tools accept; a space becomes `%20`.
    """
    from pathlib import PurePosixPath
    from urllib.parse import quote

    if path.startswith("/"):
        return PurePosixPath(path).as_uri()
    return quote(path.replace("\\", "/"))


def lint_github(results) -> str:
    """Return GitHub Actions workflow commands, one annotation per finding."""
    lines = []
    for result in results:
        for d in result.diagnostics:
            message = _with_fix(d)
            lines.append(f"::{GITHUB_COMMAND[d.severity]} file={_gh_prop(d.file)},line={d.line},"
                         f"col={d.column},title={_gh_prop(f'{d.code} {d.name}')}::{_gh_data(message)}")
    return "".join(line + "\n" for line in lines)


def _with_fix(d) -> str:
    """Return the message and its fix as one text, for formats with a single message field."""
    return f"{d.message.rstrip('.')}. Fix: {d.fix}" if d.fix else d.message


def _gh_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(value: str) -> str:
    return _gh_data(value).replace(":", "%3A").replace(",", "%2C")


def rules_table(console: Output, rules) -> None:
    """Print each rule as a heading line (code, name, severity, vLLM versions) and its summary."""
    width = max(len(rule.name) for rule in rules)
    for rule in rules:
        line = Line(f"{rule.code}  ", style="bold")
        line.append(f"{rule.name:<{width}}  ")
        line.append(f"{_severities(rule):<12}  ", style=SEVERITY_STYLE[rule.severity])
        line.append(f"vLLM {_versions(rule.versions)}", style="dim")
        if rule.fixable:
            line.append(f"  fix: {rule.fixable}", style="green")
        console.print(line)
        summary = textwrap.fill(rule.summary(), max(console.width, 40), initial_indent=" " * 7,
                                subsequent_indent=" " * 7)
        console.print(Line(summary))


def _severities(rule) -> str:
    """Return `error`, or `error|info` for a rule that says info when the facts cannot tell."""
    return f"{rule.severity}|{rule.unsure_severity}" if rule.unsure_severity else rule.severity


def _fix_kind(rule) -> str:
    """Say whether and how `lint --fix` fixes the rule's findings."""
    if rule.fixable == "safe":
        return "fix: safe, when exact (`lint --fix`)"
    if rule.fixable == "unsafe":
        return "fix: unsafe, when exact (`lint --fix --unsafe-fixes`)"
    return "fix: none (the finding suggests one)"


def _versions(spec: str) -> str:
    return "all versions" if spec in ("", ">=0") else spec


def rule_json(rules) -> str:
    return json.dumps([{
        "code": rule.code, "name": rule.name, "severity": rule.severity,
        "unsure_severity": rule.unsure_severity, "versions": rule.versions,
        "summary": rule.summary(), "docs": rule.docs(), "vllm_message": rule.vllm_message,
        "fix": rule.fixable,
    } for rule in rules], indent=2)


def rule_docs(console: Output, rule) -> None:
    """Print a rule's documentation: rendered Markdown on a terminal, the raw text in a pipe."""
    text = (f"# {rule.code} {rule.name}\n\nSeverity: {_severities(rule)}; "
            f"vLLM {_versions(rule.versions)}; {_fix_kind(rule)}\n\n{rule.docs()}")
    if rule.vllm_message:
        text += f"\n\n## vLLM message prevented\n{rule.vllm_message}"
    if console.is_terminal:
        from rich.markdown import Markdown

        console.rich().print(Markdown(text))
    else:
        console.print(text)


# ---------------------------------------------------------------- diff

def colour_diff(console: Output, diff: str) -> None:
    """Print a unified diff, red for removed lines and green for added ones."""
    for line in diff.splitlines():
        style = None
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        console.print(Line(line, style=style or ""))


def print_json(console: Output, data) -> None:
    """Print JSON, highlighted on a terminal and plain for pipes."""
    console.print_json(data)


# ---------------------------------------------------------------- locate

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


# ---------------------------------------------------------------- patch

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
    if detail:
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
        if stat:
            for row in diff_stat(diff):
                console.print(row)
        else:
            colour_diff(console, diff)
    if not plan.problems and not plan.changes:
        console.print("nothing to write: every patchset is applied, satisfied or not applicable")
    applying = {o.patchset for o in plan.outcomes if o.state == "applies"}
    _patchset_notes(console, [p for p in plan.patchsets if p.name in applying])


def diff_stat(diff: str) -> List[str]:
    """Return `git diff --stat` lines for a unified diff: ` vllm/x.py | 4 ++--`, then a total."""
    files: List[List] = []
    copies = 1
    for line in diff.splitlines():
        if line.startswith("# identical in "):
            copies = int(line.split()[3])
        elif line.startswith("# in "):
            copies = 1
        elif line.startswith("+++ "):
            files.append([line[6:], copies, 0, 0])
        elif files and line.startswith("+"):
            files[-1][2] += 1
        elif files and line.startswith("-") and not line.startswith("--- "):
            files[-1][3] += 1
    width = max((len(f[0]) for f in files), default=0)
    rows = [f" {name:<{width}} | {added + removed:>3} {'+' * added}{'-' * removed}"
            + (f"  (x{copies} copies)" if copies > 1 else "") for name, copies, added, removed in files]
    total_files = sum(f[1] for f in files)
    rows.append(f" {total_files} file(s) changed, {sum(f[2] * f[1] for f in files)} insertion(s)(+), "
                f"{sum(f[3] * f[1] for f in files)} deletion(s)(-)")
    return rows


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
        "file_states": [asdict(f) for f in row.file_states],
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


def explain_table(console: Output, result) -> None:
    """Print setting, value and origin per row; then why, for every value that is not a plain default."""
    from patchops.lint.vllm.wording import sizes_text

    console.print(Line(f"{result.path}: vLLM {result.vllm_version} ({result.facts_origin})", style="bold"))
    cells, notes = [], []
    for row in result.rows:
        value = "?" if row.value is None else sizes_text(row.value) if isinstance(row.value, list) \
            else str(row.value)
        if not row.certain:
            value += " (or " + ", ".join(map(str, row.alternatives)) + ")" if row.alternatives else " ?"
        cells.append((row.field, value, row.origin + (f" ({row.where})" if row.where else "")))
        if not row.origin.startswith("vLLM ") and row.origin != "set by you" or not row.certain:
            notes.append(f"{row.field}: {row.reason}")
    widths = [max(len(c[i]) for c in cells) for i in (0, 1)]
    for name, value, origin in cells:
        console.print(Line(f"  {name:<{widths[0]}}  {value:<{widths[1]}}  ").append(origin, style="dim"))
    for note in notes:
        console.print(Line(note))
    if result.hardware:
        console.print(Line(f"assumed hardware: {result.hardware}", style="dim"))


def explain_json(result) -> str:
    """Return the effective settings keyed by vLLM's field names, each with value and origin."""
    return json.dumps({"file": result.path, "vllm_version": result.vllm_version,
                       "facts_origin": result.facts_origin, "assumed_hardware": result.hardware,
                       "settings": {row.field: row.to_dict() for row in result.rows}}, indent=2)


# ---------------------------------------------------------------- verify

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


# ---------------------------------------------------------------- capture

def capture_text(console: Output, result) -> None:
    for item in result.files:
        ops = ", ".join(op.describe() for op in item.ops)
        console.print(Line(f"{item.path}: {ops} (pristine text from {item.pristine_from})"))
    console.print(Line(f"wrote {result.path} (vLLM {result.versions or 'any'})", style="green"))
    for path in result.recorded:
        console.print(Line(f"recorded {path} as patched by {result.name}: `patchops rollback "
                           f"{result.name} --patchsets {result.path.parent}` restores the pristine file",
                           style="dim"))


def raw(text: str) -> None:
    """Write text exactly as it is (a patch: rich would re-wrap it and trim trailing spaces)."""
    import sys

    sys.stdout.write(text)
    sys.stdout.flush()


def file_diffs(console: Output, diffs) -> None:
    """Print each diff, coloured on a terminal and byte-exact for pipes; `#` lines name copies."""
    several = len({site for d in diffs for site in d.sites}) > 1
    for d in diffs:
        notes = []
        if several:
            notes.append(f"# {', '.join(map(str, d.sites))}")
        if d.drifted:
            notes.append(f"# {d.path}: changed since patchops wrote it ({', '.join(d.patchsets)})")
        header = "".join(note + "\n" for note in notes)
        if console.is_terminal:
            for note in notes:
                console.print(Line(note, style="dim"))
            colour_diff(console, d.text)
        else:
            raw(header + d.text)
    if not diffs:
        console.print("nothing patched: no file differs from its original")


def engine_text(console: Output, found) -> None:
    """Print vLLM's own verdict under the static findings, with its time and whether they agree."""
    verdict = found.verdict
    where = f"vLLM {found.vllm_version or '?'} via {found.python}, {verdict.seconds:g} s"
    if verdict.profile is not None:
        gpu = verdict.profile
        where += (f"; {found.profiled_because}, so it answered a declared GPU profile: "
                  f"{gpu['count']} x {gpu['name']}, cc {gpu['capability'][0]}.{gpu['capability'][1]}, "
                  f"{gpu['memory_gib']:g} GiB")
    if verdict.ok:
        keys = ("engine", "chunked_prefill", "max_num_batched_tokens", "max_num_seqs", "max_model_len")
        values = ", ".join(f"{k}={verdict.resolved.get(k)}" for k in keys if k in verdict.resolved)
        console.print(Line.assemble((f"{found.path}: engine: ", "bold"), ("ok", "green"),
                                    f" ({where}): {values}"))
    else:
        console.print(Line.assemble((f"{found.path}: engine: ", "bold"), ("error", "bold red"),
                                    f" at {verdict.stage} ({where}): {verdict.error_type}: {verdict.message}"))
    if found.agrees:
        console.print(Line("  agrees with the static lint", style="dim"))
    else:
        said = f"{found.static_errors} error(s)" if found.static_errors else "no error"
        console.print(Line(f"  disagrees with the static lint, which found {said}", style="yellow"))
