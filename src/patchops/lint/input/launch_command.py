"""Read a launch command (one line or a shell script) that runs `vllm serve` or the api_server.

The script's own variables, `export`s, `set -a` and `cd` are followed up to the launch; the
launch's tokens become the command-line layer (`cfg.argv`), its `--config FILE` the YAML layer.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from patchops.core.errors import LintInputError
from patchops.lint.input.serve_config import ServeConfig, Setting, input_error, normalize_key
from patchops.lint.input.shell_lexer import Lexer, Lines, Word

_KEYWORDS = {"then", "do", "else", "elif", "if", "while", "until", "{", "!", "time"}
_NOT_LAUNCHERS = {"echo", "printf", "cat", "grep", "pip", "pip3", "which", "kill", "pkill",
                  "pgrep", "ps", "curl", "wget", "test", "[", "[[", "ls", "cd", "rm", "mkdir",
                  "tail", "head", "tee", "sleep", "wait", "git", "printenv", "type"}
# A first line that starts like a shell command.
_COMMAND_START = re.compile(
    r"\s*(?:#!|(?:export|exec|set|source|unset|nohup|env|cd)\s|[A-Za-z_][A-Za-z0-9_]*=\S*\s"
    r"|(?:\S*/)?vllm\s+serve\b|(?:\S*/)?python[0-9.]*\s+(?:-\S+\s+)*-m\s+vllm)")
# A vLLM launch anywhere in the text.
LAUNCH_ANYWHERE = re.compile(r"\bvllm\s+serve\b|-m\s+vllm\.entrypoints\.|"
                              r"vllm/entrypoints/openai/api_server\.py")
# A line that YAML reads as a mapping key or list item.
_YAML_LINE = re.compile(r"\s*(?:-\s|-$|[^\s#'\"-][^:#]*:(?:\s|$)|['\"][^'\"]*['\"]\s*:(?:\s|$)|\{|\[)")


def looks_like_command(text: str) -> bool:
    """Return whether `text` reads as a shell command/script rather than YAML."""
    if text.startswith("#!"):
        return True
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped == "---":
            continue
        if _COMMAND_START.match(line):
            return True
        return not _YAML_LINE.match(line) and bool(LAUNCH_ANYWHERE.search(text))
    return False


_API_SERVER_MODULE = "vllm.entrypoints.openai.api_server"
_CLI_MODULES = ("vllm.entrypoints.cli.main", "vllm")


def find_launch(words: List[Word]) -> Optional[Tuple[int, int, str]]:
    """Return (program index, first argument index, entrypoint) if `words` run vLLM's server."""
    first = 0
    while first < len(words) and (words[first].assignment() or words[first].text in _KEYWORDS):
        first += 1
    if first >= len(words) or os.path.basename(words[first].text) in _NOT_LAUNCHERS:
        return None
    for i in range(first, len(words)):
        base = os.path.basename(words[i].text)
        if base == "vllm" and i + 1 < len(words) and words[i + 1].text == "serve":
            return i, i + 2, "serve"
        if base.endswith("/entrypoints/openai/api_server.py") or \
                words[i].text.endswith("vllm/entrypoints/openai/api_server.py"):
            return i, i + 1, "api_server"
        if re.fullmatch(r"python[0-9.]*", base):
            j = i + 1
            while j < len(words) and words[j].text.startswith("-") and words[j].text != "-m":
                j += 1
            if j + 1 < len(words) and words[j].text == "-m":
                module = words[j + 1].text
                if module == _API_SERVER_MODULE:
                    return i, j + 2, "api_server"
                if module in _CLI_MODULES and j + 2 < len(words) and words[j + 2].text == "serve":
                    return i, j + 3, "serve"
    return None


@dataclass
class ScriptLaunch:
    """One launch in a script: its words, where the launch starts, and the script's state there.

    `found` is find_launch()'s (program, first argument, entrypoint) for `vllm serve` and the
    api_server, None for a container launch (`docker run ...`, read by container_run.py);
    `env` the variables exported before it, `cwd` the folder a relative `--config` is in.
    """

    words: List[Word]
    found: Optional[Tuple[int, int, str]]
    env: Dict[str, Setting]
    cwd: str


