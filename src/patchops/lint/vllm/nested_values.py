"""Run a nested config's own post-init checks (facts `nested_configs[dest]["checks"]`) on its JSON.

The programs come from `facts_extract/value_checks.py`. Values are the user's JSON values
of the class's fields (or the class's literal defaults); a field a validator converts first,
a value of another type than the field's (pydantic would coerce it), a forgotten name or any
expression the reader could not read is UNKNOWN, and so is whatever depends on it. A check
counts only when its test is certainly true, it reads a field the user wrote, and it holds
with and without every `maybe_add` (an append under a condition lint does not read).
"""

from __future__ import annotations

import itertools
import operator
from typing import Any, Dict, List, Optional, Tuple

MAX_VARIANTS = 16
_TYPES = {"str": str, "int": int, "float": float, "bool": bool, "list": list, "dict": dict,
          "tuple": tuple, "set": set}
_CMP = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge, "is": operator.is_, "is not": operator.is_not,
        "in": lambda a, b: a in b, "not in": lambda a, b: a not in b}
_BIN = {"+": operator.add, "-": operator.sub, "&": operator.and_, "|": operator.or_,
        "^": operator.xor, "*": operator.mul}
_BUILTINS = {"len": len, "sorted": sorted, "set": set, "list": list, "tuple": tuple, "any": any,
             "all": all, "min": min, "max": max, "sum": sum, "isinstance": isinstance}
# the pure str/list/dict methods a check may call (facts_extract/value_checks.PURE_METHODS)
_METHODS = frozenset({"count", "startswith", "endswith", "lower", "upper", "strip", "lstrip", "rstrip",
                      "split", "join", "keys", "values", "items", "get", "index"})
_KIND_OF = {bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "dict",
            type(None): "none"}


class _Unknown:
    def __repr__(self) -> str:
        return "…"


UNKNOWN = _Unknown()


def refusal(spec: Dict[str, Any], value: Dict[str, Any]) -> Optional[Tuple[str, str, List[str]]]:
    """Return (vLLM's message, exception, fields read) when the class's checks refuse `value`."""
    checks = spec.get("checks")
    if not checks or not isinstance(value, dict):
        return None
    program = checks["program"]
    adds = list(dict.fromkeys((item[1], item[2]) for item in program if item[0] == "maybe_add"))
    if 2 ** len(adds) > MAX_VARIANTS:
        return None
    found = None
    for chosen in itertools.product((False, True), repeat=len(adds)):
        hit = _run(program, _values(spec, checks, value), set(value),
                   {add for add, on in zip(adds, chosen) if on})
        if hit is None:
            return None           # some launches get past every check
        found = found or hit      # the message of the launch with nothing added
    return found


def _values(spec: Dict[str, Any], checks: Dict[str, Any], value: Dict[str, Any]) -> Dict[str, Any]:
    fields = spec.get("fields") or {}
    out: Dict[str, Any] = dict(checks.get("defaults") or {})
    for key, item in value.items():
        kinds = (fields.get(key) or {}).get("kinds") or []
        out[key] = item if _KIND_OF.get(type(item)) in kinds else UNKNOWN
    for name in checks.get("validated") or ():
        out[name] = UNKNOWN
    return {f"field:{k}": v for k, v in out.items()}


def _run(program: List[list], env: Dict[str, Any], stated: set, adds: set) -> Optional[Tuple[str, str, List[str]]]:
    for item in program:
        kind = item[0]
        if kind == "let":
            env[f"local:{item[1]}"] = _eval(item[2], env)
        elif kind == "forget":
            env[f"{item[1][0]}:{item[1][1]}"] = UNKNOWN
        elif kind == "maybe_add":
            key = f"field:{item[1]}"
            if (item[1], item[2]) in adds and isinstance(env.get(key), list) and item[2] not in env[key]:
                env[key] = env[key] + [item[2]]
        elif kind == "guard":
            _, test, message, exc, fields = item
            if any(f in stated for f in fields) and _eval(test, env, truth=True) is True:
                return _render(message, env), exc, fields
        elif kind == "each":
            _, var, iterable, test, message, exc, fields = item
            items = _eval(iterable, env)
            if not any(f in stated for f in fields) or not isinstance(items, (list, tuple)):
                continue
            for element in items:
                scope = dict(env, **{f"local:{var}": element})
                if _eval(test, scope, truth=True) is True:
                    return _render(message, scope), exc, fields
    return None


