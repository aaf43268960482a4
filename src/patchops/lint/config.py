"""Serve specs, plain vLLM `--config` YAML and launch commands -> one positioned ServeConfig.

Three inputs, one result:

* a serve spec (`serve.yaml`): `args:` (vLLM flags, spelled as a `--config` file spells them),
  `env:`, `model:` and optional context (`vllm:`, `hardware:`, `workload:`, `entrypoint:`);
* a plain vLLM `--config` YAML (flat keys, as `vllm serve --config` reads it);
* a launch command, given as a string or a shell script (`vllm serve MODEL ...` or
  `python -m vllm.entrypoints.openai.api_server ...`, with env prefixes, `export`s and `\\`
  continuations).

Every value keeps its 1-based line and column (of the key in YAML mappings, of the token in
commands). Nothing here knows vLLM's flags: `reading.read_as_vllm` turns the result into what a
given vLLM version will see. Bad input raises LintInputError with `file:line:col: ...`.
"""

from __future__ import annotations

import ast
import difflib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Set, Tuple

from patchops.errors import LintInputError
from patchops.lint import yamlread
from patchops.lint.yamlread import YEntry, YMap, YNode, YScalar, YSeq


@dataclass(frozen=True)
class Setting:
    """One value the user wrote, with where they wrote it.

    `key` is the spelling as written (`tp`, `max-model-len`, `--max_model_len`);
    `name` the normalised key (leading dashes stripped, `-` -> `_`; after
    `reading.read_as_vllm` the canonical EngineArgs/argparse dest); `value` what vLLM's
    reader gets (YAML: `yaml.safe_load` typing; command line: the token string, or True
    for a bare flag, or a list of tokens for nargs); `raw` the scalar text exactly as
    written (`yes`, `'8192'`), None for collections.
    """

    key: str
    name: str
    value: Any
    line: int
    column: int
    raw: Optional[str] = None
    source: str = "yaml"  # "yaml" | "cli" | "env"


@dataclass
class ServeConfig:
    path: str                                   # shown in diagnostics: "serve.yaml", "launch.sh", "<command>"
    kind: str                                   # "spec" | "config" | "command"
    entrypoint: str = "serve"                   # "serve" (vllm serve) | "api_server" (python -m vllm.entrypoints.openai.api_server)
    args: Dict[str, Setting] = field(default_factory=dict)      # by name; last occurrence wins
    env: Dict[str, Setting] = field(default_factory=dict)       # by variable name
    model: Optional[Setting] = None
    context: Dict[str, Setting] = field(default_factory=dict)   # dotted spec paths: "vllm.version", "hardware.gpus", "workload.concurrency"
    duplicates: List[Tuple[Setting, Setting]] = field(default_factory=list)  # (earlier, later) same key twice
    ignored: Dict[str, Tuple[Setting, str]] = field(default_factory=dict)    # name -> (setting, why vLLM will not see it), filled by reading
    unknown: List[Setting] = field(default_factory=list)        # keys vLLM's parser will reject, filled by reading
    suppressions: Dict[int, Set[str]] = field(default_factory=dict)  # line -> codes in `# patchops: ignore[CODE]`
    lines: List[str] = field(default_factory=list)
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
    # Filled by reading: settings vLLM's parser refuses with a fatal error although the key
    # is known (bad type, bad choice, `True` after a store_true flag in 0.6.3, ...):
    # name -> (setting, vLLM's error text).
    rejected: Dict[str, Tuple[Setting, str]] = field(default_factory=dict)
    read_by: Optional[str] = None               # vLLM version read_as_vllm used, None before
    model_facts: Optional[Any] = None           # the model's config.json (lint/model_facts.py), filled by lint

    def position_of(self, at) -> Tuple[int, int]:
        """Return (line, column) of a Setting, a (line, column) tuple, or (1, 1) for None."""
        if at is None:
            return (1, 1)
        if isinstance(at, Setting):
            return (at.line, at.column)
        return (int(at[0]), int(at[1]))

    def suppressed(self, line: int, code: str) -> bool:
        """Return whether `# patchops: ignore[...]` on `line` names `code` (or is bare)."""
        codes = self.suppressions.get(line, set())
        return code in codes or "*" in codes


# --- value helpers (also used by rules on read configs) -------------------------------------


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


# --- public API -----------------------------------------------------------------------------

