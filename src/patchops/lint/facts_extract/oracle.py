"""The V1 oracle's checks and the custom all-reduce guards of a vLLM copy, read with `ast`.

`EngineArgs._is_v1_supported_oracle` (0.8.5-0.11) reports each unsupported feature with one
`_raise_or_fallback(feature_name=...)` call (V0 fallback, or NotImplementedError under
`VLLM_USE_V1=1`) and each experimental one with `_warn_or_fallback(...)`; from 0.12
`EngineArgs._check_feature_supported` refuses the rest with `_raise_unsupported_error(...)`. Which checks a copy
has is read from those calls, so a fork that drops or adds one is linted as it is: the
feature names are kept as vLLM formats them, an f-string's fields as `{}`, a name assigned
just before the call (`name = "Pipeline Parallelism ..."`) by its value.

`CustomAllreduce.__init__` (distributed/device_communicators/custom_all_reduce.py) turns
custom all-reduce off, with a log line only, for world sizes outside `_SUPPORTED_WORLD_SIZES`.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional

from patchops.lint.facts_extract.source_tree import Source

ORACLE_FILE = "vllm/engine/arg_utils.py"
CUSTOM_ALLREDUCE_FILE = "vllm/distributed/device_communicators/custom_all_reduce.py"
REPORTERS = {"_raise_or_fallback": "unsupported", "_warn_or_fallback": "experimental",
             "_raise_unsupported_error": "refused"}
# The oracle (0.8.5-0.11), and from 0.12 (V1 only) the checks that refuse what it sent to V0.
CHECKERS = ("_is_v1_supported_oracle", "_check_feature_supported")


def oracle_facts(src: Source) -> Optional[List[List[str]]]:
    """Return [[feature name, "unsupported" | "experimental" | "refused"], ...] in source order.

    [] when engine/arg_utils.py has neither check (0.7.3 and older); None when the file
    cannot be read, so nothing is known.
    """
    mod = src.module_file(ORACLE_FILE)
    if mod is None:
        return None
    oracle = next((n for n in ast.walk(mod.tree) if isinstance(n, ast.FunctionDef)
                   and n.name in CHECKERS), None)
    if oracle is None:
        return []
    assigned: Dict[str, str] = {}
    found = []
    # In source order, so `name = ...` is the one assigned just before its call.
    nodes = sorted((n for n in ast.walk(oracle) if isinstance(n, (ast.Assign, ast.Call))),
                   key=lambda n: (n.lineno, n.col_offset))
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            text = _template(node.value, {})
            if text is not None:
                assigned[node.targets[0].id] = text
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in REPORTERS:
            arg = next((k.value for k in node.keywords if k.arg == "feature_name"), None)
            arg = arg if arg is not None else (node.args[0] if node.args else None)
            text = _template(arg, assigned) if arg is not None else None
            found.append((text if text is not None else "{}", REPORTERS[node.func.id]))
    return [[text, kind] for text, kind in found]


def _template(expr: ast.AST, assigned: Dict[str, str]) -> Optional[str]:
    """Return a feature name as vLLM formats it, its interpolations as `{}`; None when not text."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    if isinstance(expr, ast.JoinedStr):
        return "".join(p.value if isinstance(p, ast.Constant) else "{}" for p in expr.values)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        left, right = _template(expr.left, assigned), _template(expr.right, assigned)
        return None if left is None or right is None else left + right
    if isinstance(expr, ast.Name):
        return assigned.get(expr.id)
    return None


def custom_allreduce_facts(src: Source) -> Dict[str, Any]:
    """Return {"world_sizes": [...]} from CustomAllreduce._SUPPORTED_WORLD_SIZES, {} without it."""
    mod = src.module_file(CUSTOM_ALLREDUCE_FILE)
    if mod is None:
        return {}
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.ClassDef) and node.name == "CustomAllreduce":
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_SUPPORTED_WORLD_SIZES"
                                                        for t in stmt.targets):
                    try:
                        sizes = ast.literal_eval(stmt.value)
                    except ValueError:
                        return {}
                    return {"world_sizes": sorted(int(s) for s in sizes)}
    return {}
