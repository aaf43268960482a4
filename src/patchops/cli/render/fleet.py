"""Turn fleet results into the node x copy x patchset table, reports and JSON (for the CLI only)."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from patchops.fleet.node import NodeFailure
from patchops.cli.output import Line, Output
from patchops.store.site_store import short

STATE_STYLE = {"applied": "green", "satisfied": "green", "not-applied": "yellow",
               "drifted": "bold red", "applies": "yellow", "drift": "bold red"}


def _line(console: Output, text: str, style: str = "") -> None:
    console.print(Line(text, style))


def _table(console: Output, header: Sequence[str], rows: List[Sequence[str]],
           state_col: Optional[int] = None) -> None:
    """Print aligned columns (plain text: stable in logs, pipes and the README)."""
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    _line(console, "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip(), "bold")
    for row in rows:
        line = Line()
        for i, (cell, width) in enumerate(zip(row, widths)):
            last = i == len(row) - 1
            line.append(str(cell) if last else str(cell).ljust(width) + "  ",
                        STATE_STYLE.get(str(cell), "") if i == state_col else "")
        console.print(line)


def _failures(console: Output, failures: Dict) -> None:
    for node, failure in failures.items():
        _line(console, f"node {node.label} ({node.address}): {failure.message}", "bold red")


def _problems(console: Output, title: str, messages: Sequence[str]) -> None:
    if messages:
        _line(console, title, "bold red")
        for message in messages:
            _line(console, f"  {message}", "red")


# ---------------------------------------------------------------- status

def status_text(console: Output, found) -> None:
    """Print one row per copy and patchset (a copy several nodes share once, naming them all),
    with the target files' short hashes."""
    rows = []
    for copy in found.copies:
        hashes = ", ".join(f"{path} {short(sha) if sha else 'missing'}" for path, sha in copy.facts.files)
        for state in copy.states:
            rows.append((",".join(n.label for n in copy.nodes),
                         ",".join(dict.fromkeys(n.address for n in copy.nodes)), state.site_dir,
                         state.version or "unknown", state.patchset, state.state, hashes))
    if rows:
        _table(console, ("NODE", "ADDRESS", "COPY", "VLLM", "PATCHSET", "STATE", "FILES"), rows, 5)
    _failures(console, found.failures)
    _problems(console, "nodes disagree:", found.disagreements)
    if not found.disagreements and not found.failures:
        _line(console, f"{len(found.nodes)} node(s) agree", "dim")


def status_dict(found) -> dict:
    nodes = []
    for node in found.nodes:
        report, failure = found.reports.get(node), found.failures.get(node)
        entry = _node_dict(node, failure)
        if report is not None:
            entry["copies"] = [{
                "site_dir": c.site_dir, "version": c.version, "files": dict(c.files),
                "store_id": c.store_id,
                "patchsets": [{"patchset": s.patchset, "state": s.state, "detail": s.detail}
                              for s in report.states if s.site_dir == c.site_dir],
            } for c in report.copies]
        nodes.append(entry)
    copies = [{"site_dir": c.facts.site_dir, "store_id": c.facts.store_id,
               "nodes": [n.id for n in c.nodes], "version": c.facts.version,
               "patchsets": [{"patchset": s.patchset, "state": s.state} for s in c.states]}
              for c in found.copies]
    return {"nodes": nodes, "copies": copies, "disagreements": list(found.disagreements)}


def _node_dict(node, failure) -> dict:
    return {"node": node.id, "label": node.label, "address": node.address,
            "hostname": node.hostname, "error": failure.message if failure else None}


# ---------------------------------------------------------------- apply and rollback

def plan_text(console: Output, plan) -> None:
    """Print each node's plan: one row per copy and patchset (a shared copy once)."""
    rows = [(",".join(n.label for n in nodes), ",".join(dict.fromkeys(n.address for n in nodes)),
             o.site_dir, o.version or "unknown", o.patchset, o.state, o.detail)
            for nodes, copy in plan.rows() for o in copy.outcomes]
    if rows:
        _table(console, ("NODE", "ADDRESS", "COPY", "VLLM", "PATCHSET", "PLAN", "DETAIL"), rows, 5)
    for node in plan.nodes:
        for note in plan.plans[node].notes if node in plan.plans else ():
            _line(console, f"note: node {node.label}: {note}", "yellow")


