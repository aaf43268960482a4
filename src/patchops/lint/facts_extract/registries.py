"""Names a vLLM copy registers for its tool-call and reasoning parsers, read with `ast`.

vLLM fills these registries at import time, so argparse cannot list them: the serve front end
checks the name after parsing (`validate_parsed_serve_args`, `api_server.py`) or when the
parser is built. Two registration styles exist across releases, both read here:

* a decorator on the parser class, `@ToolParserManager.register_module("hermes")` (also a list
  of names, or `name=`/`module=` keywords), 0.6.3 - 0.2x;
* a table of lazily imported parsers, `_TOOL_PARSERS_TO_REGISTER = {"hermes": (file, cls)}`
  with `register_lazy_module("name", ...)` calls beside it (0.3x).
"""

from __future__ import annotations

import ast
import os
from typing import Dict, List, Tuple

from patchops.lint.facts_extract.source_tree import Source

# Where each registry's parsers live, across releases (site-relative package folders).
REGISTRY_PACKAGES: Dict[str, Tuple[str, ...]] = {
    "tool_call_parser": ("vllm/entrypoints/openai/tool_parsers", "vllm/tool_parsers"),
    "reasoning_parser": ("vllm/entrypoints/openai/reasoning_parsers", "vllm/reasoning"),
}
# The manager class whose registrations belong to each registry.
MANAGERS = {"tool_call_parser": "ToolParserManager", "reasoning_parser": "ReasoningParserManager"}
REGISTER_CALLS = ("register_module", "register_lazy_module")


def registry_facts(src: Source) -> Dict[str, Tuple[str, ...]]:
    """Return registry -> sorted registered names; a registry with no package is left out."""
    out: Dict[str, Tuple[str, ...]] = {}
    for registry, packages in REGISTRY_PACKAGES.items():
        names: List[str] = []
        found_package = False
        for package in packages:
            if src.stat(package) is None:
                continue
            found_package = True
            try:
                files = sorted(f for f in os.listdir(src.site / package) if f.endswith(".py"))
            except OSError:
                continue
            for name in files:
                mod = src.module_file(f"{package}/{name}")
                if mod is not None:
                    names.extend(_registered(mod.tree, MANAGERS[registry]))
        if found_package:
            out[registry] = tuple(sorted(set(names)))
    return out


def _registered(tree: ast.Module, manager: str) -> List[str]:
    names: List[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _is_register_call(node, manager):
            names.extend(_call_names(node))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id.endswith("_PARSERS_TO_REGISTER") for t in targets) \
                    and isinstance(node.value, ast.Dict):
                names.extend(k.value for k in node.value.keys
                             if isinstance(k, ast.Constant) and isinstance(k.value, str))
    return names


def _is_register_call(call: ast.Call, manager: str) -> bool:
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr in REGISTER_CALLS and \
        isinstance(func.value, ast.Name) and func.value.id == manager


def _call_names(call: ast.Call) -> List[str]:
    """Return the literal names a register call gives (first argument or `name=`)."""
    candidates = list(call.args[:1]) + [k.value for k in call.keywords if k.arg == "name"]
    names: List[str] = []
    for expr in candidates:
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            names.append(expr.value)
        elif isinstance(expr, (ast.List, ast.Tuple)):
            names.extend(e.value for e in expr.elts
                         if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return names


def registry_choice_flags(src: Source, files) -> Dict[str, str]:
    """Return option -> registry for add_argument calls whose `choices=` list a registry.

    0.8.x builds `--reasoning-parser`'s choices from `ReasoningParserManager.reasoning_parsers`
    at import time (engine/arg_utils.py), so argparse refuses other names at parse time.
    """
    by_manager = {manager: registry for registry, manager in MANAGERS.items()}
    out: Dict[str, str] = {}
    for rel in files:
        mod = src.module_file(rel)
        if mod is None:
            continue
        for node in ast.walk(mod.tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "add_argument" and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                continue
            for kw in node.keywords:
                if kw.arg != "choices":
                    continue
                names = {n.id for n in ast.walk(kw.value) if isinstance(n, ast.Name)}
                for manager, registry in by_manager.items():
                    if manager in names:
                        out[node.args[0].value] = registry
    return out