SPEC_KEYS = ("args", "env", "model", "vllm", "hardware", "workload", "entrypoint")
# Keys no vLLM flag has: any of them at the top level marks a serve spec.
SPEC_ONLY_KEYS = ("args", "env", "vllm", "hardware", "workload", "entrypoint")
# Context sections of a serve spec: key -> expected type (see _context_value).
CONTEXT_SCHEMA: Dict[str, Dict[str, str]] = {
    "vllm": {"version": "text", "python": "text"},
    "hardware": {"gpus": "pos_int", "memory_gib": "pos_number", "platform": "text",
                 "compute_capability": "cc", "name": "text"},
    "workload": {"concurrency": "int_list", "max_tokens": "pos_int", "prompt_tokens": "pos_int"},
}
ENTRYPOINTS = {"serve": "serve", "api_server": "api_server", "api-server": "api_server"}
COMMAND_SUFFIXES = (".sh", ".bash", ".zsh", ".cmd", ".command")
KINDS = ("spec", "config", "command")


def load_file(path) -> ServeConfig:
    """Read a serve spec, a vLLM `--config` YAML or a launch script, detected by name and content."""
    shown = str(path)
    target = Path(path)
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
    return load_text(text, path=shown, kind=kind, base_dir=str(target.parent))


def load_text(text: str, *, path: str = "serve.yaml", kind: Optional[str] = None,
              base_dir: Optional[str] = None) -> ServeConfig:
    """Read `text` as a serve spec, a plain vLLM config or a launch command.

    `kind` is "spec", "config", "command", or None to detect it: a file named `*.sh`, a text
    starting with `#!` or whose first line runs a command is a command; a YAML mapping with any
    of `args`/`env`/`vllm`/`hardware`/`workload`/`entrypoint` is a spec; else a plain config.
    `base_dir` is where a command's relative `--config FILE` is looked up (default: the folder
    of `path` if it exists, else the current directory).
    """
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS} or None, not {kind!r}")
    if isinstance(text, bytes):
        text = yamlread.decode(text, path)
    text = yamlread.check_text(text, path)
    if kind is None and (path.lower().endswith(COMMAND_SUFFIXES) or looks_like_command(text)):
        kind = "command"
    if kind == "command":
        return load_command(text, path=path, base_dir=base_dir)
    root = yamlread.read_yaml(text, path)
    if root is None:
        raise LintInputError(f"{path}: is empty; expected a YAML mapping of vLLM flags "
                             "or a serve spec")
    if not isinstance(root, YMap):
        if isinstance(root, YScalar) and isinstance(root.value, str) and kind is None \
                and _LAUNCH_ANYWHERE.search(root.value):
            return load_command(text, path=path, base_dir=base_dir)
        raise LintInputError(f"{path}:{root.line}:{root.column}: expected a mapping of settings "
                             f"at the top level, found {yamlread.kind_of(root)}")
    if kind is None:
        keys = {e.key.value for e in root.entries if isinstance(e.key.value, str)}
        kind = "spec" if keys & set(SPEC_ONLY_KEYS) else "config"
    cfg = ServeConfig(path=path, kind=kind, lines=text.splitlines(),
                      suppressions=find_suppressions(text))
    if kind == "spec":
        _read_spec(cfg, root)
    else:
        _read_plain_config(cfg, root)
    return cfg


def load_command(cmd: str, *, path: str = "<command>", base_dir: Optional[str] = None) -> ServeConfig:
    """Read a launch command (one line or a shell script) that runs `vllm serve` or the api_server."""
    text = yamlread.check_text(cmd, path)
    cfg = ServeConfig(path=path, kind="command", lines=text.splitlines(),
                      suppressions=find_suppressions(text))
    if base_dir is None:
        parent = os.path.dirname(path)
        base_dir = parent if parent and os.path.isdir(parent) else os.getcwd()
    _read_command(cfg, text, base_dir)
    return cfg


# --- suppressions ---------------------------------------------------------------------------

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


# --- YAML inputs ----------------------------------------------------------------------------


def _err(path: str, at, message: str) -> LintInputError:
    if at is None:
        return LintInputError(f"{path}: {message}")
    return LintInputError(f"{path}:{at.line}:{at.column}: {message}")


def _did_you_mean(word: str, choices) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean `{close[0]}`?" if close else ""


