"""Turn API results into text, JSON, SARIF and GitHub annotations (the only rich user besides cli)."""

from __future__ import annotations

import json
import textwrap
from dataclasses import asdict
from typing import Dict

from rich.console import Console
from rich.text import Text

from patchops import __version__

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


# ---------------------------------------------------------------- lint

def lint_summary(diagnostics) -> Dict[str, int]:
    summary = {"error": 0, "warning": 0, "info": 0}
    for diagnostic in diagnostics:
        summary[diagnostic.severity] += 1
    return summary


def lint_text(console: Console, results) -> None:
    """Print `file:line:col: severity: message [CODE name]` lines, a fix hint under each."""
    diagnostics = [d for result in results for d in result.diagnostics]
    for d in diagnostics:
        line = Text(f"{d.file}:{d.line}:{d.column}: ", style="bold")
        line.append(f"{d.severity}:", style=SEVERITY_STYLE[d.severity])
        line.append(f" {d.message} ")
        line.append(f"[{d.code} {d.name}]", style="dim")
        console.print(line, soft_wrap=True, highlight=False)
        if d.fix:
            console.print(Text(f"  fix: {d.fix}", style="green"), soft_wrap=True, highlight=False)
        if d.vllm_message:
            console.print(Text(f"  vLLM: {d.vllm_message}", style="dim"), soft_wrap=True, highlight=False)
    for hardware in sorted({r.hardware for r in results if r.hardware}):
        console.print(Text(f"assumed hardware: {hardware}", style="dim"), soft_wrap=True, highlight=False)
    counts = lint_summary(diagnostics)
    against: Dict[str, int] = {}
    for result in results:
        key = f"vLLM {result.vllm_version} ({result.facts_origin})"
        against[key] = against.get(key, 0) + 1
    console.print(Text(f"{counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} info; "
                       + "; ".join(f"{n} file(s) linted against {key}" for key, n in against.items()),
                       style="dim"), soft_wrap=True, highlight=False)


def lint_json(results) -> str:
    diagnostics = [d for result in results for d in result.diagnostics]
    document = {
        "vllm_version": results[0].vllm_version if results else None,
        "diagnostics": [_diagnostic_dict(d) for d in diagnostics],
        "summary": lint_summary(diagnostics),
        "inputs": [{"file": r.path, "vllm_version": r.vllm_version, "facts_origin": r.facts_origin,
                    "assumed_hardware": r.hardware} for r in results],
    }
    return json.dumps(document, indent=2)


def _diagnostic_dict(d) -> dict:
    data = asdict(d)
    data["fields"] = list(d.fields)
    return data


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
                "informationUri": "https://pypi.org/project/patchops/",
                "rules": [{
                    "id": rule.code,
                    "name": rule.name,
                    "shortDescription": {"text": rule.summary()},
                    "fullDescription": {"text": rule.docs()},
                    "defaultConfiguration": {"level": SARIF_LEVEL[rule.severity]},
                    "properties": {"vllm_versions": rule.versions},
                } for rule in rules],
            }},
            "results": [{
                "ruleId": d.code,
                **({"ruleIndex": index[d.code]} if d.code in index else {}),
                "level": SARIF_LEVEL[d.severity],
                "message": {"text": _with_fix(d)},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": d.file},
                    "region": {"startLine": d.line, "startColumn": d.column},
                }}],
                "properties": {"fields": list(d.fields), "vllm_message": d.vllm_message},
            } for d in diagnostics],
        }],
    }
    return json.dumps(log, indent=2)


def lint_github(results) -> str:
    """Return GitHub Actions workflow commands, one annotation per finding."""
    lines = []
    for result in results:
        for d in result.diagnostics:
            message = _with_fix(d)
            lines.append(f"::{GITHUB_COMMAND[d.severity]} file={_gh_prop(d.file)},line={d.line},"
                         f"col={d.column},title={_gh_prop(f'{d.code} {d.name}')}::{_gh_data(message)}")
    return "\n".join(lines)


def _with_fix(d) -> str:
    """Return the message and its fix as one text, for formats with a single message field."""
    return f"{d.message.rstrip('.')}. Fix: {d.fix}" if d.fix else d.message


def _gh_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(value: str) -> str:
    return _gh_data(value).replace(":", "%3A").replace(",", "%2C")


def rules_table(console: Console, rules) -> None:
    """Print each rule as a heading line (code, name, severity, vLLM versions) and its summary."""
    width = max(len(rule.name) for rule in rules)
    for rule in rules:
        line = Text(f"{rule.code}  ", style="bold")
        line.append(f"{rule.name:<{width}}  ")
        line.append(f"{rule.severity:<7}  ", style=SEVERITY_STYLE[rule.severity])
        line.append(f"vLLM {_versions(rule.versions)}", style="dim")
        console.print(line, highlight=False)
        summary = textwrap.fill(rule.summary(), max(console.width, 40), initial_indent=" " * 7,
                                subsequent_indent=" " * 7)
        console.print(Text(summary), soft_wrap=True, highlight=False)


