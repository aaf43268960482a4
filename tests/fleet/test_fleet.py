"""The fleet commands on a real three-node Ray cluster, each node with its own real vLLM copy.

Runs in file order on one cluster: the last test kills a node.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from patchops import api, fleet
from patchops.cli import app as cli
from tests.support import wheelcache
from patchops.store.site_store import Store, sha256

pytestmark = [pytest.mark.ray, pytest.mark.vllm]

ROOT = Path(__file__).resolve().parents[2]
NAME = "corex-eager-allreduce"
ARG = "vllm/engine/arg_utils.py"
PATCHED = b"enforce_eager=self.enforce_eager"
HARDCODED = b"enforce_eager=True,"


def corex_nodes(cluster, versions=None):
    """Give each node a fresh copy hardcoded like the CoreX fork; return node ids, originals."""
    nodes = cluster.reset(versions)
    for node in nodes:
        wheelcache.hardcode_like_corex(cluster.sites[node])
    return nodes, {node: arg_utils(cluster, node).read_bytes() for node in nodes}


def arg_utils(cluster, node) -> Path:
    return cluster.sites[node] / ARG


def label(node: str) -> str:
    return node[:8]


def run(cluster, *args):
    return CliRunner().invoke(cli.app, ["fleet", *args, "--address", cluster.address])


def by_node(result):
    return {node.id: value for node, value in result.items()}


def test_consistent_nodes_agree_and_each_reports_its_own_copy(cluster):
    nodes, _ = corex_nodes(cluster)
    found = fleet.status([NAME], address=cluster.address)
    assert sorted(n.id for n in found.nodes) == sorted(nodes)
    assert not found.failures and found.disagreements == ()
    for node, report in by_node(found.reports).items():
        [copy] = report.copies
        assert copy.site_dir == str(cluster.sites[node])
        assert copy.version == "0.8.5"
        assert dict(copy.files) == {ARG: sha256(arg_utils(cluster, node).read_bytes())}
        assert [(s.patchset, s.state) for s in report.states] == [(NAME, "not-applied")]

    shown = run(cluster, "status", NAME)
    assert shown.exit_code == cli.OK, shown.output
    rows = [line.split() for line in shown.output.splitlines() if line[:8] in map(label, nodes)]
    assert sorted(row[0] for row in rows) == sorted(map(label, nodes))
    assert all(row[3:6] == ["0.8.5", NAME, "not-applied"] for row in rows)
    assert "3 node(s) agree" in shown.output

    # A fresh process joins the cluster by its address, as a user's shell would.
    done = subprocess.run([sys.executable, "-m", "patchops", "fleet", "status", NAME, "--json",
                           "--address", cluster.address], capture_output=True, text=True, timeout=120)
    assert done.returncode == cli.OK, done.stderr
    as_json = json.loads(done.stdout)
    assert {n["node"] for n in as_json["nodes"]} == set(nodes)
    assert {c["site_dir"] for n in as_json["nodes"] for c in n["copies"]} == \
        {str(cluster.sites[n]) for n in nodes}
    assert as_json["disagreements"] == []


def test_a_node_with_another_vllm_is_named(cluster):
    nodes, _ = corex_nodes(cluster, {2: "0.9.2"})
    found = fleet.status([NAME], address=cluster.address)
    odd = label(nodes[2])
    same = [n.label for n in found.nodes if n.label != odd]   # listed in the fleet's node order
    assert found.disagreements == (
        f"vLLM version differs between nodes: 0.8.5 on node {same[0]}, node {same[1]}; "
        f"0.9.2 on node {odd}",)
    shown = run(cluster, "status", NAME)
    assert shown.exit_code == cli.NODES_DISAGREE
    assert f"0.9.2 on node {odd}" in shown.output


def test_a_hand_edit_on_one_node_is_named_by_its_hash(cluster):
    nodes, originals = corex_nodes(cluster)
    edited = nodes[1]
    arg_utils(cluster, edited).write_bytes(originals[edited] + b"# tuned by hand\n")
    found = fleet.status([NAME], address=cluster.address)
    [message] = found.disagreements
    assert message.startswith(f"{ARG} differs between nodes with vLLM 0.8.5: ")
    assert message.endswith(f"; sha {sha256(arg_utils(cluster, edited).read_bytes())[:12]} on "
                            f"node {label(edited)}")
    assert f"sha {sha256(originals[nodes[0]])[:12]} on " in message
    assert run(cluster, "status", NAME).exit_code == cli.NODES_DISAGREE


def test_drift_on_one_node_stops_the_apply_everywhere(cluster):
    nodes, originals = corex_nodes(cluster)
    drifted = nodes[2]
    arg_utils(cluster, drifted).write_bytes(originals[drifted].replace(HARDCODED, b"enforce_eager=bool(1),"))
    before = {node: arg_utils(cluster, node).read_bytes() for node in nodes}

    shown = run(cluster, "apply", NAME, "--yes")
    assert shown.exit_code == cli.DRIFTED
    assert f"node {label(drifted)}: " in shown.output
    assert "Nothing was written on any node" in shown.output
    for node in nodes:
        assert arg_utils(cluster, node).read_bytes() == before[node]
        assert not Store(cluster.sites[node]).exists()


def test_apply_on_every_node_then_a_late_node_shows_not_patched_then_rollback(cluster):
    nodes, originals = corex_nodes(cluster)
    shown = run(cluster, "apply", NAME, "--yes")
    assert shown.exit_code == cli.OK, shown.output
    assert "applied on 3 node(s)" in shown.output
    for node in nodes:
        data = arg_utils(cluster, node).read_bytes()
        assert PATCHED in data and HARDCODED not in data
        assert Store(cluster.sites[node]).get_object(sha256(originals[node])) == originals[node]
    found = fleet.status([NAME], address=cluster.address)
    assert found.disagreements == ()
    assert {s.state for r in found.reports.values() for s in r.states} == {"applied"}
    patched = {node: arg_utils(cluster, node).stat().st_mtime_ns for node in nodes}
    again = run(cluster, "apply", NAME, "--yes")
    assert again.exit_code == cli.OK and "nothing to write on any node" in again.output
    assert {node: arg_utils(cluster, node).stat().st_mtime_ns for node in nodes} == patched

    late = cluster.add_node()
    try:
        cluster.install(late, "0.8.5")
        wheelcache.hardcode_like_corex(cluster.sites[late])
        found = fleet.status([NAME], address=cluster.address)
        late_states = {s.state for s in by_node(found.reports)[late].states}
        assert late_states == {"not-applied"}
        assert any(m.startswith(f"patchset {NAME!r} differs between nodes: applied on ")
                   and m.endswith(f"; not-applied on node {label(late)}") for m in found.disagreements)

        shown = run(cluster, "rollback", "--all")
        assert shown.exit_code == cli.OK, shown.output
        assert f"note: node {label(late)}: nothing to roll back" in shown.output
        for node in nodes:
            assert arg_utils(cluster, node).read_bytes() == originals[node]
    finally:
        cluster.kill(late)


def test_rollback_refused_by_a_hand_edited_node_is_named_and_others_restored(cluster):
    nodes, originals = corex_nodes(cluster)
    report = fleet.commit_apply(fleet.plan_apply([NAME], address=cluster.address))
    assert report.ok and sorted(n.id for n in report.committed) == sorted(nodes)
    edited = nodes[0]
    patched = arg_utils(cluster, edited).read_bytes()
    arg_utils(cluster, edited).write_bytes(patched + b"# hand edit\n")

    found = fleet.status([NAME], address=cluster.address)
    assert any(m.endswith(f"drifted on node {label(edited)}") for m in found.disagreements)
    shown = run(cluster, "rollback", NAME)
    assert shown.exit_code == cli.NODE_FAILED
    assert f"node {label(edited)} " in shown.output and "changed since patchops wrote it" in shown.output
    assert arg_utils(cluster, edited).read_bytes() == patched + b"# hand edit\n"
    for node in nodes[1:]:
        assert arg_utils(cluster, node).read_bytes() == originals[node]


def test_the_drivers_patchsets_are_sent_to_every_node(cluster, tmp_path):
    nodes, _ = corex_nodes(cluster)
    folder = tmp_path / "mine"
    folder.mkdir()
    shipped = (ROOT / "patchsets" / f"{NAME}.yaml").read_text()
    (folder / "my-eager.yaml").write_text(shipped.replace(f"name: {NAME}", "name: my-eager", 1))
    where = fleet.Where(patchsets=fleet.driver_patchsets([folder]))
    shutil.rmtree(folder)   # only the driver ever had it: the nodes must get it sent along
    found = fleet.status(["my-eager"], address=cluster.address, where=where)
    assert not found.failures
    assert {n: [(s.patchset, s.state) for s in r.states] for n, r in by_node(found.reports).items()} \
        == {node: [("my-eager", "not-applied")] for node in nodes}
    without = fleet.status(["my-eager"], address=cluster.address, where=fleet.Where())
    assert sorted(n.id for n in without.failures) == sorted(nodes)
    assert 'unknown patchset "my-eager"' in next(iter(without.failures.values())).message


def test_verify_names_the_node_whose_file_differs_from_record(cluster):
    nodes = cluster.reset()
    found = fleet.verify(address=cluster.address)
    assert not found.failures and found.disagreements == ()
    # The test copies hold only vLLM's .py files: every node misses the same compiled ones.
    missing = {n: {p for p, state, _ in c.findings if state == "missing"}
               for n, [c] in by_node(found.reports).items()}
    assert len({frozenset(m) for m in missing.values()}) == 1 and missing[nodes[0]]

    edited = nodes[1]
    path = arg_utils(cluster, edited)
    path.write_bytes(path.read_bytes() + b"# tuned by hand\n")
    found = fleet.verify(address=cluster.address)
    same = [n.label for n in found.nodes if n.id != edited]
    assert found.disagreements == (
        f"{ARG} differs from its RECORD hash on some nodes with vLLM 0.8.5: as installed on "
        f"node {same[0]}, node {same[1]}; modified on node {label(edited)}",)
    shown = run(cluster, "verify")
    assert shown.exit_code == cli.NODES_DISAGREE
    assert f"modified on node {label(edited)}" in shown.output


def test_lint_names_the_nodes_where_verdicts_differ(cluster, tmp_path):
    nodes = cluster.reset({2: "0.11.0"})
    config = tmp_path / "serve.yaml"
    config.write_text("model: m\nnum-scheduler-steps: 8\n")
    found = fleet.lint(config, address=cluster.address)
    assert not found.failures
    versions = {n: r.vllm_version for n, r in by_node(found.results).items()}
    assert versions == {nodes[0]: "0.8.5", nodes[1]: "0.8.5", nodes[2]: "0.11.0"}
    codes = {n: [d[3] for d in r.diagnostics] for n, r in by_node(found.results).items()}
    assert codes == {nodes[0]: ["PO302"], nodes[1]: ["PO302"], nodes[2]: ["PO301"]}
    assert len(found.disagreements) == 2
    [removed] = [m for m in found.disagreements if "PO301" in m]
    assert removed.startswith(f"{config}:2:1: error [PO301 multistep-removed] on node {label(nodes[2])} but not on ")
    assert removed.endswith("(vLLM 0.8.5 there)")

    shown = run(cluster, "lint", str(config))
    assert shown.exit_code == cli.NODES_DISAGREE
    assert f"[PO301 multistep-removed] (on node {label(nodes[2])} only)" in shown.output


def test_same_verdict_everywhere_is_no_disagreement(cluster, tmp_path):
    cluster.reset()
    config = tmp_path / "serve.yaml"
    config.write_text("model: m\nnum-scheduler-steps: 8\n")
    found = fleet.lint(config, address=cluster.address)
    assert found.disagreements == () and found.errors == 0
    assert run(cluster, "lint", str(config)).exit_code == cli.OK


def test_a_node_killed_mid_apply_leaves_every_node_original_or_patched(cluster):
    nodes, originals = corex_nodes(cluster)
    victim = nodes[1]
    plan = fleet.plan_apply([NAME], address=cluster.address)
    assert plan.problems == () and plan.changes == 3
    arm = cluster.arms[victim]
    arm.write_text("hold after the first swap")
    killed = []

    def kill_when_held():
        held = Path(str(arm) + ".held")
        deadline = time.monotonic() + 120
        while not held.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        pid = int(held.read_text())
        killed.append(arg_utils(cluster, victim).read_bytes())   # mid-transaction: swapped
        cluster.kill(victim)
        try:
            os.kill(pid, signal.SIGKILL)   # the host is gone: its worker too
        except ProcessLookupError:
            pass

    killer = threading.Thread(target=kill_when_held)
    killer.start()
    report = fleet.commit_apply(plan, timeout=120)
    killer.join()

    assert killed and PATCHED in killed[0], "the victim was not stopped mid-transaction"
    assert not report.ok
    assert list(by_node(report.failures)) == [victim] and report.failures[next(iter(report.failures))].died
    others = [n for n in nodes if n != victim]
    assert sorted(by_node(report.committed)) == sorted(others)
    assert sorted(by_node(report.undone)) == sorted(others)
    message = report.failure_message()
    assert f"node {label(victim)} failed during the commit: the node or its Ray worker died" in message
    assert "rolled back the nodes that had committed (" in message
    for node in others:
        assert label(node) in message.split("rolled back the nodes that had committed")[1]
        assert arg_utils(cluster, node).read_bytes() == originals[node]
        store = Store(cluster.sites[node])
        assert store.get_object(sha256(originals[node])) == originals[node]

    # The victim's disk, as its next patchops finds it: the journal undoes the open transaction.
    site = cluster.sites[victim]
    assert Store(site).get_object(sha256(originals[victim])) == originals[victim]
    rows = api.status([NAME], sites=[site])
    assert [row.state for row in rows] == ["not-applied"]
    assert arg_utils(cluster, victim).read_bytes() == originals[victim]
