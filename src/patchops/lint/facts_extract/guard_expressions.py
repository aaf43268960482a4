"""One Python expression of vLLM's config code as a JSON list lint can evaluate (guard_programs).

`["field", x]` is `self.x` of the config class, `["dest", x]` `self.x` of EngineArgs (a
flag), `["other", Cls, x]` an attribute of another config passed in, `["env", X]`
`envs.X`, `["param", p]` an `__init__` parameter, `["local", n]` a local name;
a module constant (`ALLOWED_DETAILED_TRACE_MODULES`) as its literal, `["cmp", op, a, b]`, `["and", [...]]`, `["or", [...]]`, `["not", e]`, `["bin", op, a, b]`,
`["len", e]`, `["ifexp", test, a, b]`, `["has", x]` (`hasattr(self, "x")`),
`["isinstance", e, [type names]]` (builtin types only), `["split", e, sep]` (`e.split(sep)`),
`["any", name, iterable, test]` (a loop of guards: some item makes `test` true),
`["host", q]` (`current_platform.is_cuda()`, its device count, whether Ray is initialized), `["attr", e, name]` (a key of a
config given as a mapping: `attention_config.backend`; `deepcopy(d)` and `XConfig(**d)`
read as `d`), `["model", path]` (an attribute
path or no-argument method of a ModelConfig: `model_config.is_moe`,
`self.get_total_num_kv_heads()`, what config.json decides), constants, tuples and lists. A
`self.p` where `p` is a one-line `@property` of the class is that property's expression
(ParallelConfig.use_ray). Anything else is `["unknown"]`.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, Optional, Set

from patchops.lint.facts_extract.source_tree import last_name

UNKNOWN = ["unknown"]
_CMP = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
        ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}
_BIN = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%"}
# The builtin types `isinstance` may name: lint's values are JSON values, never classes, so
# `isinstance(value, type)` is certainly False for any value it knows.
TYPE_NAMES = ("type", "str", "int", "float", "bool", "dict", "list", "tuple")


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
               init_params: Set[str] = frozenset(), self_name: str = "self",
               properties: Optional[Dict[str, ast.AST]] = None, model_of: Set[str] = frozenset(),
               constants: Optional[Dict[str, Any]] = None) -> list:
    """Translate one expression; `engine`: `self` is EngineArgs (its fields are flags).

    `properties`: the class's one-line properties (name -> returned expression), read in place;
    `model_of`: the names that hold a ModelConfig; `constants`: module constants by name.
    """
    properties = properties or {}
    constants = constants or {}
    rec = lambda n: expression(n, engine=engine, params=params, init_params=init_params,  # noqa: E731
                               self_name=self_name, properties=properties, model_of=model_of,
                               constants=constants)
    params = params or {}
    path = _model_path(node, model_of)
    if path is not None:
        return ["model", path]
    host = _host_query(node)
    if host is not None:
        return ["host", host]
    if isinstance(node, ast.Constant):
        value = node.value
        return ["const", value] if jsonable(value) else UNKNOWN
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return UNKNOWN
        return ["tuple" if isinstance(node, ast.Tuple) else "list", [rec(e) for e in node.elts]]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        owner = node.value.id
        if owner == self_name and node.attr in properties:
            inner = {k: v for k, v in properties.items() if k != node.attr}   # no recursion
            return expression(properties[node.attr], engine=engine, params=params,
                              init_params=init_params, self_name=self_name, properties=inner)
        if owner == self_name:
            return ["dest" if engine else "field", node.attr]
        if owner in params:
            return ["other", params[owner], node.attr]
        if owner == "envs":
            return ["env", node.attr]
        return ["attr", rec(node.value), node.attr] if not engine else UNKNOWN
    if isinstance(node, ast.Attribute):
        return ["attr", rec(node.value), node.attr]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "split" \
            and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str) and not node.keywords:
        return ["split", rec(node.func.value), node.args[0].value]
    if isinstance(node, ast.Call) and last_name(node.func) == "deepcopy" and len(node.args) == 1:
        return rec(node.args[0])          # a copy reads the same
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.endswith("Config") \
            and not node.args and len(node.keywords) == 1 and node.keywords[0].arg is None:
        return rec(node.keywords[0].value)   # `AttentionConfig(**d)`: its fields are d's keys
    if isinstance(node, ast.Name) and node.id in constants:
        return const(constants[node.id])
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
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance" \
            and len(node.args) == 2:
        kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
        names = [k.id for k in kinds if isinstance(k, ast.Name) and k.id in TYPE_NAMES]
        return ["isinstance", rec(node.args[0]), names] if len(names) == len(kinds) else UNKNOWN
    if isinstance(node, ast.IfExp):
        return ["ifexp", rec(node.test), rec(node.body), rec(node.orelse)]
    return UNKNOWN


def one_line_properties(cls: ast.ClassDef) -> Dict[str, ast.AST]:
    """Return name -> returned expression for the class's `@property`s whose body is one return."""
    out: Dict[str, ast.AST] = {}
    for method in cls.body:
        if not (isinstance(method, ast.FunctionDef)
                and any(isinstance(d, ast.Name) and d.id == "property" for d in method.decorator_list)):
            continue
        body = [s for s in method.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
            out[method.name] = body[0].value
    return out


# What the launching process answers: `current_platform.is_cuda()` and its GPU count from the
# stated hardware, and Ray, which a fresh `vllm serve` has not initialized (ParallelConfig
# picks its executor by these). Call name -> the host question.
HOST_CALLS = {"cuda_device_count_stateless": "device_count", "ray_is_initialized": "ray_initialized",
              "is_in_ray_actor": "ray_initialized"}


def _host_query(node: ast.AST) -> Optional[str]:
    if not (isinstance(node, ast.Call) and not node.args and not node.keywords):
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "current_platform" \
            and (func.attr.startswith("is_") or func.attr == "device_count"):
        return func.attr
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "ray" \
            and func.attr == "is_initialized":
        return "ray_initialized"
    return HOST_CALLS.get(func.id) if isinstance(func, ast.Name) else None


def _model_path(node: ast.AST, model_of: Set[str]) -> Optional[str]:
    """Return "a.b" for `m.a.b` and "a()" for `m.a()` when `m` holds a ModelConfig."""
    suffix = ""
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        node, suffix = node.func, "()"
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if names and isinstance(node, ast.Name) and node.id in model_of:
        return ".".join(reversed(names)) + suffix
    return None
