"""Split a YAML scalar as a shell does, each word positioned where the file holds it.

A `command: >` folded scalar, a compose `command: "vllm serve ..."` string and the script of
`["/bin/sh", "-c", "..."]` are shell text inside YAML: the value a program gets is the scalar's
folded text, but a finding belongs at the file's line and column. The scalar's source region is
lexed in place (everything else blanked, folded line breaks as spaces), so every offset the
lexer reports is an offset of the file. When the region does not read as the value (escapes in
a double-quoted scalar), the value itself is lexed and each word is placed at the scalar's
start, without a span (`end < start`), so no fix edits it.
"""

from __future__ import annotations

from typing import Dict, List, Optional

from patchops.lint.input.shell_lexer import Lexer, Lines, Word
from patchops.lint.input.yaml_nodes import YScalar


def source_region(text: str, node: YScalar, newlines: bool = True) -> Optional[str]:
    """Return `text` blanked except the scalar's content, or None if that does not read as its value.

    `newlines`: a literal block's line breaks stay (they separate a script's commands); False
    turns them into spaces (a compose string command is split into words, lines or not).
    """
    if node.start < 0 or not isinstance(node.value, str):
        return None
    raw = text[node.start:node.end]
    start, end, folded = node.start, node.end, True
    if raw[:1] in ("|", ">"):
        newline = raw.find("\n")
        if newline < 0:
            return None
        start, folded = node.start + newline + 1, raw[0] == ">"
    elif raw[:1] in ("'", '"'):
        start, end = node.start + 1, node.end - 1
        if "\\" in raw or "''" in raw:
            return None
    body = text[start:end]
    if folded or not newlines:
        body = body.replace("\r\n", "  ").replace("\n", " ")
    if " ".join(body.split()) != " ".join(node.value.split()):
        return None
    return " " * start + body + " " * (len(text) - end)


def scalar_commands(text: str, path: str, lines: Lines, node: YScalar,
                    variables: Optional[Dict[str, str]] = None, newlines: bool = True,
                    expand: bool = True) -> List[List[Word]]:
    """Return the simple commands of the scalar's shell text, words positioned in `text`.

    `expand` False keeps `$` as written (compose splits a string command without a shell).
    """
    known = dict(variables or {}) if expand else None
    region = source_region(text, node, newlines)
    if region is not None:
        return list(Lexer(region, path, lines).commands(known))
    value = str(node.value)
    if not newlines:
        value = value.replace("\n", " ")
    commands = list(Lexer(value, path, Lines(value)).commands(known))
    return [[Word(w.text, node.start, -1, w.raw, w.quoted, w.unknown) for w in words] for words in commands]


def scalar_word(node: YScalar) -> Word:
    """Return one list item of an exec-form command as a Word: its value, spanning the scalar."""
    text = "" if node.value is None else node.text
    if node.start < 0:
        return Word(text, 0, -1, node.raw, node.quoted)
    raw = node.raw
    if raw[:1] in ("'", '"') and raw[-1:] == raw[:1] and "\\" not in raw and "''" not in raw[1:-1] \
            and "\n" not in raw:
        return Word(text, node.start + 1, node.end - 1, raw[1:-1], True)   # the quotes stay
    if raw[:1] in ("'", '"', "|", ">") or "\n" in raw:
        return Word(text, node.start, -1, raw, node.quoted)               # not one exact span
    return Word(text, node.start, node.end, raw, node.quoted)


def word_commands(text: str, path: str, lines: Lines, word: Word,
                  variables: Optional[Dict[str, str]] = None, expand: bool = True) -> List[List[Word]]:
    """Return the commands of a word that is itself a script (`sh -c 'vllm serve ...'`), in place.

    The word's text is lexed where it is written: inside its quotes when it is one quoted
    string, as written when unquoted; elsewhere (escapes, several quoted parts) at its start.
    """
    raw, start, end = word.raw, word.start, word.end
    known = dict(variables or {}) if expand else None
    if end >= start and len(raw) >= 2 and raw[0] in "'\"" and raw[-1] == raw[0] \
            and raw[0] not in raw[1:-1] and "\\" not in raw:
        start, end = start + 1, end - 1
    elif end < start or any(ch in raw for ch in "'\"\\"):
        commands = list(Lexer(word.text, path, Lines(word.text)).commands(known))
        return [[Word(w.text, word.start, -1, w.raw, w.quoted, w.unknown) for w in words] for words in commands]
    region = " " * start + text[start:end] + " " * (len(text) - end)
    return list(Lexer(region, path, lines).commands(known))