def script_launches(text: str, path: str, base_dir: str,
                    container: Callable[[List[Word]], bool] = lambda words: False) -> List[ScriptLaunch]:
    """Return every launch in `text` in order: `vllm serve`/api_server, and what `container` accepts.

    The script's own variables, `export`s, `set -a`, `unset` and `cd` are followed, so each
    launch sees the state the shell would give it.
    """
    lines = Lines(text)
    lexer = Lexer(text, path, lines)
    variables: Dict[str, str] = {}
    exported: Dict[str, Setting] = {}
    assigned: Dict[str, Setting] = {}
    auto_export = False
    cwd = base_dir
    found_launches: List[ScriptLaunch] = []

    def env_setting(word: Word, name: str, value: str) -> Setting:
        line, column = lines.position(word.start)
        return Setting(key=name, name=name, value=value, line=line, column=column,
                       raw=word.raw, source="env", key_span=(word.start, word.end))

    for words in lexer.commands(variables):
        found = find_launch(words)
        if found is not None or container(words):
            env = dict(exported)
            for word in words[:found[0] if found else 0]:   # `A=1 vllm serve`, `env A=1 ...`
                pair = word.assignment()
                if pair:
                    env[pair[0]] = env_setting(word, *pair)
            found_launches.append(ScriptLaunch(words, found, env, cwd))
            continue
        head = 0
        prefix: List[Tuple[Word, str, str]] = []
        while head < len(words) and words[head].assignment():
            name, value = words[head].assignment()  # type: ignore[misc]
            prefix.append((words[head], name, value))
            head += 1
        if head == len(words):            # plain `NAME=value` lines: shell variables
            for word, name, value in prefix:
                variables[name] = value
                setting = env_setting(word, name, value)
                assigned[name] = setting
                if auto_export or name in exported:
                    exported[name] = setting
            continue
        program = words[head].text
        rest = words[head + 1:]
        if program in ("export", "declare", "typeset"):
            for word in rest:
                if word.text.startswith("-"):
                    continue
                pair = word.assignment()
                if pair:
                    variables[pair[0]] = pair[1]
                    exported[pair[0]] = assigned[pair[0]] = env_setting(word, *pair)
                elif word.text in assigned:
                    exported[word.text] = assigned[word.text]
        elif program == "unset":
            for word in rest:
                variables.pop(word.text, None)
                exported.pop(word.text, None)
                assigned.pop(word.text, None)
        elif program == "set":
            for word in rest:
                if word.text.startswith("-") and "a" in word.text[1:]:
                    auto_export = True
                elif word.text.startswith("+") and "a" in word.text[1:]:
                    auto_export = False
        elif program == "cd" and rest:
            target = rest[0].text
            if "$" not in target and "`" not in target:
                cwd = os.path.normpath(os.path.join(cwd, os.path.expanduser(target)))
    return found_launches


def read_command(cfg: ServeConfig, text: str, base_dir: str,
                 include: Callable[[str], ServeConfig]) -> None:
    """Fill `cfg` from the first launch in `text`; `include` reads its `--config FILE` as a plain config."""
    launches = [found for found in script_launches(text, cfg.path, base_dir) if found.found]
    if not launches:
        raise LintInputError(f"{cfg.path}: no vLLM launch found; expected a `vllm serve MODEL ...` "
                             f"or `python -m {_API_SERVER_MODULE} ...` command")
    first = launches[0]
    cfg.env.update(first.env)
    program, first_arg, entrypoint = first.found  # type: ignore[misc]
    read_launch(cfg, first.words[first_arg:], entrypoint, Lines(text), first.cwd, include)


def read_launch(cfg: ServeConfig, words: List[Word], entrypoint: str, lines: Lines, cwd: str,
                include: Callable[[str], ServeConfig]) -> None:
    """Fill `cfg` from the words after `serve` (or the api_server module) of one launch.

    A word whose `end` is below its `start` is not written where it stands (a YAML scalar
    with escapes): it is positioned at its start, with no span for fixes.
    """
    cfg.entrypoint = entrypoint
    tokens: List[Setting] = []
    for word in words:
        line, column = lines.position(word.start)
        tokens.append(Setting(key=word.text, name=word.text, value=word.text, line=line,
                              column=column, raw=word.raw, source="cli",
                              key_span=(word.start, word.end) if word.end >= word.start else None,
                              unknown=word.unknown))
    _read_argv(cfg, tokens, cwd, include)


LAUNCH_ARGUMENTS = "<launch -- arguments>"


def with_arguments(cfg: ServeConfig, extra: List[str]) -> ServeConfig:
    """Return `cfg` with the arguments `patchops launch FILE -- ARGS` adds after its own.

    They are written in no file: their findings are in `<launch -- arguments>`, at the column
    of each in the arguments as a shell would quote them (line 1).
    """
    text = " ".join(shlex.quote(word) for word in extra)
    out = dataclasses.replace(cfg, argv=list(cfg.argv), args=dict(cfg.args),
                              duplicates=list(cfg.duplicates),
                              sources={**cfg.sources, LAUNCH_ARGUMENTS: ServeConfig(
                                  path=LAUNCH_ARGUMENTS, kind="command", text=text, lines=[text])})
    column = 1
    for word in extra:
        quoted = shlex.quote(word)
        out.argv.append(Setting(key=word, name=word, value=word, line=1, column=column, raw=quoted,
                                source="cli", file=LAUNCH_ARGUMENTS))
        column += len(quoted) + 1
    return out


