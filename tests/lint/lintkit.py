"""The one way lint tests run a config: through the full runner, on shipped facts.

`lint_config` applies each rule's vLLM range, select/ignore, the generic-code hand-off and
`# patchops: noqa` suppressions, so a test through here sees what a user would.
"""

from __future__ import annotations

from typing import Callable, List, Optional

from patchops.lint.rule import Diagnostic, Example
from patchops.lint.runner import lint_example


def findings(code: Optional[str], text: str, vllm: str = "0.8.5", kind: str = "spec",
             **facts) -> List[Diagnostic]:
    """Return rule `code`'s findings (None: every rule's) for `text` on the shipped facts of `vllm`.

    `kind` is "spec", "config" or "command"; keyword arguments override Facts fields
    (`has_flashinfer=False`, `flags={...}`).
    """
    found = lint_example(Example(text, vllm=vllm, kind=kind, facts=facts))
    return [d for d in found if code is None or d.code == code]


def linter(code: Optional[str], vllm: str = "0.8.5", kind: str = "spec") -> Callable[..., List[Diagnostic]]:
    """Return findings() bound to one rule and a test file's defaults: `lint = linter("PO201")`."""

    def lint(text: str, vllm: str = vllm, kind: str = kind, **facts) -> List[Diagnostic]:
        return findings(code, text, vllm, kind, **facts)

    return lint


def said(d: Diagnostic) -> str:
    """Return a finding's headline and its why as one text, for tests of what it says."""
    return f"{d.message}: {d.explanation}" if d.explanation else d.message
