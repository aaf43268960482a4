"""PO905 chat-template-not-found."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import inputs, messages
from patchops.lint.vllm.local_files import CHAT_TEMPLATE, JINJA_CHARS


class ChatTemplateNotFound(Rule):
    """
    ## What it does
    Flags a `--chat-template` that reads as a file path (no `{`, `}` or newline, as vLLM's
    `validate_chat_template` decides) where no such file exists, tried as written and from
    the input's folder. From 0.2x a bare name may also be one of the templates vLLM ships
    (`CHAT_TEMPLATES_DIR`), so only a value with a folder in it is checked there. Whether
    the copy validates the template at start-up is read from the copy.

    ## Why is this bad?
    The server stops before loading the model: "The supplied chat template string
    (/models/chat.jinja) appears path-like, but doesn't exist!"

    ## Fix
    Point `--chat-template` at the file on the machine that runs vLLM (relative paths are
    read from vLLM's working directory), or pass the template text itself.
    """

    code = "PO905"
    name = "chat-template-not-found"
    severity = "error"
    versions = ">=0"
    vllm_message = messages.CHAT_TEMPLATE_NOT_FOUND
    VALID = [
        Example("model: m\nargs:\n  chat-template: '{% for m in messages %}{{ m.content }}{% endfor %}'\n"),
        Example("vllm serve m --chat-template template_chatml.jinja\n", kind="command", vllm="0.33.0"),
    ]
    INVALID = [
        Example("model: m\nargs:\n  chat-template: /nonexistent/template.jinja\n", at=(3, 3)),
        Example("vllm serve m --chat-template ./missing/chat.jinja\n", kind="command", vllm="0.33.0",
                at=(1, 14)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        found = inputs.setting(cfg, CHAT_TEMPLATE)
        how = facts.guards.chat_template_must_exist
        if found is None or how is None or not isinstance(found.value, str) or not found.value:
            return
        value = found.value
        if any(c in value for c in JINJA_CHARS) or (how == "builtin" and "/" not in value):
            return
        candidates = [Path(value).expanduser()]
        if not os.path.isabs(value) and Path(cfg.path).parent != Path(""):
            candidates.append(Path(cfg.path).parent / value)
        if any(c.exists() for c in candidates):
            return
        yield self.diagnostic(
            cfg, found, f"chat_template {value!r} reads as a file path, and no such file exists here",
            explanation=f"vLLM {facts.version} stops before loading the model",
            fields=(CHAT_TEMPLATE,),
            fix="give the path of the template on the machine that runs vLLM, or the template text",
            vllm_message=messages.CHAT_TEMPLATE_NOT_FOUND.format(value=value))