def _versions(spec: str) -> str:
    return "all versions" if spec in ("", ">=0") else spec


def rule_json(rules) -> str:
    return json.dumps([{
        "code": rule.code, "name": rule.name, "severity": rule.severity, "versions": rule.versions,
        "summary": rule.summary(), "docs": rule.docs(), "vllm_message": rule.vllm_message,
    } for rule in rules], indent=2)


def rule_docs(console: Console, rule) -> None:
    """Print a rule's documentation: rendered Markdown on a terminal, the raw text in a pipe."""
    text = (f"# {rule.code} {rule.name}\n\nSeverity: {rule.severity}; "
            f"vLLM {_versions(rule.versions)}\n\n{rule.docs()}")
    if rule.vllm_message:
        text += f"\n\n## vLLM message prevented\n{rule.vllm_message}"
    if console.is_terminal:
        from rich.markdown import Markdown

        console.print(Markdown(text))
    else:
        print(text)


# ---------------------------------------------------------------- diff

def colour_diff(console: Console, diff: str) -> None:
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
        console.print(Text(line, style=style or ""), soft_wrap=True, highlight=False)


def print_json(console: Console, data) -> None:
    """Print JSON, highlighted on a terminal and plain for pipes."""
    if console.is_terminal:
        console.print_json(json.dumps(data, default=str))
    else:
        print(json.dumps(data, indent=2, default=str))


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


def location_text(console: Console, location) -> None:
    if not location.copies:
        console.print(f"no vLLM copy found on the import path of {location.python} "
                      "or under the vendor roots (add one with --root DIR or PATCHOPS_ROOTS)")
        return
    for c in location.copies:
        mark = "wins" if c.wins else ("shadowed" if c.importable else "not on the import path")
        console.print(Text.assemble(("* " if c.wins else "  "), (str(c.site_dir), "bold"),
                                    f"  vLLM {c.version or 'unknown'}  ",
                                    (f"[{mark}]", "green" if c.wins else "yellow")),
                      soft_wrap=True, highlight=False)
        console.print(Text(f"    found via {', '.join(c.found_via)}; version from {c.version_source}",
                           style="dim"), soft_wrap=True, highlight=False)
        for alias in c.aliases:
            console.print(Text(f"    = {alias} (same files)", style="dim"), soft_wrap=True, highlight=False)
    winner = location.winner
    console.print(Text(f"{location.python}: `import vllm` loads "
                       + (str(winner.package_dir) if winner else "no copy (none is on its path)")),
                  soft_wrap=True, highlight=False)


# ---------------------------------------------------------------- patch

def patchset_dicts(patchsets) -> list:
    return [{"name": p.name, "summary": p.summary, "vllm": str(p.versions), "files": list(p.files),
             "path": str(p.path), "description": p.description} for p in patchsets]


def patchsets_text(console: Console, patchsets) -> None:
    for p in patchsets:
        console.print(Text.assemble((p.name, "bold"), f"  vLLM {p.versions}  ", p.summary),
                      soft_wrap=True, highlight=False)
        console.print(Text(f"    {p.path}", style="dim"), soft_wrap=True, highlight=False)


STATE_STYLE = {"applies": "green", "applied": "green", "satisfied": "cyan", "not-applied": "yellow",
               "not-applicable": "dim", "drift": "bold red", "drifted": "bold red"}


def _state_line(console: Console, site_dir, version, patchset: str, state: str, detail: str) -> None:
    line = Text(f"{site_dir} (vLLM {version or 'unknown'}): {patchset}: ")
    line.append(state, style=STATE_STYLE.get(state, ""))
    if detail:
        line.append(f" ({detail})", style="dim")
    console.print(line, soft_wrap=True, highlight=False)


def plan_text(console: Console, plan, diff: str = "", mismatches=()) -> None:
    """Print what the plan means per copy and patchset, then the diff (if any) and problems.

    `mismatches` (for --dry-run) replace the problems of the files they explain.
    """
    for outcome in plan.outcomes:
        _state_line(console, outcome.site_dir, outcome.version, outcome.patchset, outcome.state,
                    outcome.detail)
    for note in plan.notes:
        console.print(Text(f"note: {note}", style="yellow"), soft_wrap=True, highlight=False)
    if diff:
        colour_diff(console, diff)
    for mismatch in mismatches:
        console.print(Text(mismatch.message(), style="bold red"), soft_wrap=True, highlight=False)
    explained = {str(m.path) for m in mismatches}
    if any(not any(path in p for path in explained) for p in plan.problems):
        console.print(Text(plan.problem_message(), style="bold red"), soft_wrap=True, highlight=False)
    elif plan.problems:
        console.print("nothing was written (dry run)")
    elif not plan.changes:
        console.print("nothing to write: every patchset is applied, satisfied or not applicable")


def apply_report_text(console: Console, report) -> None:
    for note in report.notes:
        console.print(Text(f"note: {note}", style="yellow"), soft_wrap=True, highlight=False)
    for path, backup in zip(report.written, report.backups):
        console.print(Text(f"patched {path} (original kept as {backup})"), soft_wrap=True, highlight=False)
    for pyc in report.removed_bytecode:
        console.print(Text(f"removed stale bytecode {pyc}", style="dim"), soft_wrap=True, highlight=False)


