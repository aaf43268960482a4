"""Run vLLM's config checks (`ir` records) three-valued: a Python value, or UNKNOWN.

The one evaluator behind config_checks (PO113's class programs) and nested_values (a nested
config's post-init, PO112); each runs its own programs and hands names in through a `Scope`
(`get("field:x")`, `"param:x"`, `"local:x"`, `"dest:x"`, `"env:X"`, `"other:Cls:x"`,
`"model:path"`, `"host:q"`; UNKNOWN when the config does not decide it). It evaluates as
Python does, on the stricter side where lint cannot be sure:

* `and`/`or` return the deciding operand, and stop there; an operand that decides after an
  unknown one decides the truth, not the value (`u or 5` is true, but maybe not 5);
* an operation on an unknown is unknown, unless the rest decides: `False and u`, `u in ()`,
  a known `ifexp` test (only the branch taken is evaluated);
* an operation Python would raise on (`None < 1`, `x[9]` of a short list) makes the whole
  expression unknown: vLLM would stop there with its own error, not the check's message;
* `*` multiplies numbers only (never repeats a user's string or list), a loop or
  comprehension goes over containers only (not a string), and a method or builtin runs only
  when the reader named it pure.

A caller counts a guard only when its test is certainly true (`truth_of(...) is True`).
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Dict, Optional

from patchops.lint.checks import ir
from patchops.lint.checks.ir import UNKNOWN

# What Python raises on values the operation does not take: not the check's own refusal.
_PYTHON_ERRORS = (TypeError, ValueError, LookupError, AttributeError, ArithmeticError, RecursionError)
_CMP = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge, "is": operator.is_, "is not": operator.is_not,
        "in": lambda a, b: a in b, "not in": lambda a, b: a not in b}
_BIN = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
        "%": operator.mod, "&": operator.and_, "|": operator.or_, "^": operator.xor}
_TYPES = {"type": type, "str": str, "int": int, "float": float, "bool": bool, "dict": dict,
          "list": list, "tuple": tuple, "set": set}
_CONTAINERS = {"tuple": tuple, "list": list, "set": set}
_BUILTINS = {"len": len, "sorted": sorted, "set": set, "list": list, "tuple": tuple, "any": any,
             "all": all, "min": min, "max": max, "sum": sum}
# the reader's PURE_METHODS: the str/list/dict methods without an effect
_METHODS = frozenset({"count", "startswith", "endswith", "lower", "upper", "strip", "lstrip", "rstrip",
                      "split", "join", "keys", "values", "items", "get", "index"})
# What a loop or comprehension goes over: a string may stand for what argparse or pydantic
# turns into a list, so it is not iterated.
_ITERABLE = (list, tuple, set, dict)


class Scope:
    """The values the names of one program hold, by key ("field:x", "local:x", ...)."""

    def __init__(self, values: Optional[Dict[str, Any]] = None):
        self.values: Dict[str, Any] = {} if values is None else values

    def get(self, key: str) -> Any:
        return self.values.get(key, UNKNOWN)

    def bind(self, key: str, value: Any) -> None:
        self.values[key] = value


class _Bound(Scope):
    """A comprehension's or loop's variable over the scope around it."""

    def __init__(self, outer: Scope, key: str, value: Any):
        super().__init__({key: value})
        self.outer = outer

    def get(self, key: str) -> Any:
        return self.values[key] if key in self.values else self.outer.get(key)

    def bind(self, key: str, value: Any) -> None:
        (super() if key in self.values else self.outer).bind(key, value)


def key_of(name: ir.Expr) -> str:
    """Return the scope key of a name ("field:x", "other:Cls:x")."""
    if isinstance(name, ir.Other):
        return f"other:{name.config_class}:{name.name}"
    return f"{name.kind}:{name.name}"       # type: ignore[attr-defined]


def value(expr: ir.Expr, scope: Scope) -> Any:
    """Return the expression's value in `scope`, or UNKNOWN."""
    try:
        return _value(expr, scope)
    except _PYTHON_ERRORS:
        return UNKNOWN


def truth(got: Any) -> Any:
    """Return a value's truth: True, False or UNKNOWN."""
    return UNKNOWN if got is UNKNOWN else bool(got)


def truth_of(expr: ir.Expr, scope: Scope) -> Any:
    """Return whether the expression holds in `scope`: True, False or UNKNOWN."""
    return truth(value(expr, scope))


def render(message: ir.Message, scope: Scope) -> str:
    """Return an exception's message as vLLM would print it, "…" for an unknown."""
    out = []
    for piece in message:
        if isinstance(piece, ir.Text):
            out.append(piece.text)
            continue
        got = value(piece.expr, scope)
        out.append("…" if got is UNKNOWN else repr(got) if piece.conversion == "r"
                   else ascii(got) if piece.conversion == "a" else str(got))
    return "".join(out)


def _value(expr: ir.Expr, scope: Scope) -> Any:
    return _EVALUATORS[type(expr)](expr, scope)


def _known(*got: Any) -> bool:
    return all(g is not UNKNOWN for g in got)


def _items(expr: ir.Items, scope: Scope) -> Any:
    items = [_value(e, scope) for e in expr.items]
    return _CONTAINERS[expr.shape](items) if _known(*items) else UNKNOWN


