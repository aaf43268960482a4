"""The serve config a lint run reads: positioned Settings, and the value readers rules share.

A ServeConfig comes from a serve spec, a plain vLLM `--config` YAML or a launch command
(loaders.py reads all three). Every value keeps its 1-based line and column (of the key in
YAML mappings, of the token in commands). Nothing here knows vLLM's flags:
`reading.read_as_vllm` reads a ServeConfig, which stays as written, into the ReadConfig a
given vLLM version sees (lint/reading/read_config.py).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Set, Tuple

from patchops.core.errors import LintInputError


@dataclass(frozen=True)
class Setting:
    """One value the user wrote, with where they wrote it.

    `key` is the spelling as written (`tp`, `max-model-len`, `--max_model_len`);
    `name` the normalised key (leading dashes stripped, `-` -> `_`; after
    `reading.read_as_vllm` the canonical EngineArgs/argparse dest); `value` what vLLM's
    reader gets (YAML: `yaml.safe_load` typing; command line: the token string, or True
    for a bare flag, or a list of tokens for nargs); `raw` the scalar text exactly as
    written (`yes`, `'8192'`), None for collections. `key_span` and `value_span` are the
    (start, end) offsets of the key (or option token) and of its value in the input's text,
    for fixes; None where the setting is not written in that text (a command's `--config`
    file, a YAML alias or merge).
    """

    key: str
    name: str
    value: Any
    line: int
    column: int
    raw: Optional[str] = None
    source: str = "yaml"  # "yaml" | "cli" | "env"
    key_span: Optional[Tuple[int, int]] = field(default=None, compare=False)
    value_span: Optional[Tuple[int, int]] = field(default=None, compare=False)
    # The value holds a shell or compose expansion the input does not resolve (`$PORT`, an
    # unset `${VAR}`, `$(cmd)`): vLLM gets some text, not the one written, so nothing judges it.
    unknown: bool = False
    # The file it is written in when that is not the input itself (a key of a command's
    # `--config FILE`, `launch -- ARGS`): its line, column and spans are there (ServeConfig.sources).
    file: Optional[str] = None


@dataclass
class ServeConfig:
    """One launch as written: its settings by layer, its text and where it came from."""

    path: str                                   # shown in diagnostics: "serve.yaml", "launch.sh", "<command>"
    kind: str                                   # "spec" | "config" | "command"
    entrypoint: str = "serve"                   # "serve" (vllm serve) | "api_server" (python -m vllm.entrypoints.openai.api_server)
    args: Dict[str, Setting] = field(default_factory=dict)      # by name; last occurrence wins
    env: Dict[str, Setting] = field(default_factory=dict)       # by variable name
    model: Optional[Setting] = None
    context: Dict[str, Setting] = field(default_factory=dict)   # dotted spec paths: "vllm.version", "hardware.gpus", "workload.concurrency"
    duplicates: List[Tuple[Setting, Setting]] = field(default_factory=list)  # (earlier, later) same key twice
    suppressions: Dict[int, Set[str]] = field(default_factory=dict)  # line -> codes in `# patchops: ignore[CODE]`
    lines: List[str] = field(default_factory=list)
    text: str = ""                              # the input as read (no BOM): what spans index
    # The YAML layer vLLM's `--config` loader sees, in its order (one entry per exact key, the
    # last value winning, as in the dict yaml.safe_load returns): spec `args:`, a plain
    # config's keys (with `model:`), or the file a command passes with `--config FILE`.
    config_settings: List[Setting] = field(default_factory=list)
    # The command-line layer: each token after `serve` (or after the api_server module), in
    # order, without the `--config FILE` pair vLLM removes; `value` is the token after shell
    # quoting and known `$VAR`s, `raw` the token as written. Empty for YAML inputs.
    argv: List[Setting] = field(default_factory=list)
    config_file: Optional[Setting] = None       # a command's `--config FILE` (value: the path as written)
    config_loaded: bool = False                 # whether that file was found and read
    # A launch found in a deploy file (a manifest's container, a compose service, a `docker
    # run` line): its name in the file ("Deployment/qwen-chat container vllm"), None for the
    # file's only launch of a serve spec, config or script; and what the reader could not
    # know ("`HF_TOKEN` comes from a Secret: value unknown").
    launch_name: Optional[str] = None
    notes: List[str] = field(default_factory=list)
    # line of a finding -> line of the ignore comment that covers it, where that comment is not
    # on the finding's own line (a Dockerfile's `#` line above its instruction).
    covers: Dict[int, int] = field(default_factory=dict)
    container: Optional[str] = None             # the image the launch runs in, None on this machine
    # The other texts its settings are written in, by path (Setting.file): the `--config FILE`
    # a command loads, as read, and the arguments `launch FILE -- ARGS` adds; so a finding,
    # its ignore comment and its fix are in the text that holds the value.
    sources: Dict[str, "ServeConfig"] = field(default_factory=dict)

    def source_of(self, at) -> "ServeConfig":
        """Return the input `at` (a Setting, else a position in this input) is written in."""
        if isinstance(at, Setting) and at.file is not None:
            return self.sources.get(at.file, self)
        return self

    def position_of(self, at) -> Tuple[int, int]:
        """Return (line, column) of a Setting, a (line, column) tuple, or (1, 1) for None.

        A value that is not in the input (`--hardware`, a default: line 0) is at 1:1 of the
        input, as ruff places a file-level finding: SARIF's region starts at line 1.
        """
        if at is None:
            return (1, 1)
        line, column = (at.line, at.column) if isinstance(at, Setting) else (int(at[0]), int(at[1]))
        return (line, max(column, 1)) if line >= 1 else (1, 1)


def normalize_key(key: str) -> str:
    """Return a flag name without leading dashes, `-` -> `_` (`--max-model-len` -> `max_model_len`)."""
    return key.lstrip("-").replace("-", "_")


def human_readable_int(text: str) -> int:
    """Parse `32k` (32000), `32K` (32768), `25.6k`, or a plain int, like vLLM's human_readable_int."""
    value = text.strip()
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgGtT])", value)
    if match:
        number, suffix = match.groups()
        if suffix.islower():
            return int(float(number) * HUMAN_SUFFIXES[suffix])
        try:
            return int(number) * HUMAN_SUFFIXES[suffix]
        except ValueError:
            raise ValueError(f"Decimals are not allowed with binary suffixes like {suffix}. "
                             f"Did you mean to use {number}{suffix.lower()} instead?") from None
    return int(value)


