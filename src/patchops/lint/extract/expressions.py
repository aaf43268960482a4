"""Translate one Python expression of vLLM's config code into a record of lint/checks/ir.py.

The one reader of expressions for both programs read from config classes: guard_programs
(every config class's checks) and value_checks (a nested config's post-init). Each says what
the names of the method it reads mean (a `Context`); lint/checks/interpreter.py runs the
result. The form, as the facts hold it (ir.to_json):

* names: `["field", x]` `self.x` of the config class (`["dest", x]` when `self` is EngineArgs:
  a flag), `["other", Cls, x]` an attribute of another config passed in, `["env", X]`
  `envs.X`, `["param", p]` an `__init__` parameter, `["local", n]` a local name; a module
  constant as its literal; `["has", x]` `hasattr(self, "x")` (`getattr(self, "x", d)` is
  the field); a one-line `@property` of the class read in place (ParallelConfig.use_ray);
* what the launch decides: `["host", q]` (`current_platform.is_cuda()`, its device count,
  whether Ray is initialized), `["model", path]` (an attribute path or no-argument method of
  a ModelConfig: `model_config.is_moe`, `self.get_total_num_kv_heads()`: config.json's);
* values: `["const", v]`, `["tuple", [...]]`, `["list", [...]]`, `["set", [...]]`;
* operations: `["cmp", op, a, b]` (a chain is an `and` of its links), `["and", [...]]`,
  `["or", [...]]`, `["not", e]`, `["neg", e]`, `["bin", op, a, b]`, `["ifexp", test, a, b]`,
  `["index", e, i]`, `["slice", e, lo, hi]`, `["attr", e, name]` (a key of a config given as a
  mapping: `attention_config.backend`; `deepcopy(d)` and `XConfig(**d)` read as `d`),
  `["isinstance", e, [builtin type names]]`, `["call", fn, [args]]` (a pure builtin),
  `["method", e, name, [args]]` (a pure str/list/dict method), `["comp", "list" or "set", var,
  iterable, [conds], element]` (one `for` of a comprehension or generator).

A loop of guards is `["any", var, iterable, test]` (guard_programs builds it: some item makes
`test` true). Whatever else is ir.UNKNOWN, and so is anything over an unknown owner
(`f().x`): it can hide a check, never invent one.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace
from typing import Any, Dict, FrozenSet, List, Optional

from patchops.lint.checks import ir
from patchops.lint.checks.ir import UNKNOWN
from patchops.lint.extract.config_guards import string_pieces
from patchops.lint.extract.source_tree import last_name

_CMP = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
        ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}
_BIN = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%",
        ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^"}
# The builtin types `isinstance` may name: lint's values are JSON values, never classes, so
# `isinstance(value, type)` is certainly False for any value it knows.
TYPE_NAMES = ("type", "str", "int", "float", "bool", "dict", "list", "tuple", "set")
# Calls with no effect that a check may make on JSON values (strings, lists, numbers).
PURE_METHODS = frozenset({"count", "startswith", "endswith", "lower", "upper", "strip", "lstrip",
                          "rstrip", "split", "join", "keys", "values", "items", "get", "index"})
PURE_BUILTINS = frozenset({"len", "sorted", "set", "list", "tuple", "any", "all", "min", "max", "sum",
                           "isinstance"})
# What the launching process answers: `current_platform.is_cuda()` and its GPU count from the
# stated hardware, and Ray, which a fresh `vllm serve` has not initialized (ParallelConfig
# picks its executor by these). Call name -> the host question.
HOST_CALLS = {"cuda_device_count_stateless": "device_count", "ray_is_initialized": "ray_initialized",
              "is_in_ray_actor": "ray_initialized"}


@dataclass(frozen=True)
class Context:
    """What the names of one method mean.

    `self_kind`: "dest" when `self` is EngineArgs; `fields`: the only attributes of `self`
    that are fields (None: any); `locals`: the only names that are locals (None: any name not
    otherwise known); `params`: parameter -> the config class it holds; `init_params`:
    `__init__`'s parameters; `properties`: one-line properties (name -> returned expression);
    `model_of`: the names that hold a ModelConfig; `constants`: module constants by name;
    `contents`: whether to read into a value (subscripts, comprehensions, pure builtins and
    methods), off where the value is JSON that pydantic has not checked yet.
    """

    self_name: str = "self"
    self_kind: str = "field"
    fields: Optional[FrozenSet[str]] = None
    locals: Optional[FrozenSet[str]] = None
    params: Dict[str, str] = field(default_factory=dict)
    init_params: FrozenSet[str] = frozenset()
    properties: Dict[str, ast.AST] = field(default_factory=dict)
    model_of: FrozenSet[str] = frozenset()
    constants: Dict[str, Any] = field(default_factory=dict)
    contents: bool = True


def jsonable(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return all(jsonable(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str))


def const(value: Any) -> ir.Expr:
    if isinstance(value, (tuple, list)):
        return ir.Items("tuple" if isinstance(value, tuple) else "list", tuple(const(v) for v in value))
    return ir.Const(value)


def expression(node: ast.AST, ctx: Context) -> ir.Expr:  # noqa: C901 - one branch per node kind
    """Translate one expression read in `ctx`."""
    rec = lambda n: expression(n, ctx)  # noqa: E731
    path = _model_path(node, ctx.model_of)
    if path is not None:
        return ir.Name("model", path)
    host = _host_query(node)
    if host is not None:
        return ir.Name("host", host)
    if isinstance(node, ast.Constant):
        return ir.Const(node.value) if jsonable(node.value) else UNKNOWN
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return UNKNOWN
        return ir.Items({ast.Tuple: "tuple", ast.List: "list", ast.Set: "set"}[type(node)],
                        tuple(rec(e) for e in node.elts))
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        owner, name = node.value.id, node.attr
        if owner == ctx.self_name and name in ctx.properties:
            inner = {k: v for k, v in ctx.properties.items() if k != name}   # no recursion
            return expression(ctx.properties[name], replace(ctx, properties=inner))
        if owner == ctx.self_name:
            return ir.Name(ctx.self_kind, name) if ctx.fields is None or name in ctx.fields else UNKNOWN
        if owner in ctx.params:
            return ir.Other(ctx.params[owner], name)
        if owner == "envs":
            return ir.Name("env", name)
    if isinstance(node, ast.Attribute):
        owner = rec(node.value)
        return UNKNOWN if owner is UNKNOWN else ir.Attr(owner, node.attr)
    if isinstance(node, ast.Name):
        return _name(node.id, ctx)
    if isinstance(node, ast.BoolOp):
        return ir.Logic("and" if isinstance(node.op, ast.And) else "or", tuple(rec(v) for v in node.values))
    if isinstance(node, ast.UnaryOp):
        if isinstance(node.op, ast.Not):
            return ir.Not(rec(node.operand))
        return ir.Neg(rec(node.operand)) if isinstance(node.op, ast.USub) else UNKNOWN
    if isinstance(node, ast.Compare):
        parts, left = [], node.left
        for op, right in zip(node.ops, node.comparators):
            if type(op) not in _CMP:
                return UNKNOWN
            parts.append(ir.Compare(_CMP[type(op)], rec(left), rec(right)))
            left = right
        return parts[0] if len(parts) == 1 else ir.Logic("and", tuple(parts))
    if isinstance(node, ast.BinOp):
        return ir.Binary(_BIN[type(node.op)], rec(node.left), rec(node.right)) if type(node.op) in _BIN \
            else UNKNOWN
    if isinstance(node, ast.IfExp):
        return ir.IfExp(rec(node.test), rec(node.body), rec(node.orelse))
    if isinstance(node, ast.Subscript) and ctx.contents:
        index = node.slice
        if not isinstance(index, ast.Slice):
            return ir.Index(rec(node.value), rec(index))
        if index.step is not None:
            return UNKNOWN
        return ir.Slice(rec(node.value), *(rec(e) if e is not None else ir.Const(None)
                                           for e in (index.lower, index.upper)))
    if isinstance(node, ast.Call):
        return _call(node, ctx)
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)) and len(node.generators) == 1 \
            and ctx.contents:
        gen = node.generators[0]
        if not isinstance(gen.target, ast.Name) or gen.is_async:
            return UNKNOWN
        var = gen.target.id
        inner = replace(ctx, locals=ctx.locals | {var}) if ctx.locals is not None else ctx
        return ir.Comp("set" if isinstance(node, ast.SetComp) else "list", var, rec(gen.iter),
                       tuple(expression(c, inner) for c in gen.ifs), expression(node.elt, inner))
    return UNKNOWN


def _name(name: str, ctx: Context) -> ir.Expr:
    if name in ctx.constants:
        return const(ctx.constants[name])
    if name in ctx.init_params:
        return ir.Name("param", name)
    return ir.Name("local", name) if ctx.locals is None or name in ctx.locals else UNKNOWN


def _call(node: ast.Call, ctx: Context) -> ir.Expr:
    rec = lambda n: expression(n, ctx)  # noqa: E731
    func, args = node.func, node.args
    if last_name(func) == "deepcopy" and len(args) == 1:
        return rec(args[0])          # a copy reads the same
    if isinstance(func, ast.Name) and func.id.endswith("Config") and not args \
            and len(node.keywords) == 1 and node.keywords[0].arg is None:
        return rec(node.keywords[0].value)   # `AttentionConfig(**d)`: its fields are d's keys
    if isinstance(func, ast.Name) and func.id in ("getattr", "hasattr") and len(args) >= 2 \
            and isinstance(args[0], ast.Name) and args[0].id == ctx.self_name \
            and isinstance(args[1], ast.Constant) and isinstance(args[1].value, str):
        # `getattr(args, "x", default)` reads the flag; `hasattr(args, "x")`: whether it is known
        name = args[1].value
        if ctx.fields is not None and name not in ctx.fields:
            return UNKNOWN
        return ir.Name(ctx.self_kind, name) if func.id == "getattr" else ir.Has(name)
    if isinstance(func, ast.Name) and func.id == "isinstance" and len(args) == 2:
        kinds = args[1].elts if isinstance(args[1], ast.Tuple) else [args[1]]
        names = [k.id for k in kinds if isinstance(k, ast.Name) and k.id in TYPE_NAMES]
        return ir.IsInstance(rec(args[0]), tuple(names)) if len(names) == len(kinds) else UNKNOWN
    if node.keywords or any(isinstance(a, ast.Starred) for a in args) or not ctx.contents:
        return UNKNOWN
    if isinstance(func, ast.Name) and func.id in PURE_BUILTINS:
        return ir.Call(func.id, tuple(rec(a) for a in args))
    if isinstance(func, ast.Attribute) and func.attr in PURE_METHODS:
        receiver = rec(func.value)
        return UNKNOWN if receiver is UNKNOWN else ir.Method(receiver, func.attr, tuple(rec(a) for a in args))
    return UNKNOWN


def message(node: Optional[ast.AST], ctx: Context) -> ir.Message:
    """Return an exception's message as pieces: its text and the values it holes in."""
    if node is None:
        return ()
    pieces: List[ir.Piece] = []
    for piece in string_pieces(node):
        if isinstance(piece, ast.Constant) and isinstance(piece.value, str):
            pieces.append(ir.Text(piece.value))
        elif isinstance(piece, ast.FormattedValue) and piece.format_spec is not None:
            pieces.append(ir.Hole(UNKNOWN, ""))
        elif isinstance(piece, ast.FormattedValue):
            conversion = chr(piece.conversion) if piece.conversion and piece.conversion > 0 else ""
            pieces.append(ir.Hole(expression(piece.value, ctx), conversion))
        else:
            pieces.append(ir.Hole(expression(piece, ctx), ""))
    return tuple(pieces)


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


def _model_path(node: ast.AST, model_of: FrozenSet[str]) -> Optional[str]:
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

