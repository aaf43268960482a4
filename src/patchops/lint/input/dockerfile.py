"""Dockerfiles (and Containerfiles) -> what the final stage's container runs, a ContainerLaunch.

Read as the builder reads them: `\\` (or the `# escape=` directive's character) continues an
instruction, comment lines inside it are dropped, `ARG` defaults fill `${NAME}` in `FROM` and
`ENV`, a stage `FROM` another stage inherits its environment, entrypoint and command, and
setting `ENTRYPOINT` drops the command it inherited. `ENTRYPOINT` and `CMD` in exec form (a JSON
array) are one word per string, positioned inside the array; in shell form they run as
`/bin/sh -c TEXT`. A `# patchops: ignore[...]` comment line covers the instruction below it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from patchops.lint.input.serve_config import Setting
from patchops.lint.input.container import ContainerLaunch
from patchops.lint.input.shell_lexer import Lexer, Lines, Word

NAMES = re.compile(r"^(?:Dockerfile|Containerfile)(?:\..+)?$|.+\.(?:Dockerfile|Containerfile)$", re.I)
_DIRECTIVE = re.compile(r"^#\s*escape\s*=\s*(\S)\s*$", re.I)
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_INSTRUCTION = re.compile(r"^[ \t]*([A-Za-z]+)(?=[ \t]|$)")


def is_dockerfile(path: str) -> bool:
    """Return whether a file's name says it is a Dockerfile (`Dockerfile`, `x.Dockerfile`, ...)."""
    return bool(NAMES.match(path.replace("\\", "/").rsplit("/", 1)[-1]))


@dataclass
class Instruction:
    keyword: str            # upper case
    region: str             # the file's text blanked except this instruction's arguments
    start: int              # offset of the arguments' first character
    end: int
    lines: Tuple[int, int]  # first and last line of the instruction

    def body(self) -> str:
        """Return the arguments as one logical line (continuations and comment lines removed)."""
        return self.region[self.start:self.end]


@dataclass
class _Stage:
    image: Optional[Setting] = None
    env: Dict[str, Setting] = field(default_factory=dict)
    entrypoint: Optional[List[Word]] = None
    cmd: Optional[List[Word]] = None
    shell_script: Optional[Instruction] = None       # an ENTRYPOINT/CMD in shell form


def instructions(text: str) -> List[Instruction]:
    """Split a Dockerfile into instructions, each with a region that keeps the file's offsets."""
    escape = "\\"
    raw_lines = text.splitlines(keepends=True)
    for line in raw_lines:
        found = _DIRECTIVE.match(line.strip())
        if found:
            escape = found.group(1)
            continue
        if not line.startswith("#") or line.strip() == "#":
            break
    out: List[Instruction] = []
    offset, number, index = 0, 1, 0
    while index < len(raw_lines):
        line = raw_lines[index]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            offset += len(line)
            index += 1
            number += 1
            continue
        keyword = _INSTRUCTION.match(line)
        kept: List[Tuple[int, int]] = []
        first_line = number
        start = offset + (keyword.end() if keyword else 0)
        while True:
            content = line.rstrip("\r\n")
            line_start = offset
            body_from = start if line_start <= start < line_start + len(line) else line_start
            continues = content.rstrip().endswith(escape)
            body_to = line_start + (len(content.rstrip()) - 1 if continues else len(content))
            kept.append((body_from, body_to))
            offset += len(line)
            index += 1
            number += 1
            if not continues:
                break
            while index < len(raw_lines) and (raw_lines[index].strip().startswith("#")
                                             or not raw_lines[index].strip()):
                offset += len(raw_lines[index])       # comment and empty lines inside: dropped
                index += 1
                number += 1
            if index >= len(raw_lines):
                break
            line = raw_lines[index]
        chars = [" "] * len(text)
        for a, b in kept:
            chars[a:b] = text[a:b]
        region = "".join(chars)
        body_start = kept[0][0]
        while body_start < len(region) and region[body_start] in " \t":
            body_start += 1
        out.append(Instruction((keyword.group(1) if keyword else "").upper(), region, body_start,
                               kept[-1][1], (first_line, number - 1)))
    return out


def covered_lines(text: str, found: Dict[int, Set[str]]) -> Dict[int, int]:
    """Return {line: the ignore comment's line} for every line of an instruction right below a
    `# patchops: ignore` line (`found`: line -> codes): a Dockerfile has no end-of-line comments."""
    out: Dict[int, int] = {}
    for instruction in instructions(text):
        above = [line for line in found if line < instruction.lines[0]]
        if not above:
            continue
        nearest = max(above)
        between = text.splitlines()[nearest:instruction.lines[0] - 1]
        if all(not row.strip() or row.lstrip().startswith("#") for row in between):
            for line in range(instruction.lines[0], instruction.lines[1] + 1):
                out[line] = nearest
    return out