_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


def is_option(token: str) -> bool:
    """Return whether argparse would read `token` as an option (not a value or negative number)."""
    return token.startswith("-") and len(token) > 1 and not _NEGATIVE_NUMBER.match(token) \
        and " " not in token


def _read_argv(cfg: ServeConfig, tokens: List[Setting], cwd: str,
               include: Callable[[str], ServeConfig]) -> None:
    """Record the command-line layer, load `--config FILE`, and pre-read flags without facts.

    Without vLLM's flag table the number of values a flag takes is unknown: following
    non-option tokens are its value (a list when more than one). `reading.read_as_vllm`
    re-reads `cfg.argv` with the real table.
    """
    argv: List[Setting] = []
    index = 0
    positional = cfg.entrypoint == "serve" and bool(tokens) and not is_option(tokens[0].value)
    if positional:
        first = tokens[0]
        cfg.model = Setting(key="model", name="model", value=first.value, line=first.line,
                            column=first.column, raw=first.raw, source="cli")
        argv.append(first)
        index = 1
    while index < len(tokens):
        token = tokens[index]
        if token.value == "--config":
            if index + 1 >= len(tokens):
                raise input_error(cfg.path, token, "`--config` needs a file name")
            if cfg.config_file is not None:
                raise input_error(cfg.path, token, "more than one `--config`; vLLM refuses this with "
                           "\"More than one config file specified!\"")
            target = tokens[index + 1]
            cfg.config_file = Setting(key="--config", name="config", value=target.value,
                                      line=target.line, column=target.column, raw=target.raw,
                                      source="cli", key_span=token.key_span,
                                      value_span=target.key_span)
            index += 2
            continue
        argv.append(token)
        index += 1
    cfg.argv = argv
    if cfg.config_file is not None:
        _load_included_config(cfg, cwd, include)

    cli: Dict[str, Setting] = {}
    index = 1 if positional else 0
    while index < len(argv):
        token = argv[index]
        index += 1
        text = token.value
        if not is_option(text):
            if cfg.model is None and cfg.entrypoint == "serve":
                cfg.model = Setting(key="model", name="model", value=text, line=token.line,
                                    column=token.column, raw=token.raw, source="cli")
            continue
        value: Any
        value_span = None
        unknown = token.unknown
        if text.startswith("--") and "=" in text:
            key, value = text.split("=", 1)
        elif text.startswith("-O") and not text.startswith("--") and len(text) > 2 and text[2] != ".":
            key, value = "-O", text[2:].lstrip("=")
        else:
            key = text
            values = []
            taken = index
            while index < len(argv) and not is_option(argv[index].value):
                values.append(argv[index].value)
                unknown = unknown or argv[index].unknown
                index += 1
            value = True if not values else values[0] if len(values) == 1 else values
            if values and argv[taken].key_span and argv[index - 1].key_span:
                value_span = (argv[taken].key_span[0], argv[index - 1].key_span[1])  # type: ignore[index]
        name = normalize_key(key)
        setting = Setting(key=key, name=name, value=value, line=token.line,
                          column=token.column, raw=token.raw, source="cli",
                          key_span=token.key_span, value_span=value_span, unknown=unknown)
        if name == "model":
            cfg.model = setting
            continue
        if name in cli:
            cfg.duplicates.append((cli[name], setting))
        cli[name] = setting
        cfg.args[name] = setting          # the command line wins over its --config file


def _load_included_config(cfg: ServeConfig, cwd: str, include: Callable[[str], ServeConfig]) -> None:
    """Read the command's `--config FILE` (if it is there) as a plain vLLM config."""
    assert cfg.config_file is not None
    anchor = cfg.config_file
    name = str(anchor.value)
    if not name.lower().endswith((".yaml", ".yml")):
        return                            # vLLM refuses it; reading reports it
    candidates = [name] if os.path.isabs(name) else [os.path.join(cwd, name), name]
    found = next((os.path.normpath(c) for c in candidates if os.path.isfile(c)), None)
    if found is None:
        return
    included = include(found)
    cfg.config_loaded = True
    cfg.sources[included.path] = included
    # Each key keeps its place in that file (Setting.file), so its findings, ignore comments
    # and fixes are the file's own.
    for setting in included.config_settings:
        placed = dataclasses.replace(setting, file=included.path)
        cfg.config_settings.append(placed)
        if placed.name == "model":
            if cfg.model is None:
                cfg.model = placed
        else:
            cfg.args[placed.name] = placed
    for earlier, later in included.duplicates:
        cfg.duplicates.append((dataclasses.replace(earlier, file=included.path),
                               dataclasses.replace(later, file=included.path)))
