"""Write settings and lists the way lint messages show them."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.input.serve_config import Setting

TYPE_WORDS = {"int": "an integer", "float": "a number", "str": "a string"}


def shown(found: Setting) -> str:
    """Return a setting's value for a message: the YAML text as written, else the read value."""
    if found.source != "cli" and found.raw is not None:
        return found.raw
    raw = found.value
    if isinstance(raw, bool):
        return str(raw).lower()
    if isinstance(raw, (list, tuple)):
        return "[" + ", ".join(str(x) for x in raw) + "]"
    return str(raw)


def as_token(found: Setting, option: str) -> str:
    """Return the argv text vLLM's parser sees for a setting: "--k", "--k 4", "--k 1 2 4"."""
    raw = found.value
    if raw is True or raw is None or raw == "":
        return option
    if isinstance(raw, (list, tuple)):
        return option + " " + " ".join(str(x) for x in raw)
    return f"{option} {raw}"


def and_list(items: Sequence[Any]) -> str:
    """Return "4", "4 and 8", "4, 8 and 16"."""
    words = [str(i) for i in items]
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def sizes_text(sizes: Sequence[int]) -> str:
    """Return a capture list for a message: in full when short, else "[1, 2, 4, 8, ..., 512]"."""
    sizes = list(sizes)
    if len(sizes) <= 8:
        return "[" + ", ".join(str(s) for s in sizes) + "]"
    return "[" + ", ".join(str(s) for s in sizes[:4]) + f", ..., {sizes[-1]}]"


def parser_error(cfg: ReadConfig, message: str) -> str:
    """Return argparse's error line for `message` as `vllm serve` prints it.

    Unrecognized arguments are reported by the top-level `vllm` parser, value errors by the
    `serve` sub-parser (argparse: "<prog>: error: <message>").
    """
    if cfg.entrypoint != "serve":
        return message
    prog = "vllm" if message.startswith("unrecognized arguments") else "vllm serve"
    return f"{prog}: error: {message}"


def spelled(name: str, setting: Setting, cfg: Optional[ReadConfig] = None) -> str:
    """Return option `name` in the user's spelling: `--dashes` on the CLI, else the file's style.

    A key with neither `-` nor `_` (`tp`) follows the other keys of the file.
    """
    key = setting.key.lstrip("-")
    if setting.source == "cli":
        return "--" + name.replace("_", "-")
    if "-" in key or "_" in key or cfg is None:
        dashed = "-" in key
    else:
        others = [s.key for s in cfg.config_settings if s is not setting]
        dashed = sum("-" in k for k in others) > sum("_" in k for k in others)
    return name.replace("_", "-") if dashed else name
