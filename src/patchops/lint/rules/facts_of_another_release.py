"""PO010 facts-of-another-release."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.facts.resolution import Resolution, ResolutionKind
from patchops.lint.rule import Diagnostic, Example, Rule


class FactsOfAnotherRelease(Rule):
    """
    ## What it does
    Says, at the top of an input's findings, when the vLLM version it was linted for has no
    facts of its own and another release's facts stood in: a dev build or pre-release
    (`0.8.5.dev84+g9c1d5b456`, `0.9.0rc1`: the release before it), a release newer than the
    newest shipped (the newest), a version PyPI never had (the release below it), or a local
    build (`0.8.5+corex.4.2`: its public release, reported as info).

    ## Why is this bad?
    patchops ships facts for every final vLLM release on PyPI from 0.6.0 on; any other version
    is judged by a release it is not. Flags, value choices and defaults that changed between
    the two are judged wrongly: a flag the build has but the stand-in lacks reads as unknown.
    So the findings that hold for the stand-in and not for the release on the build's other
    side (or, for a newer release, every unknown flag or choice) are warnings, saying so,
    instead of errors. A local build is its release with a vendor's changes, which patchops
    cannot see in a version string. vLLM itself says nothing.

    ## Fix
    Lint against the copy that will run (`--vllm PATH`, `--python PYTHON`), or state the final
    release the build is closest to. For a release newer than the facts, upgrade patchops (or
    run `scripts/generate_facts.py --new` in a checkout).
    """

    code = "PO010"
    name = "facts-of-another-release"
    severity = "warning"
    versions = ">=0"
    VALID = [Example("model: m\nargs:\n  max-model-len: 4096\n", vllm="0.8.4")]
    INVALID = [
        Example("model: m\nargs:\n  max-model-len: 4096\n", at=(1, 1),
                facts={"asked": ["0.8.5.dev84+g9c1d5b456", "pre"]}),
        Example("model: m\nargs:\n  max-model-len: 4096\n", at=(1, 1), severity="info",
                facts={"asked": ["0.8.5+corex.4.2", "local"]}),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        if facts.asked is None:
            return
        asked, kind = facts.asked
        yield self.diagnostic(cfg, (1, 1), Resolution(asked, facts.version, kind).describe(),
                              severity="info" if kind == ResolutionKind.LOCAL else None,
                              fix=f"lint the copy that runs {asked} (--vllm PATH), or state a release")
