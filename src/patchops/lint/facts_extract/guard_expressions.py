"""One Python expression of vLLM's config code as a JSON list lint can evaluate (guard_programs).

`["field", x]` is `self.x` of the config class, `["dest", x]` `self.x` of EngineArgs (a
flag), `["other", Cls, x]` an attribute of another config passed in, `["env", X]`
`envs.X`, `["param", p]` an `__init__` parameter, `["local", n]` a local name;
`["cmp", op, a, b]`, `["and", [...]]`, `["or", [...]]`, `["not", e]`, `["bin", op, a, b]`,
`["len", e]`, `["ifexp", test, a, b]`, `["has", x]` (`hasattr(self, "x")`), constants,
tuples and lists. Anything else is
`["unknown"]`.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, Optional, Set

UNKNOWN = ["unknown"]
_CMP = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
        ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}
_BIN = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%"}


def jsonable(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return all(jsonable(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str))


def const(value: Any) -> list:
    if isinstance(value, tuple):
        return ["tuple", [const(v) for v in value]]
    if isinstance(value, list):
        return ["list", [const(v) for v in value]]
    return ["const", value]


def expression(node, *, engine: bool = False, params: Optional[Dict[str, str]] = None,
               init_params: Set[str] = frozenset(), self_name: str = "self") -> list:
    """Translate one expression; `engine`: `self` is EngineArgs (its fields are flags)."""
    rec = lambda n: expression(n, engine=engine, params=params, init_params=init_params,  # noqa: E731
                               self_name=self_name)
    params = params or {}
    if isinstance(node, ast.Constant):
        value = node.value
        return ["const", value] if jsonable(value) else UNKNOWN
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return UNKNOWN
        return ["tuple" if isinstance(node, ast.Tuple) else "list", [rec(e) for e in node.elts]]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        owner = node.value.id
        if owner == self_name:
            return ["dest" if engine else "field", node.attr]
        if owner in params:
            return ["other", params[owner], node.attr]
        if owner == "envs":
            return ["env", node.attr]
        return UNKNOWN
    if isinstance(node, ast.Name):
        if node.id in init_params:
            return ["param", node.id]
        if node.id in ("True", "False", "None"):
            return ["const", {"True": True, "False": False, "None": None}[node.id]]
        return UNKNOWN if engine else ["local", node.id]
    if isinstance(node, ast.BoolOp):
        return ["and" if isinstance(node.op, ast.And) else "or", [rec(v) for v in node.values]]
    if isinstance(node, ast.UnaryOp):
        if isinstance(node.op, ast.Not):
            return ["not", rec(node.operand)]
        if isinstance(node.op, ast.USub):
            return ["neg", rec(node.operand)]
        return UNKNOWN
    if isinstance(node, ast.Compare):
        parts, left = [], node.left
        for op, right in zip(node.ops, node.comparators):
            if type(op) not in _CMP:
                return UNKNOWN
            parts.append(["cmp", _CMP[type(op)], rec(left), rec(right)])
            left = right
        return parts[0] if len(parts) == 1 else ["and", parts]
    if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
        return ["bin", _BIN[type(node.op)], rec(node.left), rec(node.right)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" \
            and len(node.args) == 1:
        return ["len", rec(node.args[0])]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") \
            and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) and node.args[0].id == self_name \
            and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
        # `getattr(args, "x", default)` reads the flag; `hasattr(args, "x")`: whether it is known
        return ["field" if node.func.id == "getattr" else "has", node.args[1].value]
    if isinstance(node, ast.IfExp):
        return ["ifexp", rec(node.test), rec(node.body), rec(node.orelse)]
    return UNKNOWN
