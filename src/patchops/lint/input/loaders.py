"""Serve specs, plain vLLM `--config` YAML and launch commands -> one positioned ServeConfig.

Three inputs, one result:

* a serve spec (`serve.yaml`, read by spec_reader);
* a plain vLLM `--config` YAML (flat keys, as `vllm serve --config` reads it; spec_reader);
* a launch command, given as a string or a shell script (`vllm serve MODEL ...` or
  `python -m vllm.entrypoints.openai.api_server ...`, with env prefixes, `export`s and `\\`
  continuations; launch_command).

Bad input raises LintInputError with `file:line:col: ...`.
"""

from __future__ import annotations

import codecs
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Set, Tuple

from patchops.core.errors import LintInputError
from patchops.lint.input import yaml_nodes as yamlread
from patchops.lint.input.serve_config import ServeConfig
from patchops.lint.input.launch_command import LAUNCH_ANYWHERE, looks_like_command, read_command
from patchops.lint.input.spec import SPEC_ONLY_KEYS, read_plain_config, read_spec
from patchops.lint.input.yaml_nodes import YMap, YScalar

COMMAND_SUFFIXES = (".sh", ".bash", ".zsh", ".cmd", ".command")
KINDS = ("spec", "config", "command")


@dataclass
class LoadedFile:
    """Every vLLM launch one file holds (a manifest may hold several), or why it holds none."""

    path: str
    configs: List[ServeConfig] = field(default_factory=list)
    skipped: Optional[str] = None


def load_file(path) -> ServeConfig:
    """Read a serve spec, a vLLM `--config` YAML or a launch script, detected by name and content."""
    return only_launch(load_file_inputs(path))


def load_file_inputs(path, text: Optional[str] = None) -> LoadedFile:
    """Read a file and return each vLLM launch it holds: a spec, config, script or deploy file.

    `text` is the file's content when it was read already (read_source, for `--fix`)."""
    shown = str(path)
    target = Path(path)
    if text is None:
        try:
            with open(target, "rb") as handle:
                data = handle.read(yamlread.MAX_BYTES + 1)
        except FileNotFoundError:
            raise LintInputError(f"{shown}: no such file") from None
        except IsADirectoryError:
            raise LintInputError(f"{shown}: is a directory, not a serve config") from None
        except OSError as exc:
            raise LintInputError(f"{shown}: cannot read: {exc.strerror or exc}") from None
        text = yamlread.decode(data, shown)
    kind = "command" if target.suffix.lower() in COMMAND_SUFFIXES else None
    return load_text_inputs(text, path=shown, kind=kind, base_dir=str(target.parent))


def load_text_inputs(text: str, *, path: str = "serve.yaml", kind: Optional[str] = None,
                     base_dir: Optional[str] = None, texts: Optional[Dict[str, str]] = None) -> LoadedFile:
    """Return each vLLM launch in `text`: deploy files by name and content (lint/input/deploy.py),
    else the one spec, config or command load_text() reads. `kind` "command" is a script,
    which may still run its launches in containers; "spec" and "config" are read as such.
    `texts` gives a `--config FILE` by its path in place of the file on disk (`lint --fix`)."""
    from patchops.lint.input import deploy

    include = _included_from(texts)

    if isinstance(text, bytes):
        text = yamlread.decode(text, path)
    text = yamlread.check_text(text, path)
    folder = base_dir if base_dir is not None else _base_dir(path)
    found = None
    if kind is None:
        found = deploy.read_deploy(text, path, folder, include, find_suppressions(text))
    script = kind == "command" or (kind is None and (path.lower().endswith(COMMAND_SUFFIXES)
                                                     or looks_like_command(text)))
    if found is None and script:
        found = deploy.read_script(text, path, folder, include, find_suppressions(text))
    elif found is None and kind is None:
        found = deploy.read_yaml(text, path, folder, include, find_suppressions(text))
    if found is not None:
        return LoadedFile(path, found.configs, found.skipped)
    return LoadedFile(path, [load_text(text, path=path, kind=kind, base_dir=base_dir, _deploy=False,
                                       _include=include)])


def only_launch(loaded: LoadedFile, launch: Optional[str] = None) -> ServeConfig:
    """Return the one launch of a file (or the one named `launch`); say which there are otherwise."""
    if loaded.skipped is not None:
        raise LintInputError(f"{loaded.path}: holds no vLLM launch: {loaded.skipped}")
    configs = loaded.configs
    if launch is not None:
        configs = [cfg for cfg in configs if cfg.launch_name == launch]
        if not configs:
            names = ", ".join(f"`{cfg.launch_name}`" for cfg in loaded.configs)
            raise LintInputError(f"{loaded.path}: no launch named `{launch}`; it holds {names}")
    if len(configs) > 1:
        names = ", ".join(f"`{cfg.launch_name}`" for cfg in configs)
        raise LintInputError(f"{loaded.path}: holds {len(configs)} vLLM launches ({names}); "
                             "name one with --launch NAME")
    return configs[0]


