"""`lint --fix`: apply the findings' exact edits to an input's text, lint again, until stable.

As ruff does it: a pass takes the fixes in finding order and skips one whose edits overlap
an edit already taken (it gets its turn on the next pass, against the new text); then the
new text is linted again, at most MAX_PASSES times. Unsafe fixes (they change what vLLM
does) are applied only when asked. Nothing here touches the disk: api.fix_inputs writes.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from typing import Callable, Dict, List, Sequence, Tuple

from patchops.core.errors import LintInputError
from patchops.lint.rule import Diagnostic, Edit

MAX_PASSES = 8


@dataclass(frozen=True)
class FixedText:
    """The text after fixing, how many fixes went in, and the findings that remain."""

    text: str
    fixed: int
    remaining: List[Diagnostic]


def applies(d: Diagnostic, unsafe: bool) -> bool:
    """Return whether `lint --fix` (with `--unsafe-fixes` when `unsafe`) applies d's fix."""
    return d.autofix is not None and (d.autofix.applicability == "safe" or unsafe)


def apply_fixes(text: str, diagnostics: Sequence[Diagnostic], *, unsafe: bool = False) -> Tuple[str, int]:
    """Return `text` with every applicable fix that does not overlap an earlier one, and their count."""
    taken: List[Tuple[int, Edit]] = []
    count = 0
    for d in diagnostics:
        if not applies(d, unsafe):
            continue
        edits = d.autofix.edits  # type: ignore[union-attr]
        if any(e.end > len(text) or e.start > e.end for e in edits) or \
                any(_overlap(e, other) for e in edits for _, other in taken):
            continue
        taken.extend((count, e) for e in edits)
        count += 1
    out: List[str] = []
    at = 0
    for _, e in sorted(taken, key=lambda pair: (pair[1].start, pair[1].end, pair[0])):
        out.append(text[at:e.start])
        out.append(e.content)
        at = e.end
    out.append(text[at:])
    return "".join(out), count


def _overlap(a: Edit, b: Edit) -> bool:
    """Return whether two edits touch the same text (an insertion only inside a replacement)."""
    if a.start == a.end and b.start == b.end:
        return False                         # two insertions at one place: in finding order
    if a.start == a.end:
        return b.start < a.start < b.end
    if b.start == b.end:
        return a.start < b.start < a.end
    return a.start < b.end and b.start < a.end


def fix_text(text: str, lint: Callable[[str], List[Diagnostic]], *, unsafe: bool = False) -> FixedText:
    """Fix `text` pass by pass; `lint` returns the findings of a text (the same input and facts).

    A pass whose result can no longer be read (a fix that broke the input; a bug) is dropped
    and fixing stops there, so a fix never leaves a file worse than it found it.
    """
    remaining = lint(text)
    fixed = 0
    for _ in range(MAX_PASSES):
        new, count = apply_fixes(text, remaining, unsafe=unsafe)
        if not count or new == text:
            break
        try:
            found = lint(new)
        except LintInputError:
            break
        text, fixed, remaining = new, fixed + count, found
    return FixedText(text, fixed, remaining)


@dataclass(frozen=True)
class FixedInput:
    """An input after fixing, and each other file its fixes edited: (path, text before, after)."""

    own: FixedText
    others: List[Tuple[str, str, FixedText]]
    texts: Dict[str, str]          # the others' fixed texts by path


def fix_input(path: str, text: str, lint: Callable[[str, Dict[str, str]], List[Diagnostic]],
              read: Callable[[str], str], *, unsafe: bool = False) -> FixedInput:
    """Fix an input's own text, then each file its remaining fixes edit (a command's `--config FILE`).

    `path` is the input as its findings name it; `lint(text, texts)` returns the findings of
    the input's `text` with `texts` (path -> text) in place of those files on disk; `read(path)`
    a file's text. Each pass takes only the fixes that edit the text being fixed.
    """
    texts: Dict[str, str] = {}

    def in_file(file: str, found: List[Diagnostic]) -> List[Diagnostic]:
        return [d for d in found if d.autofix is None or all(edited(d, e) == file for e in d.autofix.edits)]

    own = fix_text(text, lambda new: in_file(path, lint(new, texts)), unsafe=unsafe)
    others = []
    named = [edited(d, e) for d in lint(own.text, texts) if d.autofix for e in d.autofix.edits]
    for other in dict.fromkeys(file for file in named if file != path):
        before = read(other)
        done = fix_text(before, lambda new: in_file(other, lint(own.text, {**texts, other: new})),
                        unsafe=unsafe)
        if done.text != before:
            texts[other] = done.text
            others.append((other, before, done))
    return FixedInput(own, others, texts)


def edited(d: Diagnostic, e: Edit) -> str:
    """Return the file an edit of finding `d` changes (its own, else the finding's)."""
    return e.file or d.file


def unified_diff(path: str, before: str, after: str) -> str:
    """Return a unified diff of one file as git prints it (`a/PATH`, `b/PATH`, relative paths)."""
    shown = _git_path(path)
    lines = []
    for line in difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                     f"a/{shown}", f"b/{shown}"):
        lines.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(lines)


def _git_path(path: str) -> str:
    """Return `path` relative to the current folder when it lies below it, with `/` separators."""
    relative = os.path.relpath(os.path.abspath(path))
    shown = path if relative.startswith("..") else relative
    return shown.replace(os.sep, "/").lstrip("/")
