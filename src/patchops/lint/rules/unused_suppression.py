"""PO001 unused-suppression."""

from __future__ import annotations

from typing import Iterator, Sequence

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule


class UnusedSuppression(Rule):
    """
    ## What it does
    Flags a `# patchops: ignore[CODE]` comment that suppresses nothing on its line. The
    comment takes codes, code prefixes and rule names, comma-separated
    (`# patchops: ignore[PO302, concurrency-without-cuda-graphs]`).

    ## Why is this bad?
    A stale suppression hides the next real finding on that line, and a typo in the code
    (`PO2O1`) silently suppresses nothing. vLLM itself is not involved.

    ## Fix
    Delete the comment, or correct the code it names.
    """

    code = "PO001"
    name = "unused-suppression"
    severity = "warning"
    versions = ">=0"
    VALID = [
        Example("model: m\nargs:\n  max-model-len: 4096\n"),
        Example("model: m\nargs:\n  num-scheduler-steps: 8  # patchops: ignore[PO302]\n"),
        Example("model: m\nargs:\n  num-scheduler-steps: 8  # patchops: ignore\n"),
        Example("model: m\nargs:\n  num-scheduler-steps: 8  # patchops: ignore[multistep-falls-back-to-v0]\n"),
        Example("model: m\nargs:\n  num-scheduler-steps: 8  # patchops: ignore[PO3]\n"),
    ]
    INVALID = [
        Example("model: m\nargs:\n  max-model-len: 4096  # patchops: ignore[PO201]\n", at=(3, 24)),
        Example("model: m\nargs:\n  max-model-len: 4096  # patchops: ignore\n", at=(3, 24)),
        Example("model: m\nargs:\n  num-scheduler-steps: 8  # patchops: ignore[multistep-removed]\n",
                at=(3, 27)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        """Yield nothing: the runner calls check_suppressions() with the other findings."""
        return iter(())

    def check_suppressions(self, cfg: ReadConfig, found: Sequence[Diagnostic]) -> Iterator[Diagnostic]:
        """Yield one finding per suppressed code that matched no finding on its line."""
        for line, codes in sorted(cfg.suppressions.items()):
            text = cfg.lines[line - 1] if 0 < line <= len(cfg.lines) else ""
            column = text.find("# patchops") + 1 or 1
            here = [d for d in found if d.file == cfg.path and cfg.covers.get(d.line, d.line) == line]
            for code in sorted(codes):
                if not any(code == "*" or d.named_by(code) for d in here):
                    what = "a bare ignore" if code == "*" else f"suppression of {code}"
                    yield self.diagnostic(cfg, (line, column), f"{what} matches no finding on this line",
                                          fix="remove the ignore comment" if code == "*"
                                          else f"remove `{code}` from the ignore comment")