def _not(expr: ir.Not, scope: Scope) -> Any:
    got = truth(_value(expr.operand, scope))
    return UNKNOWN if got is UNKNOWN else not got


def _ifexp(expr: ir.IfExp, scope: Scope) -> Any:
    test = truth(_value(expr.test, scope))
    return UNKNOWN if test is UNKNOWN else _value(expr.body if test else expr.orelse, scope)


def _compare(expr: ir.Compare, scope: Scope) -> Any:
    left, right = _value(expr.left, scope), _value(expr.right, scope)
    if expr.op in ("in", "not in") and isinstance(right, (tuple, list, set, dict)) and not right:
        return expr.op == "not in"      # nothing is in an empty container, whatever the left side is
    return _CMP[expr.op](left, right) if _known(left, right) else UNKNOWN


def _binary(expr: ir.Binary, scope: Scope) -> Any:
    left, right = _value(expr.left, scope), _value(expr.right, scope)
    if not _known(left, right):
        return UNKNOWN
    if expr.op == "*" and not all(isinstance(a, (int, float)) for a in (left, right)):
        return UNKNOWN      # no repeating a user's string or list
    return _BIN[expr.op](left, right)


def _bool_op(expr: ir.Logic, scope: Scope) -> Any:
    """Return `a and b ...` / `a or b ...` as Python does (the deciding operand), three-valued."""
    is_and = expr.op == "and"
    deciding = not is_and          # `and` stops at a false operand, `or` at a true one
    unsure, last = False, is_and
    for part in expr.parts:
        got = _value(part, scope)
        decided = truth(got)
        if decided is UNKNOWN:
            unsure = True
        elif decided is deciding:
            return deciding if unsure else got
        last = got
    return UNKNOWN if unsure else last


def _some_item(expr: ir.Some, scope: Scope) -> Any:
    """Return whether some item of a loop of guards makes its test true, leaving the loop name
    bound to it (the message names the item)."""
    values = _value(expr.iterable, scope)
    if not isinstance(values, _ITERABLE):
        return UNKNOWN
    key, unsure = "local:" + expr.var, False
    for item in values:
        decided = truth(_value(expr.test, _Bound(scope, key, item)))
        if decided is True:
            scope.bind(key, item)
            return True
        unsure = unsure or decided is UNKNOWN
    scope.bind(key, UNKNOWN)
    return UNKNOWN if unsure else False


def _comprehension(expr: ir.Comp, scope: Scope) -> Any:
    items = _value(expr.iterable, scope)
    if not isinstance(items, _ITERABLE):
        return UNKNOWN
    out = []
    for item in items:
        inner = _Bound(scope, "local:" + expr.var, item)
        tests = [truth(_value(c, inner)) for c in expr.conds]
        if any(t is UNKNOWN for t in tests):
            return UNKNOWN
        if all(tests):
            got = _value(expr.element, inner)
            if got is UNKNOWN:
                return UNKNOWN
            out.append(got)
    return set(out) if expr.shape == "set" else out


def _operation(run: Callable[..., Any], *parts: str) -> Callable[[Any, Scope], Any]:
    """An operation whose operands (the record's `parts`) must all be known before it runs."""
    def evaluate(expr: Any, scope: Scope) -> Any:
        args = [_value(getattr(expr, p), scope) for p in parts]
        return run(expr, *args) if _known(*args) else UNKNOWN
    return evaluate


def _call(expr: ir.Call, scope: Scope) -> Any:
    args = [_value(a, scope) for a in expr.args]
    return _BUILTINS[expr.function](*args) if _known(*args) and expr.function in _BUILTINS else UNKNOWN


def _method(expr: ir.Method, scope: Scope) -> Any:
    args = [_value(a, scope) for a in (expr.receiver,) + expr.args]
    if not _known(*args) or expr.name not in _METHODS:
        return UNKNOWN
    return getattr(args[0], expr.name)(*args[1:])


_EVALUATORS: Dict[type, Callable[[Any, Scope], Any]] = {
    ir.Unknown: lambda expr, scope: UNKNOWN,
    ir.Const: lambda expr, scope: expr.value,
    ir.Name: lambda expr, scope: scope.get(key_of(expr)),
    ir.Other: lambda expr, scope: scope.get(key_of(expr)),
    ir.Has: lambda expr, scope: True if scope.get("field:" + expr.name) is not UNKNOWN else UNKNOWN,
    ir.Items: _items,
    ir.Logic: _bool_op,
    ir.Not: _not,
    ir.IfExp: _ifexp,
    ir.Compare: _compare,
    ir.Some: _some_item,
    ir.Comp: _comprehension,
    ir.Binary: _binary,
    ir.Neg: _operation(lambda expr, operand: -operand, "operand"),
    ir.Index: _operation(lambda expr, got, index: got[index], "value", "index"),
    ir.Slice: _operation(lambda expr, got, lower, upper: got[lower:upper], "value", "lower", "upper"),
    # a config given as a mapping (a JSON flag): a key it states; one it omits is the class's default
    ir.Attr: _operation(lambda expr, got: got.get(expr.name, UNKNOWN) if isinstance(got, dict) else UNKNOWN,
                        "value"),
    ir.IsInstance: _operation(lambda expr, got: isinstance(got, tuple(_TYPES[n] for n in expr.types)), "value"),
    ir.Call: _call,
    ir.Method: _method,
}
