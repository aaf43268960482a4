"""Argv tokens, and how vLLM's FlexibleArgumentParser rewrites them before argparse sees them.

`parse_args` (utils.py, utils/argparse_utils.py from 0.10.2) turns `_` into `-` in option
names, `-O3` into a compilation level (0.9+) or `--optimization-level` (0.12+; `-O.x` too from
0.13), and merges dotted `--x.y v` keys into one JSON `--x` (0.9+). `rewrite` replays that for
a version over the tokens of both layers (the `--config` file's and the command line's).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from patchops.lint.input.serve_config import Setting
from patchops.lint.vllm.releases import DOTTED_KEYS, O_DOTTED_IS_OPT_LEVEL, O_IS_OPT_LEVEL, Version


@dataclass
class Token:
    """One argv string, where it came from, and how vLLM will take it."""

    text: str
    origin: Setting           # the YAML key or the command-line token it came from
    layer: str                # "yaml" | "cli"
    is_value: bool = False    # a YAML value token (never an option, never the model)
    crash: Optional[str] = None  # vLLM's own parsing fails on this token (the exception text)


def rewrite(tokens: List[Token], version: Version) -> List[Token]:
    """Replay FlexibleArgumentParser.parse_args's rewriting of option tokens for `version`."""
    out: List[Token] = []
    for index, tok in enumerate(tokens):
        text = tok.text
        if tok.is_value:
            out.append(tok)
            continue
        if text.startswith("--"):
            if "=" in text:
                key, value = text.split("=", 1)
                out.append(dataclasses.replace(tok, text=f"{_dash_key(key, version)}={value}"))
            else:
                out.append(dataclasses.replace(tok, text=_dash_key(text, version)))
            continue
        o_level = text.startswith("-O") and text != "-O" and (text[2] != "." or version >= O_DOTTED_IS_OPT_LEVEL)
        if version >= DOTTED_KEYS and o_level:
            level = text[3:] if text[2] == "=" else text[2:]
            if version >= O_IS_OPT_LEVEL:
                out.append(dataclasses.replace(tok, text="--optimization-level"))
                out.append(Token(level, tok.origin, tok.layer, is_value=True))
            else:
                out.append(dataclasses.replace(tok, text=f"-O.level={level}"))
            continue
        nxt = tokens[index + 1].text if index + 1 < len(tokens) else None
        if version >= DOTTED_KEYS and text == "-O" and nxt in ("0", "1", "2", "3"):
            new = "--optimization-level" if version >= O_IS_OPT_LEVEL else "-O.level"
            out.append(dataclasses.replace(tok, text=new))
            continue
        if version >= O_IS_OPT_LEVEL and text.startswith("-O."):
            out.append(dataclasses.replace(tok, text="-cc" + text[2:]))
            continue
        out.append(tok)
    if version >= DOTTED_KEYS:
        out = _merge_dotted(out)
    return out


def _dash_key(key: str, version: Version) -> str:
    body = key[2:]
    if version >= DOTTED_KEYS:
        head, dot, tail = body.partition(".")
        return "--" + head.replace("_", "-") + dot + tail
    return "--" + body.replace("_", "-")


def _merge_dotted(tokens: List[Token]) -> List[Token]:
    """Merge `--x.y v` / `--x.y=v` / `--x.y+ a,b` into one trailing `--x '{"y": v}'` (0.9+)."""
    delete = set()
    merged: Dict[str, Dict[str, Any]] = {}
    origins: Dict[str, Token] = {}
    for index, tok in enumerate(tokens):
        text = tok.text
        # vLLM takes every token that starts with "-" and holds a "." for a dotted key, values
        # included: `--gpu-memory-utilization -0.1` loses its value (utils.py, 0.9+).
        if index in delete or not (text.startswith("-") and "." in text):
            continue
        if "=" in text:
            head, value_str = text.split("=", 1)
            if "." not in head:
                continue
        else:
            if index + 1 >= len(tokens):
                # processed_args[i + 1] past the end
                tokens[index] = dataclasses.replace(tok, crash="IndexError: list index out of range "
                                                    f"(vLLM reads {text!r} as a dotted --key.sub option)")
                continue
            head, value_str = text, tokens[index + 1].text
            delete.add(index + 1)
        value: Any
        if head.endswith("+"):
            head = head[:-1]
            value_str = json.dumps(value_str.split(","))
        key, *keys = head.split(".")
        try:
            value = json.loads(value_str)
        except ValueError:
            value = value_str
        for part in reversed(keys):
            value = {part: value}
        _dict_update(merged.setdefault(key, {}), value if isinstance(value, dict) else {})
        origins[key] = tok
        delete.add(index)
    if not merged:
        return tokens
    out = [tok for index, tok in enumerate(tokens) if index not in delete]
    for key, value in merged.items():
        origin = origins[key]
        out.append(dataclasses.replace(origin, text=key, is_value=False))
        out.append(Token(json.dumps(value), origin.origin, origin.layer, is_value=True))
    return out


def _dict_update(original: Dict[str, Any], update: Dict[str, Any]) -> None:
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(original.get(key), dict):
            _dict_update(original[key], value)
        elif isinstance(value, list) and isinstance(original.get(key), list):
            original[key] += value
        else:
            original[key] = value

