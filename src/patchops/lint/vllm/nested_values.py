"""Run a nested config's own post-init checks (facts `nested_configs[dest]["checks"]`) on its JSON.

The programs come from `lint/extract/value_checks.py` (`lint/checks/ir.py` records, run by
`lint/checks/interpreter.py`). Values are the user's JSON values
of the class's fields (or the class's literal defaults); a field a validator converts first,
a value of another type than the field's (pydantic would coerce it), a forgotten name or any
expression the reader could not read is UNKNOWN, and so is whatever depends on it. A check
counts only when its test is certainly true, it reads a field the user wrote, and it holds
with and without every `maybe_add` (an append under a condition lint does not read).
"""

from __future__ import annotations

import itertools
from typing import Any, Dict, List, Optional, Tuple

from patchops.lint.checks import ir
from patchops.lint.checks.interpreter import UNKNOWN, Scope, key_of, render, truth_of, value
from patchops.lint.facts.groups import NestedConfig

BOUND_HOLDS = {"gt": lambda v, b: v > b, "ge": lambda v, b: v >= b,
               "lt": lambda v, b: v < b, "le": lambda v, b: v <= b}
BOUND_WORDS = {"gt": "greater than", "ge": "greater than or equal to",
               "lt": "less than", "le": "less than or equal to"}
TYPE_NOUNS = {"int": "a valid integer", "float": "a valid number", "str": "a valid string",
              "bool": "a valid boolean", "list": "a valid list", "dict": "a valid dictionary"}
BOOL_WORDS = {"true", "false", "1", "0", "yes", "no", "on", "off", "t", "f", "y", "n"}

MAX_VARIANTS = 16
_KIND_OF = {bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "dict",
            type(None): "none"}


def refusal(spec: NestedConfig, given: Dict[str, Any]) -> Optional[Tuple[str, str, List[str]]]:
    """Return (vLLM's message, exception, fields read) when the class's checks refuse `given`."""
    checks = spec.checks
    if not checks or not isinstance(given, dict):
        return None
    program = ir.parse_nested(checks["program"])
    adds = list(dict.fromkeys((item.field, item.value) for item in program if isinstance(item, ir.MaybeAdd)))
    if 2 ** len(adds) > MAX_VARIANTS:
        return None
    found = None
    for chosen in itertools.product((False, True), repeat=len(adds)):
        hit = _run(program, _values(spec, checks, given), set(given),
                   {add for add, on in zip(adds, chosen) if on})
        if hit is None:
            return None           # some launches get past every check
        found = found or hit      # the message of the launch with nothing added
    return found


def _values(spec: NestedConfig, checks: Dict[str, Any], given: Dict[str, Any]) -> Scope:
    fields = spec.fields
    out: Dict[str, Any] = dict(checks.get("defaults") or {})
    for key, item in given.items():
        kinds = fields[key].kinds if key in fields else ()
        out[key] = item if _KIND_OF.get(type(item)) in kinds else UNKNOWN
    for name in checks.get("validated") or ():
        out[name] = UNKNOWN
    return Scope({f"field:{k}": v for k, v in out.items()})


def _run(program: Tuple[ir.NestedStatement, ...], scope: Scope, stated: set,
         adds: set) -> Optional[Tuple[str, str, List[str]]]:
    for item in program:
        if isinstance(item, ir.Let):
            scope.bind(f"local:{item.name}", value(item.value, scope))
        elif isinstance(item, ir.Forget):
            scope.bind(key_of(item.target), UNKNOWN)
        elif isinstance(item, ir.MaybeAdd):
            key, current = f"field:{item.field}", scope.get(f"field:{item.field}")
            if (item.field, item.value) in adds and isinstance(current, list) and item.value not in current:
                scope.bind(key, current + [item.value])
        elif not any(f in stated for f in item.fields):
            continue
        elif isinstance(item, ir.FieldGuard):
            if truth_of(item.test, scope) is True:
                return render(item.message, scope), item.exception, list(item.fields)
        else:
            items = value(item.iterable, scope)
            for element in items if isinstance(items, (list, tuple)) else ():
                inner = Scope(dict(scope.values, **{f"local:{item.var}": element}))
                if truth_of(item.test, inner) is True:
                    return render(item.message, inner), item.exception, list(item.fields)
    return None
