"""The states a rewrite, a plan and a status report, and the phrases plan and status share."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from patchops.core.records import StrEnum

if TYPE_CHECKING:
    from patchops.patchset.model import Patchset


class PatchState(StrEnum):
    """A patchset's state: what a rewrite finds in one file, what a plan and a status say per copy.

    A rewrite says APPLIES, SATISFIED, DRIFT or NOT_APPLICABLE; a plan those and APPLIED; a
    status APPLIED, NOT_APPLIED, SATISFIED, NOT_APPLICABLE or DRIFTED ("drifted" where a plan
    says "drift": both are in saved verdicts and `--format json` output).
    """

    APPLIES = "applies"                # some site pristine, none drifted: the file will change
    SATISFIED = "satisfied"            # every site already holds the wanted code
    DRIFT = "drift"                    # a site holds something else, or the site count is off
    NOT_APPLICABLE = "not-applicable"  # the vLLM version is outside the patchset's (or ops') range
    APPLIED = "applied"                # patchops applied it (a plan: nothing to do)
    NOT_APPLIED = "not-applied"        # status: a rewrite would apply it
    DRIFTED = "drifted"                # status: a file holds neither the original nor what patchops wrote


REPLACED = "file was replaced (reinstall?): patch no longer present"
HAND_EDITED = "hand-edited since patchops wrote it"


def outside_range(version: Optional[str], patchset: "Patchset") -> str:
    """Say that a patchset is not for this vLLM version."""
    return f"not for vLLM {version or 'unknown'} (it supports vLLM {patchset.versions})"