def _key_text(path: str, entry: YEntry, where: str) -> str:
    key = entry.key
    if isinstance(key.value, str):
        return key.value
    if isinstance(key.value, bool) and not key.quoted:
        raise _err(path, key, f"the key `{key.raw}` in {where} is read by YAML as the boolean "
                              f"{key.value} (YAML 1.1), not as text; quote it: \"{key.text}\"")
    raise _err(path, key, f"the key `{key.raw}` in {where} is {yamlread.kind_of(key)}, "
                          "not a name; keys must be strings")


def _setting(key: str, name: str, entry: YEntry, source: str = "yaml") -> Setting:
    node = entry.value
    if isinstance(node, YScalar):
        value, raw = node.value, node.raw
    else:
        value, raw = yamlread.to_python(node), None
    return Setting(key=key, name=name, value=value, line=entry.key.line,
                   column=entry.key.column, raw=raw, source=source)


def _nested_duplicates(cfg: ServeConfig, node: YNode, prefix: str) -> None:
    """Record duplicate keys in every mapping below `node` (its own keys are handled by the caller)."""
    stack: List[Tuple[YNode, str, bool]] = [(node, prefix, False)]
    while stack:
        current, where, check_self = stack.pop()
        if isinstance(current, YMap):
            if check_self:
                for earlier, later in current.duplicates():
                    name = f"{where}.{earlier.key.text}" if where else earlier.key.text
                    cfg.duplicates.append((_setting(earlier.key.text, name, earlier),
                                           _setting(later.key.text, name, later)))
            for entry in current.entries:
                if not entry.merged:
                    child = f"{where}.{entry.key.text}" if where else entry.key.text
                    stack.append((entry.value, child, True))
        elif isinstance(current, YSeq):
            for index, item in enumerate(current.items):
                stack.append((item, f"{where}[{index}]", True))


def _read_flag_mapping(cfg: ServeConfig, node: YMap, where: str) -> None:
    """Read a mapping of vLLM flags (spec `args:` or a plain config) into args/config_settings."""
    by_key: Dict[str, Setting] = {}
    by_name: Dict[str, Setting] = {}
    from_merge: Set[str] = set()        # names last set by a `<<:` merge (overriding is fine)
    for entry in node.entries:
        key = _key_text(cfg.path, entry, where)
        setting = _setting(key, normalize_key(key), entry)
        if not entry.merged and setting.name in by_name and setting.name not in from_merge:
            cfg.duplicates.append((by_name[setting.name], setting))
        by_name[setting.name] = setting
        if entry.merged:
            from_merge.add(setting.name)
        else:
            from_merge.discard(setting.name)
        by_key[key] = setting           # dict order: first occurrence, last value (safe_load)
        if setting.name == "model":
            cfg.model = setting
        else:
            cfg.args[setting.name] = setting
    cfg.config_settings = list(by_key.values())
    _nested_duplicates(cfg, node, where if where != "the file" else "")


def _read_plain_config(cfg: ServeConfig, root: YMap) -> None:
    _read_flag_mapping(cfg, root, "the file")