def apply_text(console: Output, report) -> None:
    for node, done in report.committed.items():
        for path, backup in zip(done.written, done.backups):
            _line(console, f"node {node.label}: patched {path} (original kept as {backup})")
    for node, undone in report.undone.items():
        if not isinstance(undone, NodeFailure):
            for path in undone.restored:
                _line(console, f"node {node.label}: rolled back {path}", "yellow")
    if report.ok and not any(done.written for done in report.committed.values()):
        _line(console, "nothing to write on any node: every patchset is applied, satisfied or "
                       "not applicable")
    elif report.ok:
        _line(console, f"applied on {len(report.committed)} node(s)", "dim")


def rollback_text(console: Output, report) -> None:
    for node in report.nodes:
        done = report.rolled.get(node)
        if done is None:
            continue
        for path in done.restored:
            _line(console, f"node {node.label}: restored {path}")
        for note in done.notes:
            _line(console, f"note: node {node.label}: {note}", "yellow")
    _failures(console, report.failures)


# ---------------------------------------------------------------- verify

def verify_text(console: Output, found) -> None:
    """Print one row per node and copy: files in RECORD and what differs from it, by state."""
    rows = []
    for node in found.nodes:
        for check in found.reports.get(node, ()):
            counts: Dict[str, int] = {}
            for _, state, _ in check.findings:
                counts[state] = counts.get(state, 0) + 1
            summary = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))
            rows.append((node.label, node.address, check.site_dir, check.version or "unknown",
                         str(check.listed), f"cannot verify: {check.error}" if check.error
                         else summary or "as installed"))
    if rows:
        _table(console, ("NODE", "ADDRESS", "COPY", "VLLM", "IN RECORD", "DIFFERS"), rows)
    _failures(console, found.failures)
    _problems(console, "nodes disagree:", found.disagreements)
    if not found.disagreements and not found.failures:
        _line(console, f"{len(found.nodes)} node(s) agree", "dim")


def verify_dict(found) -> dict:
    return {"nodes": [dict(_node_dict(node, found.failures.get(node)), copies=[{
        "site_dir": c.site_dir, "version": c.version, "listed": c.listed, "error": c.error,
        "differs": c.differs,
        "files": [{"path": p, "state": s, "detail": d} for p, s, d in c.findings],
    } for c in found.reports.get(node, ())]) for node in found.nodes],
        "disagreements": list(found.disagreements)}


# ---------------------------------------------------------------- lint

def lint_text(console: Output, found) -> None:
    """Print each finding once (naming the nodes when not all have it), then a line per node."""
    seen: Dict[tuple, List] = {}
    for node, result in found.results.items():
        for diagnostic in result.diagnostics:
            seen.setdefault(diagnostic, []).append(node)
    for (line, column, severity, code, name, message), nodes in sorted(seen.items()):
        where = "" if len(nodes) == len(found.results) else \
            " (on " + ", ".join(f"node {n.label}" for n in nodes) + " only)"
        console.print(Line.assemble((f"{found.path}:{line}:{column}: ", "bold"),
                                    (f"{severity}:", "bold red" if severity == "error" else "yellow"),
                                    f" {message} ", (f"[{code} {name}]", "dim"), (where, "bold")))
    for node, result in found.results.items():
        errors = sum(d[2] == "error" for d in result.diagnostics)
        _line(console, f"node {node.label} ({node.address}): vLLM {result.vllm_version} "
                       f"({result.facts_origin}): {errors} error(s), "
                       f"{len(result.diagnostics) - errors} other finding(s)", "dim")
    _failures(console, found.failures)
    _problems(console, "verdicts differ between nodes:", found.disagreements)


def lint_dict(found) -> dict:
    return {"file": found.path, "disagreements": list(found.disagreements), "nodes": [
        dict(_node_dict(node, found.failures.get(node)),
             vllm_version=found.results[node].vllm_version if node in found.results else None,
             diagnostics=[dict(zip(("line", "column", "severity", "code", "name", "message"), d))
                          for d in found.results[node].diagnostics] if node in found.results else [])
        for node in sorted({*found.results, *found.failures}, key=lambda n: (n.address, n.id))]}
