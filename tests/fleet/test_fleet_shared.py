"""One vLLM copy that every node of a real Ray cluster sees (one machine, or an NFS-mounted
environment), beside each node's own copy: planned once, committed on one node, shown once."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from patchops.cli import app as cli
from patchops.store.site_store import Store
from tests.support import wheelcache

pytestmark = [pytest.mark.ray, pytest.mark.vllm]

NAME = "corex-eager-allreduce"
ARG = "vllm/engine/arg_utils.py"
PATCHED = b"enforce_eager=self.enforce_eager"


def run(cluster, shared, *args):
    return CliRunner().invoke(cli.app, ["fleet", *args, "--address", cluster.address,
                                        "--root", str(shared)])


def test_a_copy_every_node_sees_is_committed_once_and_shown_once(cluster, tmp_path):
    nodes = cluster.reset()
    shared = tmp_path / "shared" / "site-packages"
    wheelcache.copy_site_packages("0.8.5", shared)
    for site in [shared, *(cluster.sites[n] for n in nodes)]:
        wheelcache.hardcode_like_corex(site)
    original = (shared / ARG).read_bytes()

    applied = run(cluster, shared, "apply", NAME, "--yes")
    # Right after the command: the shared copy and every node's own copy are patched.
    assert applied.exit_code == cli.OK, applied.output
    assert PATCHED in (shared / ARG).read_bytes()
    assert all(PATCHED in (cluster.sites[n] / ARG).read_bytes() for n in nodes)
    journal = Store(shared).read_journal()
    assert [r["op"] for r in journal] == ["begin", "done", "commit"], journal
    assert Store(shared).identity() is not None

    shown = run(cluster, shared, "status", NAME, "--json")
    assert shown.exit_code == cli.OK, shown.output
    found = json.loads(shown.output)
    [copy] = [c for c in found["copies"] if c["site_dir"] == str(shared)]
    assert sorted(copy["nodes"]) == sorted(nodes)
    assert copy["store_id"] == Store(shared).identity()
    assert [p["state"] for p in copy["patchsets"]] == ["applied"]
    own = [c for c in found["copies"] if c["site_dir"] != str(shared)]
    assert sorted(c["nodes"][0] for c in own) == sorted(nodes) and all(len(c["nodes"]) == 1 for c in own)

    text = run(cluster, shared, "status", NAME)
    rows = [line for line in text.output.splitlines() if str(shared) in line]
    assert len(rows) == 1 and all(n[:8] in rows[0] for n in nodes), text.output

    rolled = run(cluster, shared, "rollback", NAME)
    assert rolled.exit_code == cli.OK, rolled.output
    assert (shared / ARG).read_bytes() == original

    # Now its store has an id, the plan itself shows the shared copy once. Every node plans it
    # at the same moment; one holding its lock then (held here, so always) stops no other.
    with Store(shared).lock():
        planned = run(cluster, shared, "apply", NAME, "--dry-run")
    assert planned.exit_code == cli.OK, planned.output
    rows = [line for line in planned.output.splitlines() if str(shared) in line]
    assert len(rows) == 1 and all(n[:8] in rows[0] for n in nodes), planned.output
    shutil.rmtree(shared.parent)
