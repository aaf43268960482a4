"""Test-only: freeze this node's patchops right after its first file swap, once armed.

Every node of the tests' local Ray cluster has this folder on its PYTHONPATH. It does nothing
until the file named by $PATCHOPS_TEST_HOLD exists; then the next file patchops swaps in is
(backups and state do not count) is followed by `<that file>.held` (holding the worker's pid) and a sleep that only death ends,
so a test can kill the node in the middle of a transaction.
"""

import os

_ARM = os.environ.get("PATCHOPS_TEST_HOLD")

if _ARM:
    import time

    import patchops.store.site_store as _store

    _write = _store.atomic_write

    def _atomic_write_then_hold(path, data):
        _write(path, data)
        if _store.STORE_DIR not in os.fspath(path).split(os.sep) and os.path.exists(_ARM):
            with open(_ARM + ".held", "w") as marker:
                marker.write(str(os.getpid()))
            while True:
                time.sleep(1)

    _store.atomic_write = _atomic_write_then_hold
