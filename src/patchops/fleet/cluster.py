"""Ray, and only here: connect, list the alive nodes, run one task pinned to each node.

vLLM's own multi-node runtime is Ray, so the fleet uses it rather than ssh loops: the task
runs in a Ray worker on the node, the interpreter and environment vLLM's workers get there.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Dict, Mapping, Sequence, Tuple

from patchops.core.errors import PatchopsError, UsageError
from patchops.fleet.node import NodeFailure

# The distribution name users install (pyproject's [project] name); a test keeps them equal.
DISTRIBUTION = "vllm-patchops"
INSTALL_HINT = (f"the fleet commands need Ray, on this machine and on every node: "
                f"pip install '{DISTRIBUTION}[ray]'")
DEFAULT_TIMEOUT = 300.0


class FleetError(PatchopsError):
    """The cluster could not be reached, or the fleet cannot act as one."""


@dataclass(frozen=True)
class Node:
    """One alive Ray node."""

    id: str            # Ray's node id (hex)
    address: str       # the node manager's IP
    hostname: str

    @property
    def label(self) -> str:
        """Return the short id messages and tables name the node by (Ray's id prefix)."""
        return self.id[:8]


def _ray():
    try:
        import ray
    except ImportError:
        raise UsageError(INSTALL_HINT) from None
    return ray


def connect(address: str) -> None:
    """Join the Ray cluster at `address` ("auto": the one running here), once per process."""
    ray = _ray()
    if ray.is_initialized():
        return
    _probe(address)
    try:
        ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as error:
        raise FleetError(f"could not join a Ray cluster at {address!r} ({error}); start one "
                         f"with `ray start --head` or pass --address HOST:PORT") from None


def _probe(address: str, timeout: float = 10.0) -> None:
    """Refuse a HOST:PORT nobody listens on now: ray.init would retry it for many minutes."""
    import socket

    host, _, port = address.rpartition(":")
    if "://" in address or not host or not port.isdigit():
        return  # "auto", "local", ray:// client addresses: Ray answers those itself
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as error:
        raise FleetError(f"no Ray cluster answers at {address} ({error.strerror or error}); "
                         f"check the head node's address (`ray status` on it) or use "
                         f"--address auto on a node of the cluster") from None


def alive_nodes() -> Tuple[Node, ...]:
    """Return the alive nodes, in a stable order (address, then id)."""
    ray = _ray()
    found = [Node(n["NodeID"], n.get("NodeManagerAddress", ""), n.get("NodeManagerHostname", ""))
             for n in ray.nodes() if n.get("Alive")]
    if not found:
        raise FleetError("the Ray cluster has no alive node")
    return tuple(sorted(found, key=lambda node: (node.address, node.id)))


def on_each(function: Callable, calls: Mapping[Node, Sequence], timeout: float = DEFAULT_TIMEOUT
            ) -> Dict[Node, object]:
    """Run `function(*args)` once on each node of `calls`, pinned there; a result or NodeFailure each.

    Pinned with soft=False: a task never runs on another node than the one it reports on.
    Never retried: a node that dies mid-way is reported, not silently re-run elsewhere.
    Tasks ask for no CPU, so a cluster busy serving still answers.
    """
    ray = _ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    remote = ray.remote(num_cpus=0, max_retries=0, retry_exceptions=False)(function)
    refs = {node: remote.options(
        name=f"patchops-fleet-{function.__name__}",
        scheduling_strategy=NodeAffinitySchedulingStrategy(node.id, soft=False)).remote(*args)
        for node, args in calls.items()}
    _, late = ray.wait(list(refs.values()), num_returns=len(refs), timeout=timeout)
    results: Dict[Node, object] = {}
    for node, ref in refs.items():
        if ref in late:
            ray.cancel(ref, force=True)
            results[node] = NodeFailure(f"did not answer within {timeout:g} s; its task was "
                                        f"stopped", died=True)
            continue
        try:
            results[node] = ray.get(ref)
        except ray.exceptions.RayTaskError as error:  # a bug, or patchops missing on the node
            cause = error.cause if getattr(error, "cause", None) is not None else error
            results[node] = NodeFailure(f"patchops failed there ({type(cause).__name__}: "
                                        f"{cause}); is patchops installed for the interpreter "
                                        f"Ray runs there?")
        except ray.exceptions.RayError as error:  # the node or its worker died
            summary = str(error).strip().splitlines()[0] if str(error).strip() else ""
            results[node] = NodeFailure(f"the node or its Ray worker died ({type(error).__name__}"
                                        f"{': ' + summary if summary else ''})", died=True)
    return results
