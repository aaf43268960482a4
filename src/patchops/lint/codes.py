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


# A hundred whose rules split into areas is one family: PO1 what is read, PO3 the engine, PO6 the box.
CATEGORIES: Tuple[Category, ...] = (
    Category("PO0", "patchops", "patchops's own findings: suppressions, specs, inputs not linted, the facts used"),
    Category("PO10", "flags-and-yaml", "flags, values and YAML as the release's parser and config loader read them"),
    Category("PO11", "config-values", "values the parser takes and vLLM's config classes refuse when built"),
    Category("PO2", "scheduler", "the scheduler's budgets: batched tokens, sequences, chunked prefill, lengths"),
    Category("PO30", "engine-generations", "V0 and V1: what each engine runs, refuses or falls back on; removed features"),
    Category("PO31", "models", "the model registry, architectures and the model's own files and config"),
    Category("PO32", "speculative-decoding", "speculative decoding: its config and what it runs with"),
    Category("PO4", "cuda-graphs", "the CUDA graphs captured and the batch sizes they cover"),
    Category("PO5", "attention-and-kernels", "attention backends, MLA and sinks, and the kernels vLLM picks"),
    Category("PO60", "hardware-and-dtype", "dtypes the GPU or the model refuses"),
    Category("PO61", "vendor-forks", "what a vendor's fork (CoreX) fixes or breaks"),
    Category("PO62", "memory", "GPU and host memory: weights, the KV cache and prefix caching, swap, other processes' use"),
    Category("PO7", "parallel-layout", "tensor, pipeline and expert parallelism and the executor that runs them"),
    Category("PO8", "quantization", "quantization methods, their configs and kernels"),
    Category("PO9", "front-end", "the serve front end: tool and reasoning parsers, chat templates, tokenizer, tracing"),
)

# Old code -> the code its rule has now: an old code keeps working wherever codes are taken.
REDIRECTS: Dict[str, str] = {
    "PO110": "PO909",
    "PO506": "PO612",
    "PO601": "PO611",
    "PO702": "PO207",
    "PO706": "PO621",
    "PO707": "PO622",
    "PO708": "PO623",
    "PO709": "PO309",
    "PO711": "PO315",
    "PO712": "PO624",
    "PO714": "PO316",
    "PO716": "PO504",
    "PO717": "PO505",
    "PO718": "PO625",
    "PO801": "PO111",
    "PO802": "PO112",
    "PO803": "PO321",
    "PO810": "PO604",
    "PO811": "PO113",
    "PO812": "PO318",
    "PO814": "PO317",
    "PO815": "PO319",
    "PO816": "PO908",
    "PO817": "PO322",
}


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
