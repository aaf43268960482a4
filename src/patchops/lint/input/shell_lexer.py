"""Split shell text into simple commands of positioned words: a small lexer, not a shell."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Tuple

from patchops.core.errors import LintInputError


@dataclass
class Word:
    text: str              # after quote removal and known-variable expansion
    start: int             # offset of the first character in the source
    end: int
    raw: str               # the source slice
    quoted: bool = False
    unknown: bool = False  # holds an expansion whose value is not known (`$VAR` never set, `$(cmd)`)

    def assignment(self) -> Optional[Tuple[str, str]]:
        match = re.match(r"[A-Za-z_][A-Za-z0-9_]*=", self.raw)
        if not match:
            return None
        name = match.group(0)[:-1]
        return name, self.text[len(name) + 1:]


_SEPARATORS = set(";&|()\n")


class Lexer:
    """Split shell text into simple commands of positioned words.

    Handles quotes, backslash escapes and `\\`-newline continuations, comments, `;`/`&&`/`||`/
    `|`/`&`/newline separators, redirections (dropped with their targets) and `$VAR`/`${VAR}`/
    `${VAR:-default}` for variables the script itself set. Anything fancier is kept as text.
    `variables` None keeps every `$` as written: text no shell runs (compose's string
    `command`, split shell-style and interpolated by compose itself).
    """

    def __init__(self, text: str, path: str, lines: "Lines"):
        self.text = text
        self.path = path
        self.lines = lines
        self.i = 0

    def fail(self, offset: int, message: str) -> LintInputError:
        line, column = self.lines.position(offset)
        return LintInputError(f"{self.path}:{line}:{column}: {message}")

    def commands(self, variables: Optional[Dict[str, str]]) -> Iterator[List[Word]]:
        text, n = self.text, len(self.text)
        words: List[Word] = []
        buf: List[str] = []
        start: Optional[int] = None
        quoted = False
        skip_next = False            # the next word is a redirection target
        self.unresolved = False      # the word being read holds an expansion dollar() left as written

        def end_word(at: int) -> None:
            nonlocal buf, start, quoted, skip_next
            if start is not None:
                if skip_next:
                    skip_next = False
                else:
                    words.append(Word("".join(buf), start, at, text[start:at], quoted, self.unresolved))
            buf, start, quoted = [], None, False
            self.unresolved = False

        while self.i < n:
            c = text[self.i]
            if c == "\\":
                if self.i + 1 < n and text[self.i + 1] == "\n":
                    self.i += 2
                    continue
                if text.startswith("\r\n", self.i + 1):     # a script saved with CRLF endings
                    self.i += 3
                    continue
                if start is None:
                    start = self.i
                if self.i + 1 < n:
                    buf.append(text[self.i + 1])
                    quoted = True
                self.i += 2
                continue
            if c == "#" and start is None:
                while self.i < n and text[self.i] != "\n":
                    self.i += 1
                continue
            if c in " \t\r":
                end_word(self.i)
                self.i += 1
                continue
            if c in _SEPARATORS:
                end_word(self.i)
                skip_next = False
                self.i += 1
                if words:
                    yield words
                    words = []
                continue
            if c in "<>":
                # `2>&1`, `> log`, `>> log`, `< in`: drop the fd number, operator and target.
                if start is not None and "".join(buf).isdigit() and not quoted:
                    buf, start = [], None
                else:
                    end_word(self.i)
                while self.i < n and text[self.i] in "<>":
                    self.i += 1
                if self.i < n and text[self.i] == "&":
                    self.i += 1
                    while self.i < n and (text[self.i].isdigit() or text[self.i] == "-"):
                        self.i += 1
                    continue
                skip_next = True
                continue
            if start is None:
                start = self.i
            if c == "'":
                close = text.find("'", self.i + 1)
                if close < 0:
                    raise self.fail(self.i, "unterminated single quote in the command")
                buf.append(text[self.i + 1:close])
                quoted = True
                self.i = close + 1
                continue
            if c == '"':
                self.i += 1
                quoted = True
                while True:
                    if self.i >= n:
                        raise self.fail(start, "unterminated double quote in the command")
                    d = text[self.i]
                    if d == '"':
                        self.i += 1
                        break
                    if d == "\\" and self.i + 1 < n and text[self.i + 1] in '"\\$`\n':
                        if text[self.i + 1] != "\n":
                            buf.append(text[self.i + 1])
                        self.i += 2
                        continue
                    if d == "$" and variables is not None:
                        buf.append(self.dollar(variables))
                        continue
                    buf.append(d)
                    self.i += 1
                continue
            if c == "$" and variables is not None:
                buf.append(self.dollar(variables))
                continue
            if c == "`":
                close = text.find("`", self.i + 1)
                if close < 0:
                    raise self.fail(self.i, "unterminated backquote in the command")
                buf.append(text[self.i:close + 1])
                self.unresolved = True
                self.i = close + 1
                continue
            buf.append(c)
            self.i += 1
        end_word(n)
        if words:
            yield words

    def dollar(self, variables: Dict[str, str]) -> str:
        """Expand `$...` at self.i; unknown variables and substitutions stay as written.

        What stays as written marks its word unknown: the shell puts a value there that the
        script does not show, so nothing may judge the word's text.
        """
        text, n, at = self.text, len(self.text), self.i
        nxt = text[at + 1] if at + 1 < n else ""
        if nxt == "{":
            close = text.find("}", at + 2)
            if close < 0:
                raise self.fail(at, "unterminated `${` in the command")
            inner = text[at + 2:close]
            self.i = close + 1
            match = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)(?::?[-=](.*))?", inner, re.S)
            if match:
                name, default = match.group(1), match.group(2)
                if name in variables:
                    return variables[name]
                if default is not None:
                    return default
            self.unresolved = True
            return text[at:close + 1]
        if nxt == "(":
            depth, j = 0, at + 1
            while j < n:
                if text[j] == "(":
                    depth += 1
                elif text[j] == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            if j >= n:
                raise self.fail(at, "unterminated `$(` in the command")
            self.i = j + 1
            self.unresolved = True
            return text[at:j + 1]
        match = re.match(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]", text[at + 1:])
        if match:
            name = match.group(0)
            self.i = at + 1 + len(name)
            if name in variables:
                return variables[name]
            self.unresolved = True
            return "$" + name
        self.i = at + 1
        return "$"


class Lines:
    def __init__(self, text: str):
        self.starts = [0]
        for match in re.finditer("\n", text):
            self.starts.append(match.end())

    def position(self, offset: int) -> Tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index] + 1
