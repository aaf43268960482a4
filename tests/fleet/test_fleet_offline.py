"""The fleet without a cluster: the install hint, an unreachable address, the comparisons."""

from __future__ import annotations

import re
import socket
import sys
from pathlib import Path

from typer.testing import CliRunner

from patchops.cli import app as cli
from patchops.fleet import cluster
from patchops.fleet.cluster import Node
from patchops.fleet.compare import lint_disagreements, status_disagreements
from patchops.fleet.node import CopyFacts, NodeLint, NodeStatus, PatchState

ROOT = Path(__file__).resolve().parents[2]
A, B, C = (Node(f"{c * 8}{'0' * 48}", "10.0.0.1", "h") for c in "abc")
SHA1, SHA2 = "1" * 64, "2" * 64


def test_without_ray_every_fleet_command_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)   # `import ray` raises ImportError
    config = tmp_path / "serve.yaml"
    config.write_text("model: m\n")
    project = re.search(r'^name = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    for args in (["status"], ["apply", "x", "--yes"], ["rollback", "--all"], ["lint", str(config)]):
        shown = CliRunner().invoke(cli.app, ["fleet", *args])
        assert shown.exit_code == cli.USAGE_OR_INPUT_ERROR, (args, shown.output)
        assert f"pip install '{project}[ray]'" in shown.output


def test_an_address_nobody_listens_on_fails_fast_with_the_address(monkeypatch):
    monkeypatch.setattr(cluster._ray(), "is_initialized", lambda: False)
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    shown = CliRunner().invoke(cli.app, ["fleet", "status", "--address", f"127.0.0.1:{port}"])
    assert shown.exit_code == cli.USAGE_OR_INPUT_ERROR
    assert f"no Ray cluster answers at 127.0.0.1:{port}" in shown.output


def status(version="0.8.5", state="applied", sha=SHA1):
    return NodeStatus((CopyFacts("/site", version, (("vllm/x.py", sha),)),),
                      (PatchState("/site", version, "p", state, ""),))


def test_agreeing_nodes_give_no_message_even_from_different_folders():
    moved = NodeStatus((CopyFacts("/elsewhere", "0.8.5", (("vllm/x.py", SHA1),)),),
                       (PatchState("/elsewhere", "0.8.5", "p", "applied", ""),))
    assert status_disagreements({A: status(), B: status(), C: moved}) == []


def test_the_odd_node_is_named_last_for_version_state_and_hash():
    assert status_disagreements({A: status(), B: status(), C: status(state="drifted")}) == [
        "patchset 'p' differs between nodes: applied on node aaaaaaaa, node bbbbbbbb; "
        "drifted on node cccccccc"]
    assert status_disagreements({A: status(sha=SHA2), B: status(), C: status()}) == [
        "vllm/x.py differs between nodes with vLLM 0.8.5: sha 111111111111 on node bbbbbbbb, "
        "node cccccccc; sha 222222222222 on node aaaaaaaa"]


def test_hashes_are_compared_only_between_nodes_with_the_same_vllm():
    found = status_disagreements({A: status(), B: status(), C: status("0.9.2", sha=SHA2)})
    assert found == ["vLLM version differs between nodes: 0.8.5 on node aaaaaaaa, node bbbbbbbb; "
                     "0.9.2 on node cccccccc"]


def test_a_finding_on_some_nodes_only_is_a_lint_disagreement():
    finding = (2, 1, "error", "PO301", "multistep-removed", "...")
    same = {A: NodeLint("0.11.0", "x", (finding,)), B: NodeLint("0.11.0", "x", (finding,))}
    assert lint_disagreements("s.yaml", same) == []
    differ = {A: same[A], B: same[B], C: NodeLint("0.8.5", "x", ())}
    assert lint_disagreements("s.yaml", differ) == [
        "s.yaml:2:1: error [PO301 multistep-removed] on node aaaaaaaa, node bbbbbbbb "
        "but not on node cccccccc (vLLM 0.8.5 there)"]
