"""How vLLM's `--config` loader turns a YAML file into argv tokens, for a version.

`FlexibleArgumentParser._load_config_file` (`load_config_file` from 0.10.2) writes each key
as `--key` and its value as text: `true` as a bare flag, `false` dropped (or `--no-key` from
0.30 where the parser registers it), lists expanded (0.10.2+), mappings as JSON (0.9+), and
before that every value as its Python `str()`. What it drops goes into `ignored`, with why.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Dict, List

from patchops.lint.input.serve_config import ServeConfig, Setting
from patchops.lint.reading.command_line import Token
from patchops.lint.reading.option_table import OptionTable, action_of
from patchops.lint.reading.read_config import Fate, Outcome
from patchops.lint.vllm.releases import (BOOL_AS_FLAG, DICTS_AS_JSON, LISTS_EXPANDED,
                                         NO_FORM_FROM_YAML, Version)


def yaml_tokens(cfg: ServeConfig, table: OptionTable, version: Version,
                ignored: Dict[str, Outcome]) -> List[Token]:
    """Replay vLLM's `--config` loader over the YAML layer for `version`; add what it drops to `ignored`."""
    tokens: List[Token] = []
    serve = cfg.entrypoint == "serve"
    # The StoreBoolean dests the *reading* parser knows: under `vllm serve` that is the
    # top-level parser, which has none (utils.py `_load_config_file`, 0.7.3-0.10.x).
    store_boolean = set() if serve else {f.dest for f in table.flags.values()
                                         if action_of(f) == "store_boolean"}
    for setting in cfg.config_settings:
        key, value = setting.key, setting.value

        def emit(*texts: str) -> None:
            tokens.append(Token("--" + key, setting, "yaml"))
            tokens.extend(Token(t, setting, "yaml", is_value=True) for t in texts)

        if version < BOOL_AS_FLAG:
            emit(_py_str(value))            # 0.6.3: every value is `--k str(value)`
            continue
        if isinstance(value, bool):
            if value:
                emit()
            elif version >= NO_FORM_FROM_YAML:
                no_key = "--no-" + key
                if not serve and no_key in table.options:
                    tokens.append(Token(no_key, setting, "yaml"))
                else:
                    _drop(ignored, table, setting, _false_reason(cfg, version, key, table))
            elif key in store_boolean:
                emit(_py_str(value))
            else:
                _drop(ignored, table, setting, _false_reason(cfg, version, key, table))
            continue
        if isinstance(value, list) and version >= LISTS_EXPANDED:
            if value:
                emit(*[_py_str(item) for item in value])
            else:
                _drop(ignored, table, setting, "vLLM drops an empty list from --config files "
                                               "(0.10.2+), so the flag keeps its default")
            continue
        if isinstance(value, dict) and version >= DICTS_AS_JSON:
            emit(json.dumps(value, default=str))
            continue
        emit(_py_str(value))
    return tokens


def _drop(ignored: Dict[str, Outcome], table: OptionTable, setting: Setting, why: str) -> None:
    name = table.dest_for(setting.key)
    ignored[name] = Outcome(Fate.IGNORED, dataclasses.replace(setting, name=name), name, why)


def _py_str(value: Any) -> str:
    return str(value)


def _false_reason(cfg: ServeConfig, version: Version, key: str, table: OptionTable) -> str:
    known = table.dest_for(key) in table.flags
    tail = "" if known else f" (`{key}` is not a flag of this vLLM either)"
    if cfg.entrypoint == "serve":
        return f"vllm serve drops `false` values from --config files (0.7.3+){tail}"
    if version >= NO_FORM_FROM_YAML:
        return (f"vLLM drops `false` from --config files unless `--no-{key}` exists "
                f"(write the key with dashes){tail}")
    return f"vLLM drops `false` values from --config files (0.7.3+){tail}"
