"""Cut a source line around a column and put a caret under it, as compilers and ruff do.

A launch command is one long line: `<command>:1:108` alone is hard to find, so the line is
cut to the terminal width around the column, with `...` where it was cut.
"""

from __future__ import annotations

from typing import List


def snippet(text: str, line: int, column: int, width: int = 80) -> List[str]:
    """Return the source line and a caret under `column`, cut around it to fit `width`."""
    gutter = f"{line:>4} | "
    room = max(width - len(gutter), 20)
    text = text.expandtabs(1)
    start = 0
    if len(text) > room:  # a long launch command: show the part around the column
        start = max(0, min(column - 1 - room // 3, len(text) - room))
    shown = text[start:start + room]
    if start:
        shown = "..." + shown[3:]
    if start + room < len(text):
        shown = shown[:-3] + "..."
    caret = " " * (len(gutter) - 2) + "| " + " " * max(column - 1 - start, 0) + "^"
    return [gutter + shown.rstrip(), caret]
