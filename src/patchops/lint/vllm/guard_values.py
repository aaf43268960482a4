"""Evaluate one expression of a guard program (guard_expressions' JSON lists), three-valued.

A value is a Python value or UNKNOWN; an operation on an unknown is unknown, except where
the other side decides (`False and ...`, `x in ()`). config_checks runs the programs over it;
`state` is its per-class state (`get(key)`, `values`, `model`: the config.json facts, `host`:
what the launching process answers).
"""

from __future__ import annotations

import operator
from typing import Any, List


class _Unknown:
    def __repr__(self) -> str:
        return "…"


UNKNOWN = _Unknown()
MODEL_CLASS = "ModelConfig"     # guard_programs.MODEL_CLASS: its ["model", path] reads config.json
_CMP = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge, "is": operator.is_, "is not": operator.is_not,
        "in": lambda a, b: a in b, "not in": lambda a, b: a not in b}
_TYPES = {"type": type, "str": str, "int": int, "float": float, "bool": bool, "dict": dict,
          "list": list, "tuple": tuple}
_BIN = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
        "%": operator.mod}


def const_value(expr: list) -> Any:
    if expr[0] == "tuple":
        return tuple(const_value(e) for e in expr[1])
    if expr[0] == "list":
        return [const_value(e) for e in expr[1]]
    return expr[1] if expr[0] == "const" else UNKNOWN


def truth(value: Any) -> Any:
    if value is UNKNOWN:
        return UNKNOWN
    try:
        return bool(value)
    except Exception:  # noqa: BLE001 - an odd value is not a decision
        return UNKNOWN


def _any(expr: list, state, states) -> Any:
    """Return whether some item of a loop makes its test true, leaving the loop name bound to it
    (the message names the item)."""
    _, name, items, test = expr
    values = evaluate(items, state, states)
    if not isinstance(values, (list, tuple)):
        return UNKNOWN
    key, unsure = "local:" + name, False
    for value in values:
        state.values[key] = value
        decided = truth(evaluate(test, state, states))
        if decided is True:
            return True
        unsure = unsure or decided is UNKNOWN
    state.values[key] = UNKNOWN
    return UNKNOWN if unsure else False


def _model_value(path: str, state, states) -> Any:
    """Return what ModelConfig's `path` is for this model's config.json, or a ModelConfig field."""
    model = state.model
    if model is not None and path == "is_moe":      # `get_num_experts() > 0`, over the same keys
        return model.num_experts > 0
    if model is not None and path in ("get_total_num_kv_heads()", "model_arch_config.total_num_kv_heads"):
        kv = model.text_config.get("num_key_value_heads")     # families with their own key: unknown
        return kv if isinstance(kv, int) and not isinstance(kv, bool) else UNKNOWN
    if model is not None and path == "use_mla":     # MLA needs `kv_lora_rank`; with it, envs and types decide
        return False if not model.uses_mla else UNKNOWN
    if "." not in path and "(" not in path and (states or {}).get(MODEL_CLASS) is not None:
        return states[MODEL_CLASS].get("field:" + path)      # a field: the flag EngineArgs passed
    return UNKNOWN


def _bool_op(is_and: bool, values: List[Any]) -> Any:
    """Return `a and b ...` / `a or b ...` as Python does (the deciding operand), three-valued.

    An operand that decides after an unknown one decides the truth, not the value.
    """
    deciding = not is_and          # `and` stops at a false operand, `or` at a true one
    unsure = False
    for value in values:
        decided = truth(value)
        if decided is UNKNOWN:
            unsure = True
        elif decided is deciding:
            return deciding if unsure else value
    return UNKNOWN if unsure else (values[-1] if values else is_and)


def _empty(container: Any) -> bool:
    return isinstance(container, (tuple, list, dict)) and len(container) == 0


def evaluate(expr: list, state, states=None) -> Any:  # noqa: C901 - one branch per node kind
    kind = expr[0]
    if kind == "const":
        return expr[1]
    if kind in ("tuple", "list"):
        items = [evaluate(e, state, states) for e in expr[1]]
        if any(i is UNKNOWN for i in items):
            return UNKNOWN
        return tuple(items) if kind == "tuple" else items
    if kind in ("field", "param", "local", "dest", "env"):
        return state.get(f"{kind}:{expr[1]}")
    if kind == "has":
        return True if state.get("field:" + expr[1]) is not UNKNOWN else UNKNOWN
    if kind == "other":
        other = (states or {}).get(expr[1])
        return other.get("field:" + expr[2]) if other is not None else UNKNOWN
    if kind in ("and", "or"):
        return _bool_op(kind == "and", [evaluate(e, state, states) for e in expr[1]])
    if kind == "not":
        value = truth(evaluate(expr[1], state, states))
        return UNKNOWN if value is UNKNOWN else not value
    if kind == "model":
        return _model_value(expr[1], state, states)
    if kind == "host":
        return (state.host or {}).get(expr[1], UNKNOWN)
    if kind == "any":
        return _any(expr, state, states)
    if kind == "attr":
        owner = evaluate(expr[1], state, states)
        # a config given as a mapping (a JSON flag): a key it states; one it omits is the class's default
        return owner.get(expr[2], UNKNOWN) if isinstance(owner, dict) else UNKNOWN
    if kind == "isinstance":
        value = evaluate(expr[1], state, states)
        return UNKNOWN if value is UNKNOWN else isinstance(value, tuple(_TYPES[n] for n in expr[2]))
    args = [evaluate(e, state, states) for e in expr[1:] if isinstance(e, list)]
    if kind == "cmp" and expr[1] in ("in", "not in") and args[1] is not UNKNOWN and _empty(args[1]):
        return expr[1] == "not in"        # nothing is in an empty tuple, whatever the left side is
    if any(a is UNKNOWN for a in args):
        return UNKNOWN
    try:
        if kind == "cmp":
            return _CMP[expr[1]](*args)
        if kind == "bin":
            return _BIN[expr[1]](*args)
        if kind == "neg":
            return -args[0]
        if kind == "len":
            return len(args[0])
        if kind == "split":
            return args[0].split(expr[2]) if isinstance(args[0], str) else UNKNOWN
        if kind == "ifexp":
            return args[1] if args[0] else args[2]
    except Exception:  # noqa: BLE001 - None < 1 and the like: vLLM's own error, not this one
        return UNKNOWN
    return UNKNOWN
