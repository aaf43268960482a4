"""Evaluate one expression of a config class's checks (facts_extract/expressions' JSON), three-valued.

The one evaluator behind config_checks (PO113's guard programs) and nested_values (a nested
config's post-init, PO112); each runs its own programs and hands names in through a `Scope`
(`get("field:x")`, `"param:x"`, `"local:x"`, `"dest:x"`, `"env:X"`, `"other:Cls:x"`,
`"model:path"`, `"host:q"`; UNKNOWN when the config does not decide it). It evaluates as
Python does; where the two evaluators it replaces differed, it takes the stricter side:

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
from typing import Any, Dict, List, Optional


class _Unknown:
    def __repr__(self) -> str:
        return "…"


UNKNOWN = _Unknown()
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
# facts_extract/expressions.PURE_METHODS: the str/list/dict methods without an effect
_METHODS = frozenset({"count", "startswith", "endswith", "lower", "upper", "strip", "lstrip", "rstrip",
                      "split", "join", "keys", "values", "items", "get", "index"})
_NAMES = ("field", "param", "local", "dest", "env", "model", "host")
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


def value(expr: list, scope: Scope) -> Any:
    """Return the expression's value in `scope`, or UNKNOWN."""
    try:
        return _value(expr, scope)
    except _PYTHON_ERRORS:
        return UNKNOWN


def truth(got: Any) -> Any:
    """Return a value's truth: True, False or UNKNOWN."""
    return UNKNOWN if got is UNKNOWN else bool(got)


def truth_of(expr: list, scope: Scope) -> Any:
    """Return whether the expression holds in `scope`: True, False or UNKNOWN."""
    return truth(value(expr, scope))


def render(message: List[list], scope: Scope) -> str:
    """Return an exception's message (expressions' pieces) as vLLM would print it, "…" for an unknown."""
    out = []
    for piece in message:
        if piece[0] == "text":
            out.append(piece[1])
            continue
        got = value(piece[1], scope)
        out.append("…" if got is UNKNOWN else repr(got) if piece[2] == "r" else ascii(got) if piece[2] == "a"
                   else str(got))
    return "".join(out)


def _value(expr: list, scope: Scope) -> Any:  # noqa: C901 - one branch per node kind
    kind = expr[0]
    if kind == "const":
        return expr[1]
    if kind in _NAMES:
        return scope.get(f"{kind}:{expr[1]}")
    if kind == "other":
        return scope.get(f"other:{expr[1]}:{expr[2]}")
    if kind == "has":
        return True if scope.get("field:" + expr[1]) is not UNKNOWN else UNKNOWN
    if kind in _CONTAINERS:
        items = [_value(e, scope) for e in expr[1]]
        return UNKNOWN if any(i is UNKNOWN for i in items) else _CONTAINERS[kind](items)
    if kind in ("and", "or"):
        return _bool_op(kind == "and", expr[1], scope)
    if kind == "not":
        got = truth(_value(expr[1], scope))
        return UNKNOWN if got is UNKNOWN else not got
    if kind == "ifexp":
        test = truth(_value(expr[1], scope))
        return UNKNOWN if test is UNKNOWN else _value(expr[2] if test else expr[3], scope)
    if kind == "cmp":
        left, right = _value(expr[2], scope), _value(expr[3], scope)
        if expr[1] in ("in", "not in") and isinstance(right, (tuple, list, set, dict)) and not right:
            return expr[1] == "not in"      # nothing is in an empty container, whatever the left side is
        return UNKNOWN if left is UNKNOWN or right is UNKNOWN else _CMP[expr[1]](left, right)
    if kind == "any":
        return _some_item(expr, scope)
    if kind == "comp":
        return _comprehension(expr, scope)
    args = [_value(e, scope) for e in _operands(expr)]
    if any(a is UNKNOWN for a in args):
        return UNKNOWN
    if kind == "bin":
        if expr[1] == "*" and not all(isinstance(a, (int, float)) for a in args):
            return UNKNOWN      # no repeating a user's string or list
        return _BIN[expr[1]](*args)
    if kind == "neg":
        return -args[0]
    if kind == "index":
        return args[0][args[1]]
    if kind == "slice":
        return args[0][args[1]:args[2]]
    if kind == "attr":
        # a config given as a mapping (a JSON flag): a key it states; one it omits is the class's default
        return args[0].get(expr[2], UNKNOWN) if isinstance(args[0], dict) else UNKNOWN
    if kind == "isinstance":
        return isinstance(args[0], tuple(_TYPES[n] for n in expr[2]))
    if kind == "call" and expr[1] in _BUILTINS:
        return _BUILTINS[expr[1]](*args)
    if kind == "method" and expr[2] in _METHODS:
        return getattr(args[0], expr[2])(*args[1:])
    return UNKNOWN


# node kind -> where its operands stand (a call's and a method's arguments are a list)
_OPERAND_AT = {"bin": (2, 3), "neg": (1,), "index": (1, 2), "slice": (1, 2, 3), "attr": (1,), "isinstance": (1,)}


def _operands(expr: list) -> List[list]:
    """Return the subexpressions an operation needs known before it runs."""
    if expr[0] == "call":
        return expr[2]
    if expr[0] == "method":
        return [expr[1]] + expr[3]
    return [expr[i] for i in _OPERAND_AT.get(expr[0], ())]


def _bool_op(is_and: bool, parts: List[list], scope: Scope) -> Any:
    """Return `a and b ...` / `a or b ...` as Python does (the deciding operand), three-valued."""
    deciding = not is_and          # `and` stops at a false operand, `or` at a true one
    unsure, last = False, is_and
    for part in parts:
        got = _value(part, scope)
        decided = truth(got)
        if decided is UNKNOWN:
            unsure = True
        elif decided is deciding:
            return deciding if unsure else got
        last = got
    return UNKNOWN if unsure else last


def _some_item(expr: list, scope: Scope) -> Any:
    """Return whether some item of a loop of guards makes its test true, leaving the loop name
    bound to it (the message names the item)."""
    _, name, items, test = expr
    values = _value(items, scope)
    if not isinstance(values, _ITERABLE):
        return UNKNOWN
    key, unsure = "local:" + name, False
    for item in values:
        decided = truth(_value(test, _Bound(scope, key, item)))
        if decided is True:
            scope.bind(key, item)
            return True
        unsure = unsure or decided is UNKNOWN
    scope.bind(key, UNKNOWN)
    return UNKNOWN if unsure else False


def _comprehension(expr: list, scope: Scope) -> Any:
    _, shape, var, iterable, conds, element = expr
    items = _value(iterable, scope)
    if not isinstance(items, _ITERABLE):
        return UNKNOWN
    out = []
    for item in items:
        inner = _Bound(scope, "local:" + var, item)
        tests = [truth(_value(c, inner)) for c in conds]
        if any(t is UNKNOWN for t in tests):
            return UNKNOWN
        if all(tests):
            got = _value(element, inner)
            if got is UNKNOWN:
                return UNKNOWN
            out.append(got)
    return set(out) if shape == "set" else out