def _read_spec(cfg: ServeConfig, root: YMap) -> None:
    path = cfg.path
    top: Dict[str, YEntry] = {}
    for earlier, later in root.duplicates():
        name = earlier.key.text
        cfg.duplicates.append((_setting(name, name, earlier), _setting(name, name, later)))
    for entry in root.entries:
        key = _key_text(path, entry, "the serve spec")
        if key not in SPEC_KEYS:
            raise _err(path, entry.key, f"unknown top-level key `{key}` in a serve spec"
                       f"{_did_you_mean(key, SPEC_KEYS)} (expected: {', '.join(SPEC_KEYS)}; "
                       "vLLM flags go under `args:`)")
        top[key] = entry

    if "args" in top:
        node = top["args"].value
        if isinstance(node, YMap):
            _read_flag_mapping(cfg, node, "args")
            args_model = cfg.model
        elif isinstance(node, YScalar) and node.value is None:
            args_model = None
        else:
            raise _err(path, top["args"].key, "`args` must be a mapping of vLLM flags "
                       f"(like `max-model-len: 4096`), found {yamlread.kind_of(node)}")
    else:
        args_model = None

    if "model" in top:
        entry = top["model"]
        if not isinstance(entry.value, YScalar) or not isinstance(entry.value.value, str) \
                or not entry.value.value.strip():
            raise _err(path, entry.key, "`model` must be a model name or path (a string), found "
                       f"{yamlread.kind_of(entry.value)}")
        model = _setting("model", "model", entry)
        if args_model is not None:
            cfg.duplicates.append((args_model, model))
        cfg.model = model

    if "env" in top:
        node = top["env"].value
        if isinstance(node, YMap):
            for earlier, later in node.duplicates():
                name = earlier.key.text
                cfg.duplicates.append((_env_setting(path, earlier), _env_setting(path, later)))
            for entry in node.entries:
                setting = _env_setting(path, entry)
                cfg.env[setting.name] = setting
        elif not (isinstance(node, YScalar) and node.value is None):
            raise _err(path, top["env"].key, "`env` must be a mapping of environment variables "
                       f"(like `VLLM_USE_V1: \"1\"`), found {yamlread.kind_of(node)}")

    if "entrypoint" in top:
        entry = top["entrypoint"]
        node = entry.value
        value = node.value if isinstance(node, YScalar) else None
        if not isinstance(value, str) or value not in ENTRYPOINTS:
            raise _err(path, entry.key, "`entrypoint` must be `serve` (vllm serve) or "
                       "`api_server` (python -m vllm.entrypoints.openai.api_server), found "
                       f"{yamlread.kind_of(node)}")
        cfg.entrypoint = ENTRYPOINTS[value]
        cfg.context["entrypoint"] = _setting("entrypoint", "entrypoint", entry)

    for section, schema in CONTEXT_SCHEMA.items():
        if section not in top:
            continue
        entry = top[section]
        node = entry.value
        if isinstance(node, YScalar) and node.value is None:
            continue
        if not isinstance(node, YMap):
            raise _err(path, entry.key, f"`{section}` must be a mapping (keys: "
                       f"{', '.join(schema)}), found {yamlread.kind_of(node)}")
        for earlier, later in node.duplicates():
            name = f"{section}.{earlier.key.text}"
            cfg.duplicates.append((_setting(earlier.key.text, name, earlier),
                                   _setting(later.key.text, name, later)))
        for item in node.entries:
            key = _key_text(path, item, f"`{section}`")
            if key not in schema:
                raise _err(path, item.key, f"unknown key `{key}` in `{section}`"
                           f"{_did_you_mean(key, schema)} (expected: {', '.join(schema)})")
            value = _context_value(path, f"{section}.{key}", item, schema[key])
            if value is _ABSENT:
                continue
            raw = item.value.raw if isinstance(item.value, YScalar) else None
            cfg.context[f"{section}.{key}"] = Setting(
                key=key, name=f"{section}.{key}", value=value, line=item.key.line,
                column=item.key.column, raw=raw, source="yaml")


def _env_setting(path: str, entry: YEntry) -> Setting:
    name = _key_text(path, entry, "`env`")
    node = entry.value
    if not isinstance(node, YScalar):
        raise _err(path, entry.key, f"the environment variable `{name}` must have a plain value, "
                   f"found {yamlread.kind_of(node)}")
    # An environment variable is text: keep it as written (`VLLM_USE_V1: 1` means "1", and
    # `true` means "true", not Python's True).
    value = "" if node.tag == yamlread.NULL_TAG and not node.quoted else node.text
    return Setting(key=name, name=name, value=value, line=entry.key.line,
                   column=entry.key.column, raw=node.raw, source="env")


_ABSENT = object()


def _context_value(path: str, dotted: str, entry: YEntry, expected: str) -> Any:
    node = entry.value
    where = entry.key
    if isinstance(node, YScalar) and node.value is None and not node.quoted:
        return _ABSENT
    got = yamlread.kind_of(node)
    if expected == "text":
        if not isinstance(node, YScalar):
            raise _err(path, where, f"`{dotted}` must be a plain value, found {got}")
        return node.text            # `version: 0.10` stays "0.10", not the float 0.1
    if expected in ("pos_int", "pos_number"):
        value = node.value if isinstance(node, YScalar) else None
        ok_types = (int,) if expected == "pos_int" else (int, float)
        if isinstance(value, bool) or not isinstance(value, ok_types) or value <= 0:
            noun = "a positive integer" if expected == "pos_int" else "a positive number"
            raise _err(path, where, f"`{dotted}` must be {noun}, found {got}")
        return value
    if expected == "cc":
        value = node.value if isinstance(node, YScalar) else None
        if isinstance(value, bool) or parse_compute_capability(value) is None:
            raise _err(path, where, f"`{dotted}` must be a CUDA compute capability such as 8.0, "
                       f"\"8.9\" or \"sm_90\", found {got}")
        return value
    if expected == "int_list":
        if not isinstance(node, YSeq) or not node.items:
            raise _err(path, where, f"`{dotted}` must be a list of positive integers such as "
                       f"[1, 2, 4, 8], found {got}")
        values = []
        for item in node.items:
            value = item.value if isinstance(item, YScalar) else None
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise _err(path, item, f"`{dotted}` must be a list of positive integers such "
                           f"as [1, 2, 4, 8]; this item is {yamlread.kind_of(item)}")
            values.append(value)
        return values
    raise AssertionError(expected)  # pragma: no cover


