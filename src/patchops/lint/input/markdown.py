"""Markdown -> the text of its shell code blocks, every other character blanked in place.

A README's fenced block (```` ```bash ````, `sh`, `shell`, `console`, `zsh`, or no language)
holding `docker run ... vllm/vllm-openai ...` is a launch as much as a script is. Blanking the
rest keeps each offset the file's own, so the shell lexer's positions are the README's lines
and columns; a `$ ` prompt at the start of a line is blanked too.
"""

from __future__ import annotations

import re

SUFFIXES = (".md", ".markdown")
SHELL_LANGUAGES = ("", "bash", "sh", "shell", "console", "zsh", "shell-session", "shellsession")
_FENCE = re.compile(r"^([ \t]{0,3})(`{3,}|~{3,})[ \t]*([^\s`]*)[^\n]*$", re.M)
_PROMPT = re.compile(r"^([ \t]*)(\$|#|>)[ \t]", re.M)


def shell_blocks(text: str) -> str:
    """Return `text` with everything outside shell code blocks (and prompts) turned into spaces."""
    chars = [" " if ch != "\n" else "\n" for ch in text]
    at = 0
    while True:
        opening = _FENCE.search(text, at)
        if opening is None:
            break
        fence = opening.group(2)
        language = opening.group(3).lower().strip("{}.")
        closing = re.compile(r"^[ \t]{0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$", re.M)
        end_match = closing.search(text, opening.end())
        body_start = opening.end() + 1
        body_end = end_match.start() if end_match else len(text)
        if language in SHELL_LANGUAGES:
            body = text[body_start:body_end]
            if language in ("console", "shell-session", "shellsession"):
                body = _PROMPT.sub(lambda m: m.group(1) + " " * (len(m.group(0)) - len(m.group(1))), body)
            else:
                body = re.sub(r"^([ \t]*)\$[ \t]", lambda m: m.group(1) + "  ", body, flags=re.M)
            chars[body_start:body_end] = body
        at = end_match.end() if end_match else len(text)
    return "".join(chars)