def status_dicts(rows) -> list:
    return [{
        "site_dir": str(row.site_dir), "version": row.version, "patchset": row.patchset,
        "state": row.state, "detail": row.detail, "files": list(row.files),
        "file_states": [asdict(f) for f in row.file_states],
    } for row in rows]


def status_text(console: Console, rows) -> None:
    for row in rows:
        _state_line(console, row.site_dir, row.version, row.patchset, row.state, row.detail)
    if not rows:
        console.print("no patchset known")


def rollback_report_text(console: Console, report) -> None:
    for note in report.notes:
        console.print(Text(f"note: {note}", style="yellow"), soft_wrap=True, highlight=False)
    for item in report.files:
        if not item.written:
            continue
        line = f"restored {item.path} (rolled back {', '.join(item.removed)}"
        line += f"; kept {', '.join(item.kept)})" if item.kept else ")"
        if item.forced:
            line += f"; the edited file is kept as {item.saved}"
        console.print(Text(line), soft_wrap=True, highlight=False)
    if not report.changed:
        console.print("nothing to restore: the files are already original")


def explain_table(console: Console, result) -> None:
    """Print setting, value and origin per row; then why, for every value that is not a plain default."""
    from rich.table import Table

    from patchops.lint.vllm.wording import sizes_text

    table = Table(title=f"{result.path}: vLLM {result.vllm_version} ({result.facts_origin})",
                  title_justify="left")
    table.add_column("setting", no_wrap=True)
    table.add_column("value", max_width=24, overflow="fold")
    table.add_column("origin", ratio=1)
    notes = []
    for row in result.rows:
        value = "?" if row.value is None else sizes_text(row.value) if isinstance(row.value, list) \
            else str(row.value)
        if not row.certain:
            value += " (or " + ", ".join(map(str, row.alternatives)) + ")" if row.alternatives else " ?"
        table.add_row(row.field, value, row.origin + (f" ({row.where})" if row.where else ""))
        if not row.origin.startswith("vLLM ") and row.origin != "set by you" or not row.certain:
            notes.append(f"{row.field}: {row.reason}")
    console.print(table)
    for note in notes:
        console.print(Text(note), soft_wrap=True, highlight=False)
    if result.hardware:
        console.print(Text(f"assumed hardware: {result.hardware}", style="dim"), soft_wrap=True,
                      highlight=False)


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


def verify_text(console: Console, results) -> None:
    """Print one line per differing file, then a summary line per copy."""
    for r in results:
        head = f"{r.site_dir} (vLLM {r.version or 'unknown'})"
        if r.error:
            console.print(Text(f"{head}: cannot verify: {r.error}", style="bold red"),
                          soft_wrap=True, highlight=False)
            continue
        for f in r.findings:
            line = Text("  ")
            line.append(f"{f.state:<8}", style=VERIFY_STYLE.get(f.state, ""))
            line.append(f" {f.path}")
            by = f" by {', '.join(f.patchsets)}" if f.patchsets else ""
            line.append(f" ({f.detail}{by})", style="dim")
            console.print(line, soft_wrap=True, highlight=False)
        counts = {}
        for f in r.findings:
            counts[f.state] = counts.get(f.state, 0) + 1
        found = ", ".join(f"{n} {state}" for state, n in sorted(counts.items())) or "no difference"
        skipped = f"; {len(r.skipped)} outside the site folder not checked" if r.skipped else ""
        console.print(Text(f"{head}: {r.listed} files in {r.record.parent.name}/RECORD, "
                           f"{r.hashed} hashed: {found}{skipped}",
                           style="bold red" if r.differs else "green"),
                      soft_wrap=True, highlight=False)


# ---------------------------------------------------------------- capture

def capture_text(console: Console, result) -> None:
    for item in result.files:
        ops = ", ".join(op.describe() for op in item.ops)
        console.print(Text(f"{item.path}: {ops} (pristine text from {item.pristine_from})"),
                      soft_wrap=True, highlight=False)
    console.print(Text(f"wrote {result.path} (vLLM {result.versions or 'any'})", style="green"),
                  soft_wrap=True, highlight=False)
    for path in result.recorded:
        console.print(Text(f"recorded {path} as patched by {result.name}: `patchops rollback "
                           f"{result.name} --patchsets {result.path.parent}` restores the pristine file",
                           style="dim"), soft_wrap=True, highlight=False)


def raw(text: str) -> None:
    """Write text exactly as it is (a patch: rich would re-wrap it and trim trailing spaces)."""
    import sys

    sys.stdout.write(text)
    sys.stdout.flush()


def file_diffs(console: Console, diffs) -> None:
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
                console.print(Text(note, style="dim"), soft_wrap=True, highlight=False)
            colour_diff(console, d.text)
        else:
            raw(header + d.text)
    if not diffs:
        console.print("nothing patched: no file differs from its original")