# --- commands: a small positioned shell lexer -----------------------------------------------


@dataclass
class _Word:
    text: str              # after quote removal and known-variable expansion
    start: int             # offset of the first character in the source
    end: int
    raw: str               # the source slice
    quoted: bool = False

    def assignment(self) -> Optional[Tuple[str, str]]:
        match = re.match(r"[A-Za-z_][A-Za-z0-9_]*=", self.raw)
        if not match:
            return None
        name = match.group(0)[:-1]
        return name, self.text[len(name) + 1:]


_SEPARATORS = set(";&|()\n")
_KEYWORDS = {"then", "do", "else", "elif", "if", "while", "until", "{", "!", "time"}
_NOT_LAUNCHERS = {"echo", "printf", "cat", "grep", "pip", "pip3", "which", "kill", "pkill",
                  "pgrep", "ps", "curl", "wget", "test", "[", "[[", "ls", "cd", "rm", "mkdir",
                  "tail", "head", "tee", "sleep", "wait", "git", "printenv", "type"}
# A first line that starts like a shell command.
_COMMAND_START = re.compile(
    r"\s*(?:#!|(?:export|exec|set|source|unset|nohup|env|cd)\s|[A-Za-z_][A-Za-z0-9_]*=\S*\s"
    r"|(?:\S*/)?vllm\s+serve\b|(?:\S*/)?python[0-9.]*\s+(?:-\S+\s+)*-m\s+vllm)")
