"""The V1 oracle's checks and the custom all-reduce guards of a vLLM copy, read with `ast`.

`EngineArgs._is_v1_supported_oracle` (0.8.5-0.11) reports each unsupported feature with one
`_raise_or_fallback(feature_name=...)` call (V0 fallback, or NotImplementedError under
`VLLM_USE_V1=1`) and each experimental one with `_warn_or_fallback(...)`; from 0.12
`EngineArgs._check_feature_supported` refuses the rest with `_raise_unsupported_error(...)`. Which checks a copy
has is read from those calls, so a fork that drops or adds one is linted as it is: the
feature names are kept as vLLM formats them, an f-string's fields as `{}`, a name assigned
just before the call (`name = "Pipeline Parallelism ..."`) by its value.

The oracle also asks the platform (`current_platform.supports_v1`, 0.8.5-0.10): each platform
module's answer is read too.

`CustomAllreduce.__init__` (distributed/device_communicators/custom_all_reduce.py) turns
custom all-reduce off, with a log line only, for world sizes outside `_SUPPORTED_WORLD_SIZES`.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional

from patchops.lint.extract.source_tree import Source

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


PLATFORMS_PACKAGE = "vllm/platforms"
PLATFORM_BASE = "vllm/platforms/interface.py"


def platform_v1_facts(src: Source) -> Dict[str, Dict[str, Any]]:
    """Return {platform module: {"device_type": ..., "supports_v1": True | False | None}}.

    The oracle (0.8.5-0.10) asks `current_platform.supports_v1(model_config)` and falls back
    with "device type=<device_type>"; a platform class without the method inherits the base
    `Platform.supports_v1`, which says False. None: a body that is not a constant return.
    {} when the oracle does not ask (0.11+).
    """
    mod = src.module_file(ORACLE_FILE)
    if mod is None or not any(isinstance(n, ast.Attribute) and n.attr == "supports_v1" for n in ast.walk(mod.tree)):
        return {}
    base = src.module_file(PLATFORM_BASE)
    default = _supports_v1(base.tree) if base is not None else None
    out: Dict[str, Dict[str, Any]] = {}
    for name in src.names(PLATFORMS_PACKAGE, "*.py"):
        if name in ("__init__.py", "interface.py"):
            continue
        platform = src.module_file(f"{PLATFORMS_PACKAGE}/{name}")
        if platform is None:
            continue
        for node in platform.tree.body:
            device = _class_str(node, "device_type") if isinstance(node, ast.ClassDef) else None
            if device is not None:
                found = _supports_v1(node)
                out[name[:-3]] = {"device_type": device, "supports_v1": default if found == "absent" else found}
                break
    return out


def _class_str(node: ast.ClassDef, name: str) -> Optional[str]:
    for stmt in node.body:
        target = stmt.target if isinstance(stmt, ast.AnnAssign) else (
            stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None)
        value = getattr(stmt, "value", None)
        if isinstance(target, ast.Name) and target.id == name and isinstance(value, ast.Constant) \
                and isinstance(value.value, str):
            return value.value
    return None


def _supports_v1(scope: ast.AST) -> Any:
    """Return the constant a `supports_v1` method returns, None if not constant, "absent" if none."""
    for node in ast.walk(scope):
        if isinstance(node, ast.FunctionDef) and node.name == "supports_v1":
            body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            if len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, bool):
                return body[0].value.value
            return None
    return "absent"
