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
from typing import Any, Dict, List, Optional, Tuple

from patchops.lint.facts.groups import NestedConfig
from patchops.lint.vllm.expression_values import UNKNOWN, Scope, render, truth_of, value

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
    program = checks["program"]
    adds = list(dict.fromkeys((item[1], item[2]) for item in program if item[0] == "maybe_add"))
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


def _run(program: List[list], scope: Scope, stated: set, adds: set) -> Optional[Tuple[str, str, List[str]]]:
    for item in program:
        kind = item[0]
        if kind == "let":
            scope.bind(f"local:{item[1]}", value(item[2], scope))
        elif kind == "forget":
            scope.bind(f"{item[1][0]}:{item[1][1]}", UNKNOWN)
        elif kind == "maybe_add":
            key, current = f"field:{item[1]}", scope.get(f"field:{item[1]}")
            if (item[1], item[2]) in adds and isinstance(current, list) and item[2] not in current:
                scope.bind(key, current + [item[2]])
        elif kind == "guard":
            _, test, message, exc, fields = item
            if any(f in stated for f in fields) and truth_of(test, scope) is True:
                return render(message, scope), exc, fields
        elif kind == "each":
            _, var, iterable, test, message, exc, fields = item
            items = value(iterable, scope)
            if not any(f in stated for f in fields) or not isinstance(items, (list, tuple)):
                continue
            for element in items:
                inner = Scope(dict(scope.values, **{f"local:{var}": element}))
                if truth_of(test, inner) is True:
                    return render(message, inner), exc, fields
    return None
