"""Whether a separate package vLLM may need (flashinfer, bitblas) is importable beside the copy.

An inspected copy answers for itself (facts_extract's `library_present`: the package or its
dist-info in the copy's site-packages). With only a release, what `pip install vllm==X`
brings is the answer: the wheel's Requires-Dist (flashinfer-python from 0.12); a user may
still have installed the package by hand, so that answer is not certain.
"""

from __future__ import annotations

from patchops.lint.facts.model import Facts
from patchops.lint.vllm.prediction import Prediction

OPENTELEMETRY_DISTS = ("opentelemetry-sdk", "opentelemetry-api")

# package -> (the Facts field an inspected copy fills, the distributions that install it)
PACKAGES = {"flashinfer": ("has_flashinfer", ("flashinfer-python", "flashinfer")),
            "bitblas": ("has_bitblas", ("bitblas",))}


def present(facts: Facts, name: str) -> Prediction:
    """Return whether `import name` works beside the copy (None: nothing can tell)."""
    field, dists = PACKAGES[name]
    found = getattr(facts, field)
    if found is not None:
        return Prediction(found, f"{name} {'is' if found else 'is not'} installed beside this vLLM {facts.version}")
    if facts.required_dists:
        needed = any(d in facts.required_dists for d in dists)
        return Prediction(needed, f"{name} {'is' if needed else 'is not'} among the dependencies of the vLLM "
                          f"{facts.version} wheel, so a plain `pip install vllm` "
                          + ("brings it" if needed else "lacks it"), certain=False)
    return Prediction(None, f"the facts for vLLM {facts.version} cannot tell whether {name} is installed",
                      certain=False)
