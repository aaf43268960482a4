"""lint/vllm/messages.py: vLLM's own words, each quoted by a rule."""

from __future__ import annotations

import re
import string
from pathlib import Path

import patchops.lint.rules as rules_package
from patchops.lint.vllm import messages

NAMES = [name for name in vars(messages) if name.isupper()]


def test_every_message_is_quoted_by_a_rule():
    rules = "".join(path.read_text() for path in Path(rules_package.__file__).parent.glob("*.py"))
    unused = [name for name in NAMES if f"messages.{name}" not in rules]
    assert NAMES and not unused


def test_every_message_is_text_with_named_holes_only():
    for name in NAMES:
        text = getattr(messages, name)
        assert isinstance(text, str) and text.strip() == text, name
        holes = [field for _, field, _, _ in string.Formatter().parse(text) if field is not None]
        assert all(re.fullmatch(r"[a-z_]+(![rs])?", field) for field in holes), (name, holes)
