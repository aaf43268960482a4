"""The states a plan and a status report, and the phrases both use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from patchops.patchset import Patchset

# Per (copy, patchset) in a plan, and per file while planning: rewrite's states (applies,
# satisfied, drift, not-applicable) plus this one.
APPLIED = "applied"                # patchops already applied it; nothing to do

# Status states.
ST_APPLIED = "applied"
ST_NOT_APPLIED = "not-applied"
ST_SATISFIED = "satisfied"
ST_NOT_APPLICABLE = "not-applicable"
ST_DRIFTED = "drifted"

REPLACED = "file was replaced (reinstall?): patch no longer present"
HAND_EDITED = "hand-edited since patchops wrote it"


def outside_range(version: Optional[str], patchset: "Patchset") -> str:
    """Say that a patchset is not for this vLLM version."""
    return f"not for vLLM {version or 'unknown'} (it supports vLLM {patchset.versions})"