def read_dockerfile(text: str, path: str) -> Optional[ContainerLaunch]:
    """Return the ContainerLaunch of the final stage, None for a file with no `FROM`."""
    lines = Lines(text)
    args: Dict[str, str] = {}
    stages: Dict[str, _Stage] = {}
    stage: Optional[_Stage] = None
    inherited_cmd = False
    for ins in instructions(text):
        words = list(Lexer(ins.region[:ins.end], path, lines).commands({}))
        words = [w for command in words for w in command if w.start >= ins.start]
        if ins.keyword == "ARG":
            for word in words:
                name, _, default = word.text.partition("=")
                args.setdefault(name, _substitute(default, args))
        elif ins.keyword == "FROM":
            rest = [w for w in words if not w.text.startswith("--")]
            if not rest:
                continue
            reference = _substitute(rest[0].text, args)
            base = stages.get(reference.lower())
            stage = _Stage(env=dict(base.env), entrypoint=base.entrypoint, cmd=base.cmd,
                           image=base.image, shell_script=base.shell_script) if base else _Stage()
            inherited_cmd = True
            if base is None:
                line, column = lines.position(rest[0].start)
                stage.image = Setting(key="FROM", name="image", value=reference, line=line,
                                      column=column, raw=rest[0].raw, source="cli")
            if len(rest) >= 3 and rest[1].text.lower() == "as":
                stages[rest[2].text.lower()] = stage
        elif stage is None:
            continue
        elif ins.keyword == "ENV":
            _env(stage, ins, words, lines, args)
        elif ins.keyword in ("ENTRYPOINT", "CMD"):
            exec_form = _exec_form(ins)
            if ins.keyword == "ENTRYPOINT":
                stage.entrypoint = exec_form
                stage.shell_script = None if exec_form is not None else ins
                if inherited_cmd:
                    stage.cmd = None
            else:
                stage.cmd = exec_form
                inherited_cmd = False
                if exec_form is None and stage.entrypoint is None:
                    stage.shell_script = ins
    if stage is None:
        return None
    launch = ContainerLaunch(name="final stage", image=stage.image, env=dict(stage.env))
    if stage.shell_script is not None:
        ins = stage.shell_script
        script = Word(ins.body(), ins.start, ins.end, text[ins.start:ins.end])
        launch.command = [Word("/bin/sh", ins.start, -1, "/bin/sh"), Word("-c", ins.start, -1, "-c"), script]
        values = {key: str(setting.value) for key, setting in stage.env.items()}   # the shell's env
        launch.script = lambda word: list(Lexer(ins.region[:ins.end], path, lines).commands(values))
    else:
        launch.command = stage.entrypoint
        launch.args = list(stage.cmd or [])
    return launch


def _substitute(text: str, values: Dict[str, str]) -> str:
    def one(match: "re.Match[str]") -> str:
        name = match.group(1) or match.group(3)
        if name in values and values[name]:
            return values[name]
        return match.group(2) if match.group(2) is not None else match.group(0)

    return _VARIABLE.sub(one, text)


def _env(stage: _Stage, ins: Instruction, words: List[Word], lines: Lines, args: Dict[str, str]) -> None:
    if not words:
        return
    if "=" not in words[0].text:                       # legacy `ENV KEY value with spaces`
        key = words[0]
        rest = ins.region[key.end:ins.end].strip()
        line, column = lines.position(key.start)
        stage.env[key.text] = Setting(key=key.text, name=key.text, value=rest, line=line,
                                      column=column, raw=rest, source="env")
        return
    values = {**args, **{k: str(s.value) for k, s in stage.env.items()}}
    for word in words:
        name, sep, value = word.text.partition("=")
        if not sep:
            continue
        line, column = lines.position(word.start)
        exact = word.raw == word.text
        stage.env[name] = Setting(key=name, name=name, value=_substitute(value, values), line=line,
                                  column=column, raw=word.raw, source="env",
                                  key_span=(word.start, word.start + len(name)) if exact else None,
                                  value_span=(word.start + len(name) + 1, word.end) if exact else None)


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _exec_form(ins: Instruction) -> Optional[List[Word]]:
    """Return the words of a JSON-array ENTRYPOINT/CMD, each positioned in the file; None if shell form."""
    region, at, end = ins.region, ins.start, ins.end
    if at >= end or region[at] != "[":
        return None
    words: List[Word] = []
    at += 1
    expect_item = True
    while at < end:
        ch = region[at]
        if ch in " \t\r\n" or (ch == "\\" and region[at + 1:at + 2] in ("", " ", "\n", "\r")):
            at += 1
            continue
        if ch == "]":
            rest = region[at + 1:end].strip()
            return words if not rest else None
        if ch == "," and not expect_item:
            expect_item = True
            at += 1
            continue
        found = _STRING.match(region, at)
        if not found or not expect_item:
            return None
        literal = found.group(0)
        try:
            value = json.loads(literal)
        except ValueError:
            return None
        if "\\" in literal:
            words.append(Word(value, found.start(), -1, literal, True))
        else:
            words.append(Word(value, found.start() + 1, found.end() - 1, literal[1:-1], True))
        expect_item = False
        at = found.end()
    return None


