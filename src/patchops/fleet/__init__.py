"""Run the same patchops call on every node of a Ray cluster and compare what they say.

The library API of `patchops fleet ...`: plain dataclasses back, nothing printed. Ray is an
optional extra, imported only when one of these functions runs (see `cluster`). Each node
works on the copies it sees (`node`); a copy several nodes see (a shared filesystem) is known
by its store's id and written by one of them. The driver compares (`compare`) and, for
apply, makes the fleet all-or-none: every node plans first, then every node commits, and if
one fails or dies the nodes that committed are rolled back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

from patchops.core.errors import DriftError
from patchops.fleet import node as on_node
from patchops.fleet.cluster import DEFAULT_TIMEOUT, FleetError, Node, alive_nodes, connect, on_each
from patchops.fleet.compare import lint_disagreements, status_disagreements, verify_disagreements
from patchops.fleet.node import (CopyCheck, CopyFacts, NodeCommit, NodeFailure, NodeLint, NodePlan,
                                 NodeRollback, NodeStatus, PatchState, Where, driver_patchsets)

__all__ = ["FleetError", "Node", "Where", "driver_patchsets", "status", "plan_apply", "commit_apply", "rollback",
           "verify", "lint", "FleetStatus", "FleetCopy", "FleetPlan", "FleetApplyReport", "FleetRollbackReport",
           "FleetVerify", "FleetLint"]


@dataclass(frozen=True)
class FleetStatus:
    """Every node's copies and patchset states, and where the nodes disagree."""

    nodes: Tuple[Node, ...]
    reports: Dict[Node, NodeStatus]
    failures: Dict[Node, NodeFailure]
    disagreements: Tuple[str, ...]

    @property
    def drifted(self) -> bool:
        return any(s.state == "drifted" for r in self.reports.values() for s in r.states)

    @property
    def copies(self) -> Tuple["FleetCopy", ...]:
        """Return each copy once, with every node that sees it (by store id), in node order."""
        groups: Dict[object, List[Tuple[Node, CopyFacts]]] = {}
        for node in self.nodes:
            for facts in self.reports[node].copies if node in self.reports else ():
                groups.setdefault(facts.store_id or (node, facts.site_dir), []).append((node, facts))
        return tuple(FleetCopy(tuple(n for n, _ in seen), seen[0][1], tuple(
            s for s in self.reports[seen[0][0]].states if s.site_dir == seen[0][1].site_dir))
            for seen in groups.values())


@dataclass(frozen=True)
class FleetCopy:
    """One copy and the nodes that see it (several when they share its filesystem)."""

    nodes: Tuple[Node, ...]
    facts: CopyFacts               # as the first of them reported it
    states: Tuple[PatchState, ...]


def status(names: Sequence[str] = (), *, address: str = "auto", where: Optional[Where] = None,
           timeout: float = DEFAULT_TIMEOUT) -> FleetStatus:
    """Ask every alive node for `patchops status` of `names` (default: every known patchset).

    `where` says how nodes find their copies; by default each node uses the patchsets this
    machine sees (shipped, $PATCHOPS_PATCHSETS), sent along, as the other calls do.
    """
    where = where or Where(patchsets=driver_patchsets())
    connect(address)
    nodes = alive_nodes()
    reports, failures = _split(on_each(on_node.status, {n: (tuple(names), where) for n in nodes},
                                       timeout))
    return FleetStatus(nodes, reports, failures, tuple(status_disagreements(reports)))


@dataclass(frozen=True)
class FleetPlan:
    """Every node's plan; nothing has been written anywhere."""

    names: Tuple[str, ...]
    where: Where
    force: bool
    nodes: Tuple[Node, ...]
    plans: Dict[Node, NodePlan]
    failures: Dict[Node, NodeFailure]

    @property
    def problems(self) -> Tuple[str, ...]:
        """Return why the fleet cannot apply, node by node (drift, refusals, silent nodes)."""
        found = [f"node {n.label}: {p}" for n in self.nodes if n in self.plans
                 for p in self.plans[n].problems]
        return tuple(found + [f"node {n.label}: {f.message}" for n, f in self.failures.items()])

    @property
    def changes(self) -> int:
        """Return how many files the commit writes, a copy several nodes share counted once."""
        return sum(len(p.changes) for _, p in self.rows() if p.changes)

    def rows(self) -> Tuple[Tuple[Tuple[Node, ...], NodePlan], ...]:
        """Return each copy's plan once, with the nodes that see it, in node order."""
        groups: Dict[object, Tuple[List[Node], str, NodePlan]] = {}
        for node in self.nodes:
            plan = self.plans.get(node)
            for site, store_id in plan.store_ids if plan else ():
                groups.setdefault(store_id or (node, site), ([], site, plan))[0].append(node)
        return tuple((tuple(nodes), _only(plan, site)) for nodes, site, plan in groups.values())

    def problem_message(self) -> str:
        return ("cannot apply on the fleet: " + "; ".join(p.rstrip(".") for p in self.problems)
                + ". Nothing was written on any node; `patchops fleet status` shows each node")


