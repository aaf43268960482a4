"""A real Ray cluster of several nodes on this machine, each node with its own vLLM copy.

All nodes share this filesystem, so each is started (as `ray start` would be on its own host)
with its own PATCHOPS_ROOTS naming its own site-packages; its Ray workers inherit it, and
patchops on that node finds that copy and no other, as on a real multi-host cluster.

Every node also has tests/fleet/hold/ on its PYTHONPATH: a sitecustomize that, once the test
arms a node, freezes that node's patchops right after its first file swap, so the test can
kill the node in the middle of a transaction.

Where Ray cannot start here, the fleet tests are skipped, and the reason is printed at the end
of the run.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from tests.support import wheelcache

HOLD_DIR = Path(__file__).parent / "hold"
NODES = 3
_skip_reason: List[str] = []


class LocalFleet:
    """A ray.cluster_utils.Cluster whose nodes each own a site-packages folder."""

    def __init__(self, base: Path):
        import ray
        from ray.cluster_utils import Cluster

        self.ray = ray
        self.base = base
        # Notice a killed node within seconds, not the default half minute.
        self.cluster = Cluster(initialize_head=False, head_node_args={"_system_config": {
            "health_check_initial_delay_ms": 0, "health_check_period_ms": 500,
            "health_check_failure_threshold": 2}})
        self.handles: Dict[str, object] = {}
        self.sites: Dict[str, Path] = {}
        self.arms: Dict[str, Path] = {}
        self.add_node()
        ray.init(address=self.cluster.address, log_to_driver=False, logging_level="ERROR")

    @property
    def address(self) -> str:
        return self.cluster.address

    def add_node(self) -> str:
        """Start a node whose copies live in its own folder; return its node id."""
        index = len(self.sites)
        folder = self.base / f"node{index}"
        site = folder / "site-packages"
        site.mkdir(parents=True)
        env = {"PATCHOPS_ROOTS": str(site), "PATCHOPS_TEST_HOLD": str(folder / "hold"),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(HOLD_DIR), os.environ.get("PYTHONPATH")]))}
        saved = {key: os.environ.get(key) for key in env}
        os.environ.update(env)
        try:
            handle = self.cluster.add_node(num_cpus=1, include_dashboard=False)
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        self.handles[handle.node_id] = handle
        self.sites[handle.node_id] = site
        self.arms[handle.node_id] = folder / "hold"
        self.cluster.wait_for_nodes()
        return handle.node_id

    def alive(self) -> List[str]:
        return [n["NodeID"] for n in self.ray.nodes() if n["Alive"]]

    def reset(self, versions: Optional[Dict[int, str]] = None, default: str = "0.8.5") -> List[str]:
        """Give NODES alive nodes a fresh copy each (`versions`: node index -> version)."""
        while len(self.alive()) < NODES:
            self.add_node()
        nodes = sorted(self.alive(), key=list(self.sites).index)[:NODES]
        for index, node in enumerate(nodes):
            self.install(node, (versions or {}).get(index, default))
            self.arms[node].unlink(missing_ok=True)
        return nodes

    def install(self, node: str, version: str) -> Path:
        site = self.sites[node]
        shutil.rmtree(site)
        wheelcache.copy_site_packages(version, site)
        return site

    def kill(self, node: str) -> None:
        """Kill a node as a power cut would: its raylet and every worker, no clean-up."""
        self.cluster.remove_node(self.handles.pop(node), allow_graceful=False)
        deadline = time.monotonic() + 60
        while node in self.alive():
            if time.monotonic() > deadline:
                raise AssertionError(f"Ray still lists node {node} as alive a minute after its death")
            time.sleep(0.2)

    def shutdown(self) -> None:
        self.ray.shutdown()
        self.cluster.shutdown()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """Return a LocalFleet for one test module, stopped after it, so the rest of the suite
    does not share two cores with idle raylets; skip (saying why) if Ray cannot start."""
    if _skip_reason:
        pytest.skip(_skip_reason[0])
    try:
        import ray  # noqa: F401
    except ImportError as error:
        _skip_reason.append(f"Ray is not installed for this Python ({error}); "
                            "pip install -e '.[test]' installs it where Ray ships wheels")
        pytest.skip(_skip_reason[0])
    try:
        fleet = LocalFleet(tmp_path_factory.mktemp("fleet"))
        for _ in range(NODES - 1):
            fleet.add_node()
    except Exception as error:  # Ray's own start-up: no shared memory, no ports, ...
        _skip_reason.append(f"a local Ray cluster could not start here ({type(error).__name__}: "
                            f"{error})")
        pytest.skip(_skip_reason[0])
    yield fleet
    fleet.shutdown()


def pytest_terminal_summary(terminalreporter):
    if _skip_reason:
        terminalreporter.write_line(f"fleet tests SKIPPED: {_skip_reason[0]}", yellow=True, bold=True)
