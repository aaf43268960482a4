"""What a plain `pip install vllm==X` brings along: the unconditional Requires-Dist of its METADATA.

Shipped facts describe a release, not an install; whether a separate package such as
flashinfer is importable beside a copy is a fact of the install. What the release itself
pulls in is the closest a version alone can say: from 0.12 `flashinfer-python` is a
dependency, before it a user installs it by hand (or not).
"""

from __future__ import annotations

import re
from typing import Tuple

from patchops.lint.extract.source_tree import Source

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def required_dists(src: Source) -> Tuple[str, ...]:
    """Return the normalized names vLLM's dist-info requires without an extra, sorted; () if unknown."""
    for info in src.names(".", "vllm-*.dist-info"):
        rel = f"{info}/METADATA"
        if src.stat(rel) is None:
            continue
        text = (src.site / rel).read_text(encoding="utf-8", errors="replace")
        return tuple(sorted(set(_requirements(text))))
    return ()


def _requirements(metadata: str):
    for line in metadata.splitlines():
        if not line.startswith("Requires-Dist:"):
            if not line.strip():
                return  # the headers end at the first blank line; the description follows
            continue
        spec = line.split(":", 1)[1]
        requirement, _, marker = spec.partition(";")
        if "extra" in marker:
            continue
        match = _NAME.match(requirement)
        if match:
            yield normalize(match.group(1))


def normalize(name: str) -> str:
    """Return the PEP 503 form of a distribution name (`Flashinfer_Python` -> `flashinfer-python`)."""
    return re.sub(r"[-_.]+", "-", name).lower()
