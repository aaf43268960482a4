"""Convert one argv string the way a flag's argparse `type` would, for a vLLM version.

The facts name each flag's type (`int`, `json`, `human_int`, `optional_type(int)`, ...);
`convert` replays what that callable does with a string and raises BadValue with argparse's
own wording when it refuses, so `argument --x: invalid int value: 'abc'` reads as vLLM's.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any, Tuple

from patchops.lint.input.serve_config import human_readable_int
from patchops.lint.facts.model import Flag
from patchops.lint.vllm.releases import COMPILATION_JSON, COMPILATION_LITERAL_EVAL, Version


def type_kind(flag: Flag, version: Version) -> Tuple[str, bool]:
    """Return (kind, accepts "None") for a flag's argparse type from the facts.

    Understands the facts' names ("int", "float", "str", "bool", "json", "json_or_str",
    "human_int", "human_int_or_auto", "kvs", "json_or_kvs") and raw callable spellings ("optional_type(int)",
    "nullable_str", "json.loads", "human_readable_int", "CompilationConfig.from_cli"). Other
    names read as str.
    """
    low = (flag.type or "str").strip().lower()
    words = re.findall(r"[a-z]+", low)
    optional = bool(getattr(flag, "optional", False)) or low.startswith(("optional", "nullable"))
    if flag.dest == "compilation_config" and COMPILATION_LITERAL_EVAL <= version < COMPILATION_JSON and \
            ("json" in low or "from_cli" in low or "literal" in low):
        # CompilationConfig.from_cli reads "0".."3" or ast.literal_eval's dict in 0.7.x-0.8.x
        # (config.py); JSON from 0.9.
        return "compilation_literal", optional
    if "human" in low:
        return ("human_int_auto" if "auto" in low else "human_int"), optional
    if "json_or_str" in low or "union_dict_and_str" in low:
        return "json_or_str", optional
    if low == "json_or_kvs":
        return "json_or_kvs", True
    if "kvs" in words or "nullable_kvs" in low:
        return "kvs", True
    if "from_cli" in low or "json" in words or "loads" in words or "dict" in words:
        return "json", optional
    for base in ("int", "float", "bool", "str"):
        if base in words:
            return base, optional
    return "str", optional


class BadValue(Exception):
    """A value argparse refuses; the message is argparse's own."""


class ChanceValue(BadValue):
    """A value argparse refuses in some launches only: the choices depend on hash order.

    0.8.5 builds `--guided-decoding-backend`'s choices from one Literal of `Union[V0, V1]`,
    taken from a set. A Literal's hash mixes `hash(type(value))`, an address, so the pick
    changes from launch to launch even with PYTHONHASHSEED fixed (seen in the 0.8.5 venv:
    five runs with seed 2 gave 5, 3, 3, 3, 5 choices). The launches that accept the value go
    on with it, so lint reads it as given and reports the refusal too.
    """


def convert(flag: Flag, text: str, version: Version) -> Any:
    """Convert one argv string the way the flag's argparse `type` would; raise BadValue."""
    kind, optional = type_kind(flag, version)
    if optional and text in ("", "None"):
        return None
    try:
        if kind == "int":
            return int(text)
        if kind == "float":
            return float(text)
        if kind == "bool":
            return bool(text)
        if kind == "human_int":
            return human_readable_int(text)
        if kind == "human_int_auto":
            if text.strip() == "-1" or text.strip().lower() == "auto":
                return -1
            return human_readable_int(text)
        if kind == "json":
            return json.loads(text)
        if kind == "compilation_literal":
            if text in ("0", "1", "2", "3"):
                return {"level": int(text)}
            value = ast.literal_eval(text)
            if not isinstance(value, dict):
                raise ValueError("not a mapping")
            return value
        if kind == "json_or_str":             # union_dict_and_str: JSON only when it looks like {...}
            return json.loads(text) if re.match(r"^{.*}$", text) else text
        if kind == "kvs":                     # nullable_kvs (0.6.3-0.7.3): "image=2,video=1"
            return _key_values(text) if text else None
        if kind == "json_or_kvs":             # optional_type(json.loads), 0.8.x: JSON or "image=2"
            if re.match("^{.*}$", text):
                try:
                    return json.loads(text)
                except ValueError:
                    raise BadValue(f"Value {text} cannot be converted to <function loads>.") from None
            try:
                return _key_values(text)
            except ValueError as exc:
                raise BadValue(str(exc)) from None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        label = {"human_int": "human_readable_int", "human_int_auto": "human_readable_int_or_auto",
                 "json": "loads", "json_or_str": "union_dict_and_str",
                 "compilation_literal": "from_cli", "kvs": "nullable_kvs"}.get(kind, kind)
        detail = f" ({exc})" if kind in ("human_int", "human_int_auto") and "Decimals" in str(exc) else ""
        raise BadValue(f"invalid {label} value: {text!r}{detail}") from None
    return text


def _key_values(text: str) -> dict:
    """Read "image=2,video=1" as nullable_kvs does (its own messages)."""
    out = {}
    for item in text.split(","):
        parts = [p.lower().strip() for p in item.split("=")]
        if len(parts) != 2:
            raise ValueError("Each item should be in the form KEY=VALUE")
        try:
            out[parts[0]] = int(parts[1])
        except ValueError:
            raise ValueError(f"Failed to parse value of item {parts[0]}={parts[1]}") from None
    return out


def check_choice(flag: Flag, value: Any) -> None:
    """Raise BadValue as argparse does for a converted value outside the flag's choices."""
    if not flag.choices or value is None:
        return

    def among(values) -> bool:
        return value in values or str(value) in {str(c) for c in values}

    chance = flag.chance_choices or ()
    listed = flag.choices
    if among(chance):
        # Only some of the field's Literals hold it: refused whenever hash order picks
        # another one, and vLLM then lists what every Literal holds.
        listed = tuple(c for c in flag.choices if c not in chance)
    elif among(flag.choices):
        return
    choices = ", ".join(repr(c) for c in listed)
    raise (ChanceValue if among(chance) else BadValue)(f"invalid choice: {value!r} (choose from {choices})")


# LoRAModulePath's fields without a default, the same in every release (entrypoints/openai/
# serving_models.py 0.8.5, openai/models/protocol.py 0.33.0)
LORA_MODULE_REQUIRED = ("name", "path")


def lora_module_problem(items) -> str:
    """Return the parser error `LoRAParserAction` raises for `--lora-modules` values, else "".

    The action (entrypoints/openai/cli_args.py 0.8.5-0.10, launchers/ and common/cli_args.py
    later) reads `name=path` when an item has "=" and no ",", else JSON for LoRAModulePath.
    """
    for item in items:
        if item in (None, "") or ("=" in item and "," not in item):
            continue
        try:
            fields = json.loads(item)
        except json.JSONDecodeError:
            return f"Invalid JSON format for --lora-modules: {item}"
        if not isinstance(fields, dict):
            return (f"Invalid fields for --lora-modules: {item} - LoRAModulePath() argument after "
                    f"** must be a mapping, not {type(fields).__name__}")
        missing = [name for name in LORA_MODULE_REQUIRED if name not in fields]
        if missing:
            count = len(missing)
            names = " and ".join(repr(name) for name in missing)
            return (f"Invalid fields for --lora-modules: {item} - LoRAModulePath.__init__() missing "
                    f"{count} required positional argument{'s' if count > 1 else ''}: {names}")
    return ""
