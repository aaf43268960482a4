"""Exact text edits of a linted input, built from where a Setting is written (the rule API for fixes).

A fix edits the input's text at the setting's own span, as ruff's fixes do, so comments and
layout elsewhere stay byte for byte; a key of a command's `--config FILE` is edited in that
file (Edit.file). Each builder returns None when the setting is not written in a form it can
edit exactly (a YAML alias or merge, a value spread over lines); the finding then keeps its
suggestion only.
"""

from __future__ import annotations

import functools
import re
import shlex
from typing import Callable, Optional, Tuple

from patchops.core import records
from patchops.lint.input.serve_config import ServeConfig, Setting
from patchops.lint.rule import Edit

_ANCHOR = re.compile(r"(?:^|[\s\[{,:])&\S")


def _in_source(build: Callable[..., Optional[Edit]]) -> Callable[..., Optional[Edit]]:
    """Build the edit in the text the setting is written in, naming that file when it is another."""
    @functools.wraps(build)
    def in_source(cfg: ServeConfig, setting: Setting, *args) -> Optional[Edit]:
        source = cfg.source_of(setting)
        made = build(source, setting, *args)
        return made if made is None or source is cfg else records.replace(made, file=source.path)

    return in_source


def position(text: str, offset: int) -> Tuple[int, int]:
    """Return the 1-based (line, column) of `offset` in `text`."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def edit(cfg: ServeConfig, start: int, end: int, content: str) -> Edit:
    return Edit(start, end, content, position(cfg.text, start), position(cfg.text, end))


def yaml_quoted(text: str) -> str:
    """Return `text` as a single-quoted YAML scalar."""
    return "'" + text.replace("'", "''") + "'"


def shell_quoted(text: str) -> str:
    return shlex.quote(text)


@_in_source
def replace_value(cfg: ServeConfig, setting: Setting, content: str) -> Optional[Edit]:
    """Replace the setting's value as written (a YAML scalar or flow node, the option's value tokens)."""
    span = setting.value_span
    if span is None or "\n" in cfg.text[span[0]:span[1]]:
        return None
    return edit(cfg, span[0], span[1], content)


@_in_source
def rename_key(cfg: ServeConfig, setting: Setting, key: str) -> Optional[Edit]:
    """Write `key` in place of the setting's key (YAML) or option name (`--opt`, `--opt=v`)."""
    span = setting.key_span
    if span is None:
        return None
    written = cfg.text[span[0]:span[1]]
    if setting.source == "cli":
        option = written.split("=", 1)[0]
        if not option.startswith("-") or "\\" in option:
            return None                     # quoted or escaped on the command line
        return edit(cfg, span[0], span[0] + len(option), key)
    return edit(cfg, span[0], span[1], key)


@_in_source
def remove_setting(cfg: ServeConfig, setting: Setting) -> Optional[Edit]:
    """Remove the setting: its YAML line(s), or its option and value tokens on a command line."""
    span = setting.key_span
    if span is None:
        return None
    end = setting.value_span[1] if setting.value_span is not None else span[1]
    if "\n" in cfg.text[span[0]:end]:
        return None
    if setting.source == "cli":
        return _remove_tokens(cfg, span[0], end)
    return _remove_line(cfg, span[0], end)


def _line_bounds(text: str, start: int, end: int) -> Tuple[int, int]:
    """Return (start of the line holding `start`, offset past the newline ending the line of `end`)."""
    line_start = text.rfind("\n", 0, start) + 1
    newline = text.find("\n", end)
    return line_start, len(text) if newline < 0 else newline + 1


def _remove_line(cfg: ServeConfig, start: int, end: int) -> Optional[Edit]:
    text = cfg.text
    line_start, line_end = _line_bounds(text, start, end)
    rest = text[end:line_end].strip()
    if text[line_start:start].strip() or (rest and not rest.startswith("#")):
        return None                         # shares its line (a flow mapping, a list item)
    code = text[line_start:end]
    if _ANCHOR.search(code):
        return None                         # an anchor other lines may refer to
    return edit(cfg, line_start, line_end, "")


def _remove_tokens(cfg: ServeConfig, start: int, end: int) -> Optional[Edit]:
    text = cfg.text
    line_start, line_end = _line_bounds(text, start, end)
    before = text[line_start:start]
    after = text[end:line_end].rstrip("\r\n")
    if not before.strip() and after.strip() == "\\":
        return edit(cfg, line_start, line_end, "")          # the tokens' own continued line
    if not before.strip() and not after.strip():
        return None          # the last line of a continued command: the `\` above would dangle
    trailing = len(after) - len(after.lstrip(" \t"))
    if trailing and after.strip():
        return edit(cfg, start, end + trailing, "")
    leading = len(before) - len(before.rstrip(" \t"))
    return edit(cfg, start - leading, end, "")


@_in_source
def insert_after(cfg: ServeConfig, setting: Setting, content: str) -> Optional[Edit]:
    """Insert `content` right after the setting as written (its value, else its key)."""
    span = setting.value_span or setting.key_span
    if span is None:
        return None
    return edit(cfg, span[1], span[1], content)


@_in_source
def add_line_after(cfg: ServeConfig, setting: Setting, line: str) -> Optional[Edit]:
    """Add the YAML `line` after the setting's line, indented like the setting's key."""
    span = setting.key_span
    if span is None or setting.source == "cli":
        return None
    text = cfg.text
    end = setting.value_span[1] if setting.value_span is not None else span[1]
    if "\n" in text[span[0]:end]:
        return None
    line_start, line_end = _line_bounds(text, span[0], end)
    indent = text[line_start:span[0]]
    if indent.strip():
        return None
    newline = "\r\n" if text[line_start:line_end].endswith("\r\n") else "\n"
    lead = "" if text[line_start:line_end].endswith("\n") else newline
    return edit(cfg, line_end, line_end, f"{lead}{indent}{line}{newline if not lead else ''}")
