"""Compose's interpolation: `${VAR}` from the environment it runs in and the `.env` beside the file.

As `docker compose` does it (the compose specification, "Interpolation"): `$$` writes a `$`;
`$VAR` and `${VAR}` take the variable's value; `${VAR:-default}` the default when it is unset
or empty, `${VAR-default}` when unset; `${VAR:+alt}` / `${VAR+alt}` the alternative when it is
set (and not empty); `${VAR:?err}` / `${VAR?err}` the value. Defaults may hold interpolations
themselves. The process environment wins over `.env`. A variable set in neither is not an
error here: compose runs elsewhere, where it may be set, so its value is unknown.
"""

from __future__ import annotations

import os
import re
from typing import Callable, Dict, List, Mapping, Optional, Tuple

from patchops.lint import result_cache

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BRACED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])(.*))?", re.S)
_LINE = re.compile(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "$": "$"}


class Variables:
    """The variables a compose file is interpolated with: the process environment, then `.env`."""

    def __init__(self, folder: Optional[str], environ: Optional[Mapping[str, str]] = None):
        self.environ = os.environ if environ is None else environ
        self.dotenv: Dict[str, str] = {}
        path = os.path.join(folder, ".env") if folder else None
        if path is not None and os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as handle:
                self.dotenv = read_dotenv(handle.read(), self.from_environ)

    def from_environ(self, name: str) -> Optional[str]:
        """Return the variable's value in the process environment, None when unset."""
        value = self.environ.get(name)
        if self.environ is os.environ:
            result_cache.vouch("env", name, value)     # a cached lint holds while it stays put
        return value

    def get(self, name: str) -> Optional[str]:
        """Return the variable's value, None when neither the environment nor `.env` sets it."""
        value = self.from_environ(name)
        return value if value is not None else self.dotenv.get(name)


def read_dotenv(text: str, environ: Callable[[str], Optional[str]]) -> Dict[str, str]:
    """Return the `KEY=value` lines of a `.env` file as compose reads them.

    `#` lines and blank lines are skipped, `export ` is allowed; a single-quoted value is
    literal, a double-quoted one takes `\\n`-style escapes; an unquoted value ends at ` #`.
    Unquoted and double-quoted values are interpolated with `environ` (a lookup of the process
    environment) and the lines above.
    """
    found: Dict[str, str] = {}

    def lookup(name: str) -> Optional[str]:
        value = environ(name)
        return value if value is not None else found.get(name)

    for line in text.splitlines():
        match = _LINE.match(line)
        if match is None or line.lstrip().startswith("#"):
            continue
        key, value = match.group(1), match.group(2).strip()
        if value[:1] == "'" and value.find("'", 1) > 0:
            found[key] = value[1:value.find("'", 1)]
            continue
        if value[:1] == '"' and re.match(r'"((?:[^"\\]|\\.)*)"', value):
            body = re.match(r'"((?:[^"\\]|\\.)*)"', value).group(1)  # type: ignore[union-attr]
            value = re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), "\\" + m.group(1)), body)
        else:
            value = re.split(r"\s+#", value, maxsplit=1)[0].strip()
        found[key] = interpolate(value, lookup, [])[0]
    return found


def interpolate(text: str, lookup, unknown: List[str]) -> Tuple[str, bool]:
    """Return (`text` interpolated, whether some variable in it is unknown); name those in `unknown`.

    `lookup(name)` gives a variable's value or None; an unknown one stays as written.
    """
    out: List[str] = []
    missing = False
    at = 0
    while at < len(text):
        dollar = text.find("$", at)
        if dollar < 0:
            out.append(text[at:])
            break
        out.append(text[at:dollar])
        if text.startswith("$$", dollar):
            out.append("$")
            at = dollar + 2
            continue
        if text.startswith("${", dollar):
            close = _closing(text, dollar + 2)
            if close < 0:
                out.append(text[dollar:])
                break
            value, was_missing = _braced(text[dollar + 2:close], lookup, unknown)
            out.append(text[dollar:close + 1] if value is None else value)
            missing = missing or was_missing
            at = close + 1
            continue
        name = _NAME.match(text, dollar + 1)
        if name is None:
            out.append("$")
            at = dollar + 1
            continue
        value = lookup(name.group(0))
        if value is None:
            unknown.append(name.group(0))
            missing = True
        out.append(text[dollar:name.end()] if value is None else value)
        at = name.end()
    return "".join(out), missing


def _closing(text: str, at: int) -> int:
    """Return the offset of the `}` closing a `${` whose body starts at `at`, -1 when none does."""
    depth = 1
    while at < len(text):
        if text.startswith("${", at):
            depth += 1
            at += 2
            continue
        if text[at] == "}":
            depth -= 1
            if depth == 0:
                return at
        at += 1
    return -1


def _braced(body: str, lookup, unknown: List[str]) -> Tuple[Optional[str], bool]:
    """Return (the value of `${body}` or None when unknown, whether something in it is unknown)."""
    match = _BRACED.fullmatch(body)
    if match is None:
        return None, True              # compose refuses it: "invalid interpolation format"
    name, operator, word = match.group(1), match.group(2), match.group(3) or ""
    value = lookup(name)
    if operator in (":-", "-"):
        if value is None or (operator == ":-" and value == ""):
            return interpolate(word, lookup, unknown)
        return value, False
    if operator in (":+", "+"):
        if value is not None:
            return (interpolate(word, lookup, unknown) if value != "" or operator == "+" else ("", False))
    elif value is not None:
        return value, False
    unknown.append(name)
    return None, True
