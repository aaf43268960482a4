"""Patch every vLLM copy as one transaction: plan, commit, status and rollback.

The entry points api/, the fleet and the tests call are named here and loaded on first
use, so `patchops status` does not import the planner, the committer or the rollback (it
must start within 1.3x of the typer+rich import floor). Each lives in the module of its job: `plan`, `commit`,
`status_check`, `restore`, `recorded_patchsets`.
"""

from __future__ import annotations

import importlib

_HOMES = {
    "plan_apply": "plan", "unified_diff": "plan", "ApplyPlan": "plan",
    "commit_apply": "commit", "ApplyReport": "commit",
    "status": "status_check", "any_drift": "status_check", "StatusRow": "status_check",
    "rollback": "restore", "RollbackReport": "restore",
    "load_patchsets": "recorded_patchsets",
}


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