# A vLLM launch anywhere in the text.
_LAUNCH_ANYWHERE = re.compile(r"\bvllm\s+serve\b|-m\s+vllm\.entrypoints\.|"
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
        return not _YAML_LINE.match(line) and bool(_LAUNCH_ANYWHERE.search(text))
    return False


class _Lexer:
    """Split shell text into simple commands of positioned words.

    Handles quotes, backslash escapes and `\\`-newline continuations, comments, `;`/`&&`/`||`/
    `|`/`&`/newline separators, redirections (dropped with their targets) and `$VAR`/`${VAR}`/
    `${VAR:-default}` for variables the script itself set. Anything fancier is kept as text.
    """

    def __init__(self, text: str, path: str, lines: "_Lines"):
        self.text = text
        self.path = path
        self.lines = lines
        self.i = 0

    def fail(self, offset: int, message: str) -> LintInputError:
        line, column = self.lines.position(offset)
        return LintInputError(f"{self.path}:{line}:{column}: {message}")

    def commands(self, variables: Dict[str, str]) -> Iterator[List[_Word]]:
        text, n = self.text, len(self.text)
        words: List[_Word] = []
        buf: List[str] = []
        start: Optional[int] = None
        quoted = False
        skip_next = False            # the next word is a redirection target

        def end_word(at: int) -> None:
            nonlocal buf, start, quoted, skip_next
            if start is not None:
                if skip_next:
                    skip_next = False
                else:
                    words.append(_Word("".join(buf), start, at, text[start:at], quoted))
            buf, start, quoted = [], None, False

        while self.i < n:
            c = text[self.i]
            if c == "\\":
                if self.i + 1 < n and text[self.i + 1] == "\n":
                    self.i += 2
                    continue
                if text.startswith("\r\n", self.i + 1):     # a script saved with CRLF endings
                    self.i += 3
                    continue
                if start is None:
                    start = self.i
                if self.i + 1 < n:
                    buf.append(text[self.i + 1])
                    quoted = True
                self.i += 2
                continue
            if c == "#" and start is None:
                while self.i < n and text[self.i] != "\n":
                    self.i += 1
                continue
            if c in " \t\r":
                end_word(self.i)
                self.i += 1
                continue
            if c in _SEPARATORS:
                end_word(self.i)
                skip_next = False
                self.i += 1
                if words:
                    yield words
                    words = []
                continue
            if c in "<>":
                # `2>&1`, `> log`, `>> log`, `< in`: drop the fd number, operator and target.
                if start is not None and "".join(buf).isdigit() and not quoted:
                    buf, start = [], None
                else:
                    end_word(self.i)
                while self.i < n and text[self.i] in "<>":
                    self.i += 1
                if self.i < n and text[self.i] == "&":
                    self.i += 1
                    while self.i < n and (text[self.i].isdigit() or text[self.i] == "-"):
                        self.i += 1
                    continue
                skip_next = True
                continue
            if start is None:
                start = self.i
            if c == "'":
                close = text.find("'", self.i + 1)
                if close < 0:
                    raise self.fail(self.i, "unterminated single quote in the command")
                buf.append(text[self.i + 1:close])
                quoted = True
                self.i = close + 1
                continue
            if c == '"':
                self.i += 1
                quoted = True
                while True:
                    if self.i >= n:
                        raise self.fail(start, "unterminated double quote in the command")
                    d = text[self.i]
                    if d == '"':
                        self.i += 1
                        break
                    if d == "\\" and self.i + 1 < n and text[self.i + 1] in '"\\$`\n':
                        if text[self.i + 1] != "\n":
                            buf.append(text[self.i + 1])
                        self.i += 2
                        continue
                    if d == "$":
                        buf.append(self.dollar(variables))
                        continue
                    buf.append(d)
                    self.i += 1
                continue
            if c == "$":
                buf.append(self.dollar(variables))
                continue
            if c == "`":
                close = text.find("`", self.i + 1)
                if close < 0:
                    raise self.fail(self.i, "unterminated backquote in the command")
                buf.append(text[self.i:close + 1])
                self.i = close + 1
                continue
            buf.append(c)
            self.i += 1
        end_word(n)
        if words:
            yield words

    def dollar(self, variables: Dict[str, str]) -> str:
        """Expand `$...` at self.i; unknown variables and substitutions stay as written."""
        text, n, at = self.text, len(self.text), self.i
        nxt = text[at + 1] if at + 1 < n else ""
        if nxt == "{":
            close = text.find("}", at + 2)
            if close < 0:
                raise self.fail(at, "unterminated `${` in the command")
            inner = text[at + 2:close]
            self.i = close + 1
            match = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)(?::?[-=](.*))?", inner, re.S)
            if match:
                name, default = match.group(1), match.group(2)
                if name in variables:
                    return variables[name]
                if default is not None:
                    return default
            return text[at:close + 1]
        if nxt == "(":
            depth, j = 0, at + 1
            while j < n:
                if text[j] == "(":
                    depth += 1
                elif text[j] == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            if j >= n:
                raise self.fail(at, "unterminated `$(` in the command")
            self.i = j + 1
            return text[at:j + 1]
        match = re.match(r"[A-Za-z_][A-Za-z0-9_]*", text[at + 1:])
        if match:
            name = match.group(0)
            self.i = at + 1 + len(name)
            return variables.get(name, "$" + name)
        self.i = at + 1
        return "$"


class _Lines:
    def __init__(self, text: str):
        self.starts = [0]
        for match in re.finditer("\n", text):
            self.starts.append(match.end())

    def position(self, offset: int) -> Tuple[int, int]:
        import bisect
        index = bisect.bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index] + 1


_API_SERVER_MODULE = "vllm.entrypoints.openai.api_server"
_CLI_MODULES = ("vllm.entrypoints.cli.main", "vllm")


def _find_launch(words: List[_Word]) -> Optional[Tuple[int, int, str]]:
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