def _render(message: List[list], env: Dict[str, Any]) -> str:
    out = []
    for piece in message:
        if piece[0] == "text":
            out.append(piece[1])
            continue
        value = _eval(piece[1], env)
        out.append("…" if value is UNKNOWN else repr(value) if piece[2] == "r" else str(value))
    return "".join(out)


def _eval(expr: list, env: Dict[str, Any], truth: bool = False) -> Any:
    """Evaluate one expression; `truth`: return its truth value (True, False or UNKNOWN)."""
    try:
        value = _value(expr, env)
        if truth and value is not UNKNOWN:
            return bool(value)
        return value
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError):
        return UNKNOWN        # Python itself would raise: not the check's own refusal


def _value(expr: list, env: Dict[str, Any]) -> Any:
    kind = expr[0]
    if kind == "unknown":
        return UNKNOWN
    if kind == "const":
        return expr[1]
    if kind in ("field", "local"):
        return env.get(f"{kind}:{expr[1]}", UNKNOWN)
    if kind == "type":
        return _TYPES.get(expr[1], UNKNOWN)
    if kind in ("list", "tuple", "set"):
        items = [_value(e, env) for e in expr[1]]
        if any(i is UNKNOWN for i in items):
            return UNKNOWN
        return {"list": list, "tuple": tuple, "set": set}[kind](items)
    if kind == "and":
        result: Any = True
        for part in expr[1]:
            got = _truth(_value(part, env))
            if got is False:
                return False
            if got is UNKNOWN:
                result = UNKNOWN
        return result
    if kind == "or":
        result = False
        for part in expr[1]:
            got = _truth(_value(part, env))
            if got is True:
                return True
            if got is UNKNOWN:
                result = UNKNOWN
        return result
    if kind == "not":
        got = _truth(_value(expr[1], env))
        return UNKNOWN if got is UNKNOWN else not got
    if kind == "ifexp":
        test = _truth(_value(expr[1], env))
        return UNKNOWN if test is UNKNOWN else _value(expr[2] if test else expr[3], env)
    if kind == "comp":
        _, shape, var, iterable, conds, element = expr
        items = _value(iterable, env)
        if not isinstance(items, (list, tuple, set, str, dict)):
            return UNKNOWN
        out = []
        for item in items:
            scope = dict(env, **{f"local:{var}": item})
            tests = [_truth(_value(c, scope)) for c in conds]
            if UNKNOWN in tests:
                return UNKNOWN
            if all(tests):
                got = _value(element, scope)
                if got is UNKNOWN:
                    return UNKNOWN
                out.append(got)
        return set(out) if shape == "set" else out
    args = [_value(e, env) for e in _operands(expr)]
    if any(a is UNKNOWN for a in args):
        return UNKNOWN
    if kind == "cmp":
        return _CMP[expr[1]](*args)
    if kind == "bin":
        if expr[1] == "*" and not all(isinstance(a, (int, float)) for a in args):
            return UNKNOWN     # no repeating a user's string or list
        return _BIN[expr[1]](*args)
    if kind == "neg":
        return -args[0]
    if kind == "index":
        return args[0][args[1]]
    if kind == "slice":
        return args[0][args[1]:args[2]]
    if kind == "call":
        return _BUILTINS[expr[1]](*args)
    if kind == "method":
        receiver, rest = args[0], args[1:]
        if expr[2] not in _METHODS or not isinstance(receiver, (str, list, tuple, dict)):
            return UNKNOWN
        return getattr(receiver, expr[2])(*rest)
    return UNKNOWN


def _operands(expr: list) -> List[list]:
    kind = expr[0]
    if kind in ("cmp", "bin"):
        return [expr[2], expr[3]]
    if kind in ("neg",):
        return [expr[1]]
    if kind in ("index",):
        return [expr[1], expr[2]]
    if kind == "slice":
        return [expr[1], expr[2], expr[3]]
    if kind == "call":
        return list(expr[2])
    if kind == "method":
        return [expr[1]] + list(expr[3])
    return [["unknown"]]


def _truth(value: Any) -> Any:
    return UNKNOWN if value is UNKNOWN else bool(value)
