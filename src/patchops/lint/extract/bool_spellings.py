"""How a vLLM copy's argument parser spells boolean flags, read with `ast`.

From 0.33.0 `FlexibleArgumentParser` registers `EnableDisableAction` in place of
`BooleanOptionalAction` (utils/argparse_utils.py): every `--enable-x` also answers to
`--disable-x` and the other way round, besides `--no-enable-x`. That changes which flags
exist (`--disable-log-requests` is accepted again) and which abbreviations are ambiguous
(`--disable-log` matches `--disable-log-stats` and `--disable-log-requests`).
"""

from __future__ import annotations

import ast
from typing import Dict

from patchops.lint.extract.source_tree import Source

ARGPARSE_FILES = ("vllm/utils/argparse_utils.py", "vllm/utils/__init__.py", "vllm/utils.py")


def option_inverses(src: Source) -> Dict[str, str]:
    """Return the prefix pairs (`--enable-` -> `--disable-`) boolean flags also answer to."""
    for rel in ARGPARSE_FILES:
        mod = src.module_file(rel)
        if mod is None:
            continue
        for node in ast.walk(mod.tree):
            if not isinstance(node, ast.ClassDef):
                continue
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and any(
                        isinstance(t, ast.Name) and t.id == "_inverse_prefixes" for t in stmt.targets) \
                        and isinstance(stmt.value, ast.Dict) and _registered(mod.tree, node.name):
                    return {k.value: v.value for k, v in zip(stmt.value.keys, stmt.value.values)
                            if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)}
    return {}


def _registered(tree: ast.Module, action_class: str) -> bool:
    """Return whether the parser registers `action_class` for BooleanOptionalAction."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "register" and len(node.args) == 3:
            last = node.args[2]
            if isinstance(last, ast.Name) and last.id == action_class:
                return True
    return False
