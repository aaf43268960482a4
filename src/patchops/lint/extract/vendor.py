"""Which vendor build a vLLM copy is, from the markers the build leaves (never importing it).

Iluvatar CoreX builds carry their name in the version (`0.8.5-corex.4.2`, `0.8.5+corex.4.2`)
and install under `/usr/local/corex/` (locate.DEFAULT_ROOTS). Rules key vendor behaviour
(CUDA-graph capture with custom all-reduce) on this, or on the spec's `hardware.platform`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from patchops.host.locate import DEFAULT_ROOTS

COREX = "corex"


def vendor_of(site: Path, version: Optional[str]) -> Optional[str]:
    """Return "corex" for a CoreX build, None for anything else."""
    if version and COREX in version.lower():
        return COREX
    text = str(site)
    if any(text.startswith(root.rsplit("/lib", 1)[0] + "/") for root in DEFAULT_ROOTS):
        return COREX
    return None
