"""PO002 spec-version-mismatch."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import releases


class SpecVersionMismatch(Rule):
    """
    ## What it does
    Flags a serve spec whose `vllm.version` differs from the vLLM it was linted against.

    ## Why is this bad?
    patchops lints against the copy that will really run (the one `patchops locate` says
    wins the import, `--vllm PATH`, or `vllm.python`), and only falls back to the spec's
    `vllm.version` when none is installed. When the two disagree, the spec documents a vLLM
    that is not the one on this machine, and findings that depend on the version (engine,
    defaults, accepted flags) may surprise whoever reads the spec. vLLM itself says nothing.

    ## Fix
    Update `vllm.version` to the installed version, or install the version the spec names.
    """

    code = "PO002"
    name = "spec-version-mismatch"
    severity = "warning"
    versions = ">=0"
    VALID = [
        Example("model: m\nvllm:\n  version: 0.8.5\nargs:\n  max-model-len: 4096\n", vllm="0.8.5"),
        Example("model: m\nargs:\n  max-model-len: 4096\n", vllm="0.8.5"),
    ]
    INVALID = [
        Example("model: m\nvllm:\n  version: 0.6.3.post1\nargs:\n  max-model-len: 4096\n",
                vllm="0.8.5", at=(3, 3)),
        Example("model: m\nvllm:\n  version: 0.8.5\nargs:\n  max-model-len: 4096\n",
                vllm="0.6.3.post1", at=(3, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        stated = cfg.context.get("vllm.version")
        if stated is None or facts.asked is not None and facts.asked[0] == str(stated.value):
            return   # the spec's own version chose these facts: facts-of-another-release says how
        said, linted = releases.parse_version(str(stated.value)), releases.parse_version(facts.version)
        same = said == linted if said is not None and linted is not None else str(stated.value) == facts.version
        if not same:
            yield self.diagnostic(
                cfg, stated,
                f"the spec says vLLM {stated.value!s}, but it was linted against vLLM {facts.version}",
                explanation=f"the facts linted against: {facts.origin}",
                fields=("vllm.version",), fix=f"set vllm.version to {facts.version}, or install vLLM {stated.value!s}")
