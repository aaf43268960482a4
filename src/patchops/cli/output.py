"""Write styled lines: through rich on a terminal, as plain text everywhere else.

Importing rich.console and rich.text costs more than the rest of a `status` run. A pipe, a
file, pre-commit or CI shows no colour anyway, so rich loads only when the output is a
terminal. Text is never read as rich markup: a message holding `[bold]` prints as written.
"""

from __future__ import annotations

import json
import os
import sys
from typing import List, Tuple, Union

Part = Union[str, Tuple[str, str]]


class Line:
    """One line of output as (text, style) spans; the styles are rich style names."""

    __slots__ = ("spans",)

    def __init__(self, text: str = "", style: str = ""):
        self.spans: List[Tuple[str, str]] = [(text, style)] if text else []

    @classmethod
    def assemble(cls, *parts: Part) -> "Line":
        """Build a line from strings and (text, style) pairs, as rich's Text.assemble does."""
        line = cls()
        for part in parts:
            line.append(*((part, "") if isinstance(part, str) else part))
        return line

    def append(self, text: str, style: str = "") -> "Line":
        self.spans.append((text, style))
        return self

    @property
    def plain(self) -> str:
        return "".join(text for text, _ in self.spans)


class Output:
    """stdout or stderr, written plainly unless it is a terminal."""

    def __init__(self, stderr: bool = False):
        self.stderr = stderr
        self._console = None

    @property
    def file(self):
        # Looked up on each write: test runners swap sys.stdout after this object exists.
        return sys.stderr if self.stderr else sys.stdout

    @property
    def is_terminal(self) -> bool:
        try:
            return self.file.isatty()
        except (AttributeError, ValueError):
            return False

    @property
    def width(self) -> int:
        if self.is_terminal:
            return self.rich().width
        try:
            return int(os.environ.get("COLUMNS", "80"))
        except ValueError:
            return 80

    def rich(self):
        """Return a rich Console on this stream (imports rich; for terminals)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(file=self.file, highlight=False)
        return self._console

    def print(self, item: Union[str, Line] = "", style: str = "") -> None:
        """Write one line, styled on a terminal; long lines are left to the terminal to wrap."""
        line = item if isinstance(item, Line) else Line(item, style)
        if self.is_terminal:
            from rich.text import Text

            self.rich().print(Text.assemble(*line.spans), soft_wrap=True)
        else:
            self.file.write(line.plain + "\n")

    def progress(self, message: str, after: float = 0.5):
        """Return a context that shows a spinner with `message` once a step has taken `after` s.

        Only on a terminal: a pipe, a file or CI gets nothing. A step that ends sooner shows
        nothing either, so a cached lint prints no flicker.
        """
        import contextlib

        if not self.is_terminal:
            return contextlib.nullcontext()
        return _Spinner(self, message, after)

    def print_json(self, data) -> None:
        """Write JSON, highlighted on a terminal and plain for pipes."""
        if self.is_terminal:
            self.rich().print_json(json.dumps(data, default=str))
        else:
            self.file.write(json.dumps(data, indent=2, default=str) + "\n")


class _Spinner:
    """A rich status started by a timer, so steps under the delay never show it."""

    def __init__(self, output: Output, message: str, after: float):
        import threading

        self._output, self._message, self._status = output, message, None
        self._lock = threading.Lock()
        self._timer = threading.Timer(after, self._start)
        self._timer.daemon = True

    def _start(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._status = self._output.rich().status(self._message)
                self._status.start()

    def __enter__(self) -> "_Spinner":
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        with self._lock:
            self._timer.cancel()
            self._timer = None
            if self._status is not None:
                self._status.stop()