def as_int(value: Any) -> Optional[int]:
    """Read an int leniently: YAML numbers, CLI strings, `32k`/`32K`, a one-item list; else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, (list, tuple)) and len(value) == 1:
        return as_int(value[0])
    if isinstance(value, str):
        try:
            return human_readable_int(value.strip().strip("'\""))
        except ValueError:
            return None
    return None


HUMAN_SUFFIXES = {"k": 10 ** 3, "m": 10 ** 6, "g": 10 ** 9, "t": 10 ** 12,
                  "K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30, "T": 2 ** 40}
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


def as_bool(value: Any) -> Optional[bool]:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return bool(value) if value in (0, 1) else None
    if isinstance(value, str):
        low = value.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
    return None


def parse_literal(text: str) -> Any:
    """Read a JSON or Python literal (`[1, 2]`, `{"level": 3}`); the text itself if neither."""
    text = text.strip()
    for parse in (json.loads, ast.literal_eval):
        try:
            return parse(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return text


def as_int_list(value: Any) -> Optional[List[int]]:
    """Read a list of ints from a YAML list, CLI tokens, "[1,2]", "1,2" or "1 2"."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        single = as_int(value)
        return None if single is None else [single]
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("[") or text.startswith("("):
            parsed = parse_literal(text)
            if isinstance(parsed, (list, tuple)):
                return as_int_list(list(parsed))
            return None
        parts = [p for p in re.split(r"[,\s]+", text) if p]
        return as_int_list(parts) if parts else []
    if isinstance(value, (list, tuple)):
        out: List[int] = []
        for item in value:
            if isinstance(item, str) and re.search(r"[,\s\[\]]", item.strip()):
                inner = as_int_list(item)
                if inner is None:
                    return None
                out.extend(inner)
                continue
            number = as_int(item)
            if number is None:
                return None
            out.append(number)
        return out
    return None


def parse_compute_capability(value: Any) -> Optional[float]:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
        return number / 10 if number >= 20 else number
    text = str(value).strip().lower()
    match = re.fullmatch(r"(?:sm_?|compute_)?(\d+)(?:\.(\d+))?", text)
    if not match:
        return None
    if match.group(2) is not None:
        return float(f"{match.group(1)}.{match.group(2)}")
    digits = match.group(1)
    if len(digits) >= 2:                      # "80" / "sm_90" / "120"
        return float(f"{digits[:-1]}.{digits[-1]}")
    return float(digits)


def input_error(path: str, at, message: str) -> LintInputError:
    """Return a LintInputError at `path:line:col` of `at` (a Setting or YAML node), or at `path`."""
    if at is None:
        return LintInputError(f"{path}: {message}")
    return LintInputError(f"{path}:{at.line}:{at.column}: {message}")