def plan_apply(names: Sequence[str], *, address: str = "auto", where: Optional[Where] = None,
               force: bool = False, timeout: float = DEFAULT_TIMEOUT) -> FleetPlan:
    """Plan applying `names` on every alive node; nothing is written."""
    where = where or Where(patchsets=driver_patchsets())
    connect(address)
    nodes = alive_nodes()
    wanted = tuple(dict.fromkeys(names))
    plans, failures = _split(on_each(on_node.plan, {n: (wanted, where, force) for n in nodes},
                                     timeout))
    return FleetPlan(wanted, where, force, nodes, plans, failures)


@dataclass(frozen=True)
class FleetApplyReport:
    """What the commit did: every node committed, or the ones that did were rolled back."""

    committed: Dict[Node, NodeCommit]
    failures: Dict[Node, NodeFailure]
    undone: Dict[Node, Union[NodeRollback, NodeFailure]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failures

    def failure_message(self) -> str:
        """Return which node failed and why, and what became of the others, as one paragraph."""
        parts = []
        for node, failure in self.failures.items():
            if failure.died:
                parts.append(f"node {node.label} failed during the commit: {failure.message}. Its "
                             f"copies are original or fully patched, with backups intact: the "
                             f"next patchops command there finishes or undoes its transaction "
                             f"from the journal; once it is back, `patchops fleet status` shows "
                             f"which and `patchops fleet rollback` undoes it")
            else:
                parts.append(f"node {node.label} refused the commit: {failure.message}")
        back = [n for n, r in self.undone.items() if isinstance(r, NodeRollback)]
        stuck = {n: r for n, r in self.undone.items() if isinstance(r, NodeFailure)}
        if back:
            parts.append("rolled back the nodes that had committed (" +
                         ", ".join(f"node {n.label}" for n in back) + "): their files are original again")
        for n, failure in stuck.items():
            parts.append(f"could not roll back node {n.label} ({failure.message}): its files stay "
                         f"fully patched with backups; run `patchops fleet rollback`")
        if not back and not stuck:
            parts.append("no other node had written anything")
        return "apply failed on the fleet: " + "; ".join(p.rstrip(".") for p in parts)


def commit_apply(plan: FleetPlan, timeout: float = DEFAULT_TIMEOUT) -> FleetApplyReport:
    """Commit a clean plan on every planned node; if any fails, roll back those that committed.

    A copy several nodes see (a shared filesystem) is committed by the first of them only:
    each node first claims an id for the stores it would write, and copies with the same id
    are one copy.
    """
    if plan.problems:
        raise DriftError(plan.problem_message())
    claims = {n: (plan.plans[n].writes,) for n in plan.nodes if plan.plans[n].writes}
    claimed, failures = _split(on_each(on_node.claim, claims, timeout)) if claims else ({}, {})
    if failures:
        return FleetApplyReport({}, failures)
    committers = _committers(plan.nodes, claimed)
    calls = {}
    for node in plan.nodes:
        only = tuple(site for site, _ in claimed.get(node, ()) if committers[(node, site)] is node)
        changes = tuple(c for c in plan.plans[node].changes
                        if any(c[0].startswith(site.rstrip("/") + "/") for site in only))
        if only:
            calls[node] = (plan.names, plan.where, plan.force, changes, only)
    committed, failures = _split(on_each(on_node.commit, calls, timeout)) if calls else ({}, {})
    if not failures:
        return FleetApplyReport(committed, {})
    undo = {n: (done, plan.where) for n, done in committed.items() if done.applied}
    return FleetApplyReport(committed, failures, dict(on_each(on_node.undo, undo, timeout)) if undo else {})


def _only(plan: NodePlan, site: str) -> NodePlan:
    """Return the part of a node's plan that concerns the copy in `site`."""
    inside = site.rstrip("/") + "/"
    return NodePlan(tuple(o for o in plan.outcomes if o.site_dir == site),
                    tuple(c for c in plan.changes if c[0].startswith(inside)), plan.problems,
                    plan.notes, tuple(w for w in plan.writes if w == site),
                    tuple(i for i in plan.store_ids if i[0] == site))


def _committers(nodes: Sequence[Node], claimed: Mapping[Node, Sequence[Tuple[str, str]]]
                ) -> Dict[Tuple[Node, str], Node]:
    """Return, per (node, site dir), the node that commits that copy: the first that sees it."""
    first: Dict[str, Node] = {}
    for node in nodes:
        for _, store_id in claimed.get(node, ()):
            first.setdefault(store_id, node)
    return {(node, site): first[store_id] for node in nodes
            for site, store_id in claimed.get(node, ())}


@dataclass(frozen=True)
class FleetRollbackReport:
    nodes: Tuple[Node, ...]
    rolled: Dict[Node, NodeRollback]
    failures: Dict[Node, NodeFailure]


def rollback(names: Optional[Sequence[str]] = None, *, address: str = "auto",
             where: Optional[Where] = None, force: bool = False,
             timeout: float = DEFAULT_TIMEOUT) -> FleetRollbackReport:
    """Roll back `names` (None: every patchset) on every alive node; refusing nodes are named.

    Not all-or-none like apply: returning files to their originals is the safe direction, and
    a node that refuses (a hand edit) wrote nothing.
    """
    where = where or Where(patchsets=driver_patchsets())
    connect(address)
    nodes = alive_nodes()
    wanted = None if names is None else tuple(names)
    seen, failures = _split(on_each(on_node.copies, {n: (where,) for n in nodes}, timeout))
    ids = {n: tuple((site, i) for site, i in found if i) for n, found in seen.items()}
    committers = _committers(nodes, ids)
    calls = {n: (wanted, where, force, tuple(site for site, _ in ids[n] if committers[(n, site)] is not n))
             for n in seen}
    rolled, refused = _split(on_each(on_node.rollback, calls, timeout))
    return FleetRollbackReport(nodes, rolled, {**failures, **refused})


@dataclass(frozen=True)
class FleetVerify:
    """Every node's copies checked against their RECORD, and where the nodes disagree."""

    nodes: Tuple[Node, ...]
    reports: Dict[Node, Tuple[CopyCheck, ...]]
    failures: Dict[Node, NodeFailure]
    disagreements: Tuple[str, ...]

    @property
    def differs(self) -> bool:
        return any(c.differs for copies in self.reports.values() for c in copies)

    @property
    def unverified(self) -> bool:
        return any(c.error for copies in self.reports.values() for c in copies)


def verify(*, address: str = "auto", where: Optional[Where] = None,
           timeout: float = DEFAULT_TIMEOUT) -> FleetVerify:
    """Run `patchops verify` (every file against pip's RECORD) on every alive node."""
    where = where or Where()
    connect(address)
    nodes = alive_nodes()
    reports, failures = _split(on_each(on_node.verify, {n: (where,) for n in nodes}, timeout))
    return FleetVerify(nodes, reports, failures, tuple(verify_disagreements(reports)))


@dataclass(frozen=True)
class FleetLint:
    """One config linted against every node's copy."""

    path: str
    results: Dict[Node, NodeLint]
    failures: Dict[Node, NodeFailure]
    disagreements: Tuple[str, ...]

    @property
    def errors(self) -> int:
        return sum(d[2] == "error" for r in self.results.values() for d in r.diagnostics)


def lint(path: Path, *, address: str = "auto", where: Optional[Where] = None, select: Sequence[str] = (),
         ignore: Sequence[str] = (), timeout: float = DEFAULT_TIMEOUT) -> FleetLint:
    """Lint `path` (read here, sent to each node) against the copy each node would import."""
    text = Path(path).read_text(encoding="utf-8")
    where = where or Where()
    connect(address)
    nodes = alive_nodes()
    calls = {n: (str(path), text, where, tuple(select), tuple(ignore)) for n in nodes}
    results, failures = _split(on_each(on_node.lint, calls, timeout))
    return FleetLint(str(path), results, failures, tuple(lint_disagreements(str(path), results)))


def _split(results: Mapping[Node, object]) -> Tuple[Dict[Node, object], Dict[Node, NodeFailure]]:
    ok = {n: r for n, r in results.items() if not isinstance(r, NodeFailure)}
    return ok, {n: r for n, r in results.items() if isinstance(r, NodeFailure)}
