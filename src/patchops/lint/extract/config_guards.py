"""Guards at the top of vLLM's config methods, read with `ast`: `if self.x > 1.0: raise ...`.

The checks a config class makes of a value after parsing that no `Field(...)` states:
against a constant (`gpu_memory_utilization` in 0.6.3-0.11's `_verify_args`), on the value
vLLM resolved (a `model_validator(mode="after")`: 0.33's `max_model_len`), against another
setting (0.33's `long_prefill_token_threshold` above `max_model_len`). config_fields maps
them to EngineArgs flags.
"""

from __future__ import annotations

import ast
from typing import List, Optional

from patchops.lint.extract.source_tree import last_name as _last_name

# `if self.x OP c: raise` rejects values on that side; the bound that stays allowed.
_GUARD_BOUND = {ast.Gt: "le", ast.GtE: "lt", ast.Lt: "ge", ast.LtE: "gt"}
GUARD_METHODS = ("__post_init__", "_verify_args", "verify_args", "verify_max_model_len")


def literal_number(expr: ast.AST) -> Optional[float]:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)) \
            and not isinstance(expr.value, bool):
        return expr.value
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        inner = literal_number(expr.operand)
        return -inner if inner is not None else None
    return None


def _guard_methods(cls: ast.ClassDef):
    """Yield (method, "named" | "after") for the methods whose guards a value meets.

    "named": one of GUARD_METHODS; "after": another `@model_validator(mode="after")`.
    """
    for stmt in cls.body:
        if not isinstance(stmt, ast.FunctionDef):
            continue
        if stmt.name in GUARD_METHODS:
            yield stmt, "named"
        elif any(isinstance(d, ast.Call) and _last_name(d.func) == "model_validator"
                 and any(k.arg == "mode" and isinstance(k.value, ast.Constant)
                         and k.value.value == "after" for k in d.keywords)
                 for d in stmt.decorator_list):
            yield stmt, "after"


def _top_guards(method: ast.FunctionDef):
    """Yield the unconditional `if ...: raise` statements at the top of a method body."""
    for node in method.body:
        if isinstance(node, ast.If) and not node.orelse and node.body \
                and isinstance(node.body[0], ast.Raise):
            yield node


def constant_guards(cls: ast.ClassDef):
    """Yield (field, bound, value, message, method kind) for `if self.f OP const: raise E(msg)`.

    Only unconditional guards at the top of the method body count: a guard nested under
    another condition depends on more than the value. `if not isinstance(self.f, int) or
    self.f < 1` counts as the comparison (0.33 ModelConfig's model_validator).
    """
    for stmt, kind in _guard_methods(cls):
        for node in _top_guards(stmt):
            test = node.test
            if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) and all(
                    isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not)
                    and isinstance(v.operand, ast.Call) and _last_name(v.operand.func) == "isinstance"
                    for v in test.values[:-1]):
                test = test.values[-1]
            if not (isinstance(test, ast.Compare) and len(test.ops) == 1
                    and type(test.ops[0]) in _GUARD_BOUND):
                continue
            left, right = test.left, test.comparators[0]
            if not (isinstance(left, ast.Attribute) and isinstance(left.value, ast.Name)
                    and left.value.id == "self"):
                continue
            value = literal_number(right)
            if value is None:
                continue
            yield left.attr, _GUARD_BOUND[type(test.ops[0])], value, \
                _message(node.body[0], left.attr), kind


def relation_guards(cls: ast.ClassDef):
    """Yield (field, other field, message) for `if self.f > self.g (or g): raise` guards.

    `message` has `{value}` and `{other}` where the two values are interpolated (0.33
    SchedulerConfig: long_prefill_token_threshold above max_model_len).
    """
    for stmt, _kind in _guard_methods(cls):
        for node in _top_guards(stmt):
            test = node.test
            if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and len(test.values) == 2 \
                    and _is_not_none(test.values[0]):
                test = test.values[1]     # `self.f is not None and self.f > self.g` (0.33)
            if not (isinstance(test, ast.Compare) and len(test.ops) == 1
                    and isinstance(test.ops[0], ast.Gt)):
                continue
            left, right = test.left, test.comparators[0]
            if not (isinstance(left, ast.Attribute) and isinstance(left.value, ast.Name)
                    and left.value.id == "self"):
                continue
            if isinstance(right, ast.Name):
                other = right.id
            elif isinstance(right, ast.Attribute) and isinstance(right.value, ast.Name) \
                    and right.value.id == "self":
                other = right.attr
            else:
                continue
            yield left.attr, other, _message(node.body[0], left.attr, other)


def _is_not_none(test: ast.AST) -> bool:
    return isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot) \
        and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None


def _message(raise_stmt: ast.Raise, field: str, other: Optional[str] = None) -> Optional[str]:
    """Return the raised message with `{value}` (`{other}`) where a field's value is interpolated."""
    exc = raise_stmt.exc
    if not (isinstance(exc, ast.Call) and exc.args):
        return None
    parts: List[str] = []
    for piece in string_pieces(exc.args[0]):
        if isinstance(piece, ast.Constant) and isinstance(piece.value, str):
            parts.append(piece.value)
        elif isinstance(piece, ast.FormattedValue) and isinstance(piece.value, ast.Attribute) \
                and piece.value.attr == field and not piece.format_spec:
            parts.append("{value}")
        elif isinstance(piece, ast.FormattedValue) and isinstance(piece.value, ast.Attribute) \
                and piece.value.attr == "__name__" and isinstance(piece.value.value, ast.Call) \
                and _last_name(piece.value.value.func) == "type":
            parts.append("{type}")     # `type(self.f).__name__`
        elif other and isinstance(piece, ast.FormattedValue) and \
                _last_name(piece.value) == other and not piece.format_spec:
            parts.append("{other}")
        else:
            return None
    return "".join(parts)


def string_pieces(expr: ast.AST) -> List[ast.AST]:
    if isinstance(expr, ast.JoinedStr):
        return list(expr.values)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return string_pieces(expr.left) + string_pieces(expr.right)
    return [expr]
