"""Where each rule code belongs: the one table of code prefixes and their areas, and old codes.

A code is `PO` and three digits; its prefix names its area (`PO4`, or `PO61` where one hundred
holds several areas), as ruff's linter prefixes do, so `--select PO4` picks one area. A rule's
category is read off its code here, never stated twice. A rule that moved area got a new code;
its old one stays in REDIRECTS, which every selector reads as the new one (lint/selectors.py).
"""

from __future__ import annotations

from typing import Dict, List, Tuple

from patchops.core.records import record


@record(frozen=True)
class Category:
    """One area of rules: the code prefix that marks it, its name, what its rules judge."""

    prefix: str
    name: str
    description: str


CATEGORIES: Tuple[Category, ...] = (
    Category("PO0", "patchops", "patchops's own findings: suppressions, specs, inputs not linted, the facts used"),
    Category("PO1", "flags-and-yaml", "flags, values and YAML as the release's parser and config loader read them"),
    Category("PO2", "scheduler", "the scheduler's budgets: batched tokens, sequences, chunked prefill, lengths"),
    Category("PO3", "engine-and-models", "V0 and V1, removed features, and the model registry"),
    Category("PO4", "cuda-graphs", "the CUDA graphs captured and the batch sizes they cover"),
    Category("PO5", "attention-and-kernels", "attention backends and kernels"),
    Category("PO6", "hardware-and-forks", "dtypes the GPU or model refuses, and vendor forks"),
    Category("PO7", "layout-and-memory", "parallel layout, memory and model features"),
    Category("PO8", "values-and-quantization", "values config classes refuse, quantization, model files"),
    Category("PO9", "front-end", "the serve front end: tool and reasoning parsers, chat templates"),
)

# Old code -> the code its rule has now: an old code keeps working wherever codes are taken.
REDIRECTS: Dict[str, str] = {}


def category_of(code: str) -> Category:
    """Return the category whose prefix `code` starts with (a LookupError for none)."""
    for category in CATEGORIES:
        if code.startswith(category.prefix):
            return category
    raise LookupError(f"rule code {code} is under no prefix of lint/codes.py's CATEGORIES")


def redirected(selector: str) -> str:
    """Return the code an old code now is (any case), else `selector` as given."""
    return REDIRECTS.get(selector.strip().upper(), selector)


def old_codes(code: str) -> Tuple[str, ...]:
    """Return the old codes that now name `code`'s rule, sorted (SARIF's deprecatedIds)."""
    return tuple(sorted(old for old, new in REDIRECTS.items() if new == code))


def redirects_in(selectors: List[str]) -> List[Tuple[str, str]]:
    """Return (old, new) for each distinct old code among `selectors`, in their order."""
    found = {selector.strip().upper(): redirected(selector) for selector in selectors
             if selector.strip().upper() in REDIRECTS}
    return list(found.items())