def _read_command(cfg: ServeConfig, text: str, base_dir: str) -> None:
    lines = _Lines(text)
    lexer = _Lexer(text, cfg.path, lines)
    variables: Dict[str, str] = {}
    exported: Dict[str, Setting] = {}
    assigned: Dict[str, Setting] = {}
    auto_export = False
    cwd = base_dir

    def env_setting(word: _Word, name: str, value: str) -> Setting:
        line, column = lines.position(word.start)
        return Setting(key=name, name=name, value=value, line=line, column=column,
                       raw=word.raw, source="env")

    launch: Optional[Tuple[List[_Word], int, int, str]] = None
    for words in lexer.commands(variables):
        found = _find_launch(words)
        if found is not None:
            launch = (words, *found)
            break
        head = 0
        prefix: List[Tuple[_Word, str, str]] = []
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

    if launch is None:
        raise LintInputError(f"{cfg.path}: no vLLM launch found; expected a `vllm serve MODEL ...` "
                             f"or `python -m {_API_SERVER_MODULE} ...` command")
    words, program, first_arg, entrypoint = launch
    cfg.entrypoint = entrypoint
    cfg.env.update(exported)
    for word in words[:program]:         # `A=1 vllm serve`, `env A=1 vllm serve`, `exec`, ...
        pair = word.assignment()
        if pair:
            cfg.env[pair[0]] = env_setting(word, *pair)

    tokens: List[Setting] = []
    for word in words[first_arg:]:
        line, column = lines.position(word.start)
        tokens.append(Setting(key=word.text, name=word.text, value=word.text, line=line,
                              column=column, raw=word.raw, source="cli"))
    _read_argv(cfg, tokens, cwd)


_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


def is_option(token: str) -> bool:
    """Return whether argparse would read `token` as an option (not a value or negative number)."""
    return token.startswith("-") and len(token) > 1 and not _NEGATIVE_NUMBER.match(token) \
        and " " not in token


def _read_argv(cfg: ServeConfig, tokens: List[Setting], cwd: str) -> None:
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
                raise _err(cfg.path, token, "`--config` needs a file name")
            if cfg.config_file is not None:
                raise _err(cfg.path, token, "more than one `--config`; vLLM refuses this with "
                           "\"More than one config file specified!\"")
            target = tokens[index + 1]
            cfg.config_file = Setting(key="--config", name="config", value=target.value,
                                      line=target.line, column=target.column, raw=target.raw,
                                      source="cli")
            index += 2
            continue
        argv.append(token)
        index += 1
    cfg.argv = argv
    if cfg.config_file is not None:
        _load_included_config(cfg, cwd)

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
        if text.startswith("--") and "=" in text:
            key, value = text.split("=", 1)
        elif text.startswith("-O") and not text.startswith("--") and len(text) > 2:
            key, value = "-O", text[2:].lstrip("=")
        else:
            key = text
            values = []
            while index < len(argv) and not is_option(argv[index].value):
                values.append(argv[index].value)
                index += 1
            value = True if not values else values[0] if len(values) == 1 else values
        name = normalize_key(key)
        setting = Setting(key=key, name=name, value=value, line=token.line,
                          column=token.column, raw=token.raw, source="cli")
        if name == "model":
            cfg.model = setting
            continue
        if name in cli:
            cfg.duplicates.append((cli[name], setting))
        cli[name] = setting
        cfg.args[name] = setting          # the command line wins over its --config file


def _load_included_config(cfg: ServeConfig, cwd: str) -> None:
    """Read the command's `--config FILE` (if it is there) as a plain vLLM config."""
    assert cfg.config_file is not None
    anchor = cfg.config_file
    name = str(anchor.value)
    if not name.lower().endswith((".yaml", ".yml")):
        return                            # vLLM refuses it; reading reports it
    candidates = [name] if os.path.isabs(name) else [os.path.join(cwd, name), name]
    found = next((c for c in candidates if os.path.isfile(c)), None)
    if found is None:
        return
    included = load_file_as_config(found)
    cfg.config_loaded = True
    # Diagnostics print cfg.path, so the file's values are positioned at the `--config FILE`
    # token of the command; `raw` and `key` are kept as written in the YAML.
    for setting in included.config_settings:
        moved = Setting(key=setting.key, name=setting.name, value=setting.value,
                        line=anchor.line, column=anchor.column, raw=setting.raw, source="yaml")
        cfg.config_settings.append(moved)
        if moved.name == "model":
            if cfg.model is None:
                cfg.model = moved
        else:
            cfg.args[moved.name] = moved
    for earlier, later in included.duplicates:
        cfg.duplicates.append((_moved(earlier, anchor), _moved(later, anchor)))


def _moved(setting: Setting, anchor: Setting) -> Setting:
    return Setting(key=setting.key, name=setting.name, value=setting.value, line=anchor.line,
                   column=anchor.column, raw=setting.raw, source=setting.source)


def load_file_as_config(path: str) -> ServeConfig:
    """Read a file as a plain vLLM `--config` YAML (what `vllm serve --config FILE` loads)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(yamlread.MAX_BYTES + 1)
    except OSError as exc:
        raise LintInputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return load_text(yamlread.decode(data, path), path=path, kind="config")
