"""What lint finds: a Diagnostic at a position, the exact Fix (Edits) that resolves it, and the
rules it could not run (NotRun)."""

from __future__ import annotations

from typing import Optional, Tuple

from patchops.core.records import record

# How sure a fix is, as ruff names it: "safe" keeps what the user meant and `lint --fix`
# applies it; "unsafe" changes what vLLM does and needs `--unsafe-fixes`.
APPLICABILITIES = ("safe", "unsafe")


@record(frozen=True)
class Edit:
    """Replace text[start:end] of the linted input with `content` (offsets into ServeConfig.text).

    `start_at` and `end_at` are the same places as 1-based (line, column), for JSON and SARIF.
    `file` names the file edited when it is not the finding's own (a key of a command's
    `--config FILE` fixed on the command line).
    """

    start: int
    end: int
    content: str
    start_at: Tuple[int, int]
    end_at: Tuple[int, int]
    file: Optional[str] = None


@record(frozen=True)
class Fix:
    """The edits that resolve one finding, applied together or not at all."""

    applicability: str
    edits: Tuple[Edit, ...]
    title: str                         # what it does, e.g. "write `true`"


@record(frozen=True)
class Diagnostic:
    """One finding, positioned at the setting that causes it.

    `message` is the headline: one line of at most about 100 characters with the values, as
    ruff's are; `explanation` is the why, printed under the snippet, so the headline stays one line.
    """

    file: str
    line: int
    column: int
    code: str
    name: str
    severity: str
    message: str
    explanation: Optional[str] = None
    fields: Tuple[str, ...] = ()
    fix: Optional[str] = None          # the suggestion, in words
    vllm_message: Optional[str] = None
    autofix: Optional[Fix] = None      # the edits `lint --fix` makes, when they are exact

    def named_by(self, selector: str) -> bool:
        """Return whether `selector` (a code, prefix or rule name, as in ignore[...]) names this rule."""
        from patchops.lint.selectors import matches

        return matches(selector, self.code, self.name)


@record(frozen=True)
class NotRun:
    """A rule the runner did not call on one input: what it lacked (`reason`), what to do (`hint`)."""

    rule: str
    input: str
    reason: str
    hint: str