def _base_dir(path: str) -> str:
    parent = os.path.dirname(path)
    return parent if parent and os.path.isdir(parent) else os.getcwd()


def load_text(text: str, *, path: str = "serve.yaml", kind: Optional[str] = None,
              base_dir: Optional[str] = None, _deploy: bool = True,
              _include: Optional[Callable[[str], ServeConfig]] = None) -> ServeConfig:
    """Read `text` as a serve spec, a plain vLLM config or a launch command.

    `kind` is "spec", "config", "command", or None to detect it: a file named `*.sh`, a text
    starting with `#!` or whose first line runs a command is a command; a YAML mapping with any
    of `args`/`env`/`vllm`/`hardware`/`workload`/`entrypoint` is a spec; else a plain config.
    `base_dir` is where a command's relative `--config FILE` is looked up (default: the folder
    of `path` if it exists, else the current directory).
    """
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS} or None, not {kind!r}")
    if _deploy:
        return only_launch(load_text_inputs(text, path=path, kind=kind, base_dir=base_dir))
    if isinstance(text, bytes):
        text = yamlread.decode(text, path)
    text = yamlread.check_text(text, path)
    if kind is None and (path.lower().endswith(COMMAND_SUFFIXES) or looks_like_command(text)):
        kind = "command"
    if kind == "command":
        return load_command(text, path=path, base_dir=base_dir, include=_include)
    root = yamlread.read_yaml(text, path)
    if root is None:
        raise LintInputError(f"{path}: is empty; expected a YAML mapping of vLLM flags "
                             "or a serve spec")
    if not isinstance(root, YMap):
        if isinstance(root, YScalar) and isinstance(root.value, str) and kind is None \
                and LAUNCH_ANYWHERE.search(root.value):
            return load_command(text, path=path, base_dir=base_dir, include=_include)
        raise LintInputError(f"{path}:{root.line}:{root.column}: expected a mapping of settings "
                             f"at the top level, found {yamlread.kind_of(root)}")
    if kind is None:
        keys = {e.key.value for e in root.entries if isinstance(e.key.value, str)}
        kind = "spec" if keys & set(SPEC_ONLY_KEYS) else "config"
    cfg = ServeConfig(path=path, kind=kind, lines=text.splitlines(), text=text,
                      suppressions=find_suppressions(text))
    if kind == "spec":
        read_spec(cfg, root)
    else:
        read_plain_config(cfg, root)
    return cfg


def load_command(cmd: str, *, path: str = "<command>", base_dir: Optional[str] = None,
                 include: Optional[Callable[[str], ServeConfig]] = None) -> ServeConfig:
    """Read a launch command (one line or a shell script) that runs `vllm serve` or the api_server.

    `include` reads its `--config FILE` (default: from disk, load_file_as_config)."""
    text = yamlread.check_text(cmd, path)
    cfg = ServeConfig(path=path, kind="command", lines=text.splitlines(), text=text,
                      suppressions=find_suppressions(text))
    if base_dir is None:
        base_dir = _base_dir(path)
    read_command(cfg, text, base_dir, include=include or load_file_as_config)
    return cfg


_SUPPRESS = re.compile(r"#\s*patchops:\s*ignore\b(?:\[([^\]]*)\])?", re.IGNORECASE)


def find_suppressions(text: str) -> Dict[int, Set[str]]:
    """Return {line: codes} for `# patchops: ignore[CODE1,CODE2]` comments (bare `ignore`: {"*"})."""
    out: Dict[int, Set[str]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if "patchops" not in line:
            continue
        for match in _SUPPRESS.finditer(line):
            if match.group(1) is None:
                codes = {"*"}
            else:
                codes = {c.strip() for c in re.split(r"[,\s]+", match.group(1)) if c.strip()}
            if codes:
                out.setdefault(number, set()).update(codes)
    return out


def read_source(path) -> Tuple[str, bytes]:
    """Return a file's text (for `--fix`) and the UTF-8 BOM it starts with (b"" when none)."""
    data = Path(path).read_bytes()
    return yamlread.decode(data, str(path)), codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""


def _included_from(texts: Optional[Dict[str, str]]) -> Callable[[str], ServeConfig]:
    """Return what reads a `--config FILE`: `texts[FILE]` when given, else the file on disk."""
    if not texts:
        return load_file_as_config
    return lambda path: load_text(texts[path], path=path, kind="config") if path in texts \
        else load_file_as_config(path)


def load_file_as_config(path: str) -> ServeConfig:
    """Read a file as a plain vLLM `--config` YAML (what `vllm serve --config FILE` loads)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(yamlread.MAX_BYTES + 1)
    except OSError as exc:
        raise LintInputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return load_text(yamlread.decode(data, path), path=path, kind="config")
