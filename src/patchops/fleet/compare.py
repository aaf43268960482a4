"""Say where nodes disagree: vLLM version, patchset state, file hash, RECORD check, lint verdict.

Pure functions over what the nodes reported, so every message names the nodes on each side.
Copies are compared by what they hold, not by path: two hosts may install vLLM in
different folders and still run the same bytes.
"""

from __future__ import annotations

from typing import Dict, Hashable, List, Mapping, Sequence, Tuple, TypeVar

from patchops.fleet.cluster import Node
from patchops.fleet.node import CopyCheck, NodeLint, NodeStatus
from patchops.store.site_store import short

T = TypeVar("T")


def status_disagreements(reports: Mapping[Node, NodeStatus]) -> List[str]:
    """Return one message per way the nodes' copies differ; empty when they all agree."""
    messages, versions = _versions({node: r.copies for node, r in reports.items()})
    names = sorted({s.patchset for r in reports.values() for s in r.states})
    for name in names:
        states = {node: tuple(sorted({s.state for s in r.states if s.patchset == name}))
                  for node, r in reports.items()}
        messages += _differs(f"patchset {name!r} differs between nodes", states,
                             lambda v: "/".join(v) or "absent")
    # A file's hash is only worth comparing between nodes running the same vLLM.
    for version, group in _same_version(reports, versions):
        paths = sorted({path for r in group.values() for c in r.copies for path, _ in c.files})
        for path in paths:
            shas = {node: tuple(sorted({short(sha) if sha else "missing"
                                        for c in r.copies for p, sha in c.files if p == path}))
                    for node, r in group.items()}
            messages += _differs(f"{path} differs between nodes with vLLM {', '.join(version)}",
                                 shas, lambda v: "sha " + ", ".join(v))
    return messages


def verify_disagreements(reports: Mapping[Node, Sequence[CopyCheck]]) -> List[str]:
    """Return one message per file that differs from its RECORD on some nodes and not others."""
    messages, versions = _versions(reports)
    for version, group in _same_version(reports, versions):
        paths = sorted({f[0] for copies in group.values() for c in copies for f in c.findings})
        for path in paths:
            states = {node: tuple(sorted({state for c in copies for p, state, _ in c.findings
                                          if p == path})) or ("as installed",)
                      for node, copies in group.items()}
            messages += _differs(f"{path} differs from its RECORD hash on some nodes with vLLM "
                                 f"{', '.join(version)}", states, "/".join)
    return messages


def lint_disagreements(name: str, results: Mapping[Node, NodeLint]) -> List[str]:
    """Return one message per finding that some nodes report and others do not."""
    seen: Dict[Tuple, List[Node]] = {}
    for node, result in results.items():
        for line, column, severity, code, rule, _ in result.diagnostics:
            seen.setdefault((line, column, code, severity, rule), []).append(node)
    messages = []
    everyone = set(results)
    for (line, column, code, severity, rule), nodes in sorted(seen.items()):
        if set(nodes) != everyone:
            versions = {node: results[node].vllm_version for node in everyone - set(nodes)}
            messages.append(
                f"{name}:{line}:{column}: {severity} [{code} {rule}] on {_names(nodes)} "
                f"but not on {_names(sorted(everyone - set(nodes), key=_order))} "
                f"(vLLM {', '.join(sorted(set(versions.values())))} there)")
    return messages


def _versions(copies_of: Mapping[Node, Sequence]) -> Tuple[List[str], Dict[Node, tuple]]:
    """Return the version-mismatch message (if any) and each node's vLLM versions."""
    versions = {node: tuple(sorted({c.version or "unknown" for c in copies}))
                for node, copies in copies_of.items()}
    return _differs("vLLM version differs between nodes", versions, ", ".join), versions


def _same_version(reports: Mapping[Node, T], versions: Mapping[Node, tuple]
                  ) -> List[Tuple[tuple, Dict[Node, T]]]:
    """Return the nodes grouped by the vLLM versions they run, in a stable order."""
    groups: Dict[tuple, Dict[Node, T]] = {}
    for node, report in reports.items():
        groups.setdefault(versions[node], {})[node] = report
    return sorted(groups.items(), key=lambda item: item[0])


def _differs(what: str, values: Mapping[Node, Hashable], show) -> List[str]:
    """Return [`what: A on n1, n2; B on n3`] when nodes hold different values, else []."""
    groups: Dict[Hashable, List[Node]] = {}
    for node in sorted(values, key=_order):
        groups.setdefault(values[node], []).append(node)
    if len(groups) < 2:
        return []
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), _order(item[1][0])))
    return [f"{what}: " + "; ".join(f"{show(value)} on {_names(nodes)}" for value, nodes in ordered)]


def _names(nodes: Sequence[Node]) -> str:
    return ", ".join(f"node {node.label}" for node in nodes)


def _order(node: Node) -> Tuple[str, str]:
    return (node.address, node.id)

