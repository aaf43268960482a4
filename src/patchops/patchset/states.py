"""The states a rewrite, a plan and a status report, and the phrases plan and status share."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from patchops.patchset.model import Patchset

# What a patchset finds in one file (patchops.patchset.rewrite), and per (copy, patchset) in a plan.
APPLIES = "applies"                # some site pristine, none drifted: the file will change
SATISFIED = "satisfied"            # every site already holds the wanted code
DRIFT = "drift"                    # a site holds something else, or the site count is off
NOT_APPLICABLE = "not-applicable"  # the vLLM version is outside the patchset's (or ops') range
APPLIED = "applied"                # in a plan only: patchops already applied it; nothing to do

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
