"""Run the checks a copy's config classes make (facts `config_checks`) on one config.

The programs come from `facts_extract/guard_programs.py`: assignments and guards with the
conditions they run under. Values are three-valued: a Python value, or UNKNOWN when the
config does not decide it (a value EngineArgs rewrites, a platform query, an environment
read). A guard counts only when its condition and its test are certainly true, and only when
the user stated at least one of the settings it reads: a check that would fail on vLLM's
own defaults is a misreading here, not a refusal.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from patchops.lint.config import ServeConfig, Setting, parse_literal
from patchops.lint.facts import Facts
from patchops.lint.vllm import inputs


class _Unknown:
    def __repr__(self) -> str:
        return "…"


UNKNOWN = _Unknown()
_CMP = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge, "is": operator.is_, "is not": operator.is_not,
        "in": lambda a, b: a in b, "not in": lambda a, b: a not in b}
_BIN = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
        "%": operator.mod}


@dataclass(frozen=True)
class Refusal:
    """A guard that fires: the class, vLLM's message and exception, the settings it read
    (the guard's subject first)."""

    config_class: str
    message: str
    exception: str
    settings: Tuple[Setting, ...]


def refusals(cfg: ServeConfig, facts: Facts) -> List[Refusal]:
    """Return the first guard that fires in each config class this config builds."""
    found = facts.config_checks or {}
    classes = found.get("classes") or {}
    rewritten = set(found.get("rewritten") or ())
    states = {name: _initial_state(cfg, facts, spec, rewritten) for name, spec in classes.items()}
    for state in states.values():
        if state is not None:
            state.others = states
    out = []
    for name, spec in classes.items():
        state = states[name]
        if state is None:
            continue
        hit = _run(spec["program"], state, states)
        if hit is not None:
            out.append(Refusal(name, *hit))
    return out


class _State:
    """The values one program runs on; a program over the flags falls back to them (`engine`)."""

    def __init__(self, values: Dict[str, Any], sources: Dict[str, Setting], engine=None, envs=None):
        self.values = values        # "field:x" / "param:x" / "local:x" -> value
        self.sources = sources      # same keys -> the user's Setting behind the value
        self.engine = engine
        self.envs = envs
        self.others: Dict[str, Optional["_State"]] = {}   # the other classes' states (verify_with_*)
        self.all_unknown = False

    def get(self, key: str) -> Any:
        if key.startswith("env:"):
            return self.envs.get(key) if self.envs is not None else UNKNOWN
        if self.all_unknown and not key.startswith("local:"):
            return UNKNOWN
        if key not in self.values and self.engine is not None and key.startswith("field:"):
            return self.engine.get("dest:" + key[6:], own=True)
        return self.values.get(key, UNKNOWN)

    def source(self, key: str) -> Optional[Setting]:
        if key in self.sources:
            return self.sources[key]
        if key not in self.values and self.engine is not None and key.startswith("field:"):
            return self.engine.source(key[6:])
        return None


def _initial_state(cfg: ServeConfig, facts: Facts, spec: dict, rewritten: set) -> Optional[_State]:
    """Return the values a class starts from, or None when this config does not build it."""
    built = spec.get("built") or {}
    values: Dict[str, Any] = {}
    sources: Dict[str, Setting] = {}
    envs = _Envs(cfg, (facts.config_checks or {}).get("envs") or {})
    if built.get("flags"):
        fixed = {"field:" + name: _const(const) for name, const in (spec.get("defaults") or {}).items()}
        return _State(fixed, sources, _EngineValues(cfg, facts, rewritten), envs)
    for name, const in (spec.get("defaults") or {}).items():
        values["field:" + name] = _const(const)
    if "flag" in built:
        found = inputs.setting(cfg, built["flag"])
        raw = found.value if found is not None else None
        if isinstance(raw, str):
            raw = parse_literal(raw)
        if not isinstance(raw, dict):
            return None
        for key, value in raw.items():
            name = str(key).replace("-", "_")
            values["field:" + name] = value
            sources["field:" + name] = found
        return _State(values, sources, envs=envs)
    engine = _EngineValues(cfg, facts, rewritten)
    if _truth(_eval(built.get("when", ["const", True]), engine)) is not True:
        return None
    for name, expr in (built.get("args") or {}).items():
        value = _eval(expr, engine)
        stated = [engine.source(dest) for dest in _dests_in(expr) if engine.source(dest) is not None]
        for key in ("field:" + name, "param:" + name):
            values[key] = value
            if stated:
                sources[key] = stated[0]
    return _State(values, sources, envs=envs)


class _Envs:
    """Environment variables the config states, read as envs.py reads them; unknown when unset
    (vLLM may set some itself, such as VLLM_USE_V1 on a V0 fallback)."""

    def __init__(self, cfg: ServeConfig, kinds: Dict[str, str]):
        self.cfg, self.kinds = cfg, kinds

    def get(self, key: str) -> Any:
        name = key[4:]
        raw, kind = inputs.env_value(self.cfg, name), self.kinds.get(name)
        if raw is None or kind is None:
            return UNKNOWN
        try:
            return bool(int(raw)) if kind == "bool_int" else int(raw) if kind == "int" else raw
        except ValueError:
            return UNKNOWN


class _EngineValues:
    """EngineArgs fields as lint knows them: stated, else a literal default, unless rewritten."""

    def __init__(self, cfg: ServeConfig, facts: Facts, rewritten: set):
        self.cfg, self.facts, self.rewritten = cfg, facts, rewritten

    def source(self, dest: str) -> Optional[Setting]:
        return inputs.setting(self.cfg, dest) or inputs.bool_setting(self.cfg, dest)

    def get(self, key: str, own: bool = False) -> Any:
        """Return a flag's value; `own`: for EngineArgs' own program, which follows its rewrites."""
        kind, _, dest = key.partition(":")
        if kind != "dest" or (dest in self.rewritten and not own):
            return UNKNOWN
        flag = self.facts.flags.get(dest)
        if flag is not None and inputs.is_boolean(flag):
            stated = inputs.bool_value(self.cfg, dest)
            if stated is not None:
                return stated
        found = inputs.setting(self.cfg, dest)
        if found is not None:
            return found.value
        if dest in (self.facts.field_defaults or {}):
            return self.facts.field_defaults[dest]
        return UNKNOWN


def _run(program: List[list], state: _State, states: Dict[str, Optional[_State]]):
    for item in program:
        if item[0] == "assign":
            _, cond, target, expr = item
            holds = _truth(_eval(cond, state, states))
            if target[0] == "all":
                if holds is not False:
                    state.all_unknown = True
                continue
            key = f"{target[0]}:{target[1]}"
            if holds is True:
                state.values[key] = _eval(expr, state, states)
                state.sources.pop(key, None)
                state.sources.update({key: s for s in _sources_of(expr, state)[:1]})
            elif holds is UNKNOWN:
                state.values[key] = UNKNOWN
        elif item[0] == "guard":
            _, cond, test, message, exception = item
            if _truth(_eval(cond, state, states)) is True and _truth(_eval(test, state, states)) is True:
                # The guard's own `if` (the last condition) names its subject first.
                own = cond[1][-1:] if cond[0] == "and" else [cond]
                read = _sources_of(own, state) + _sources_of(test, state) + _sources_of(cond, state)
                settings = tuple({id(s): s for s in reversed(read)}.values())[::-1]
                if settings:
                    return _render(message, state, states), exception, settings
    return None


def _dests_in(expr: Any) -> List[str]:
    """Return the EngineArgs fields an expression of EngineArgs reads, in order."""
    if not isinstance(expr, list) or not expr:
        return []
    if expr[0] == "dest" and len(expr) == 2:
        return [expr[1]]
    return [d for part in expr for d in _dests_in(part)]


def _sources_of(expr: Any, state: _State) -> List[Setting]:
    """Return the user's settings an expression reads (fields, params, locals they fed)."""
    out: List[Setting] = []
    if isinstance(expr, list) and expr and isinstance(expr[0], list):     # an and/or operand list
        for part in expr:
            out += _sources_of(part, state)
    elif isinstance(expr, list) and expr:
        if expr[0] == "other" and len(expr) == 3:
            other = state.others.get(expr[1]) if state.others else None
            found = other.source("field:" + expr[2]) if other is not None else None
            if found is not None:
                out.append(found)
        elif expr[0] in ("field", "param", "local") and len(expr) == 2:
            found = state.source(f"{expr[0]}:{expr[1]}")
            if found is not None:
                out.append(found)
        else:
            for part in expr[1:]:
                out += _sources_of(part, state)
    return out


def _render(message: List[list], state: _State, states) -> str:
    text = ""
    for piece in message:
        if piece[0] == "text":
            text += piece[1]
        else:
            value = _eval(piece[1], state, states)
            text += repr(value) if piece[2] == "r" else "…" if value is UNKNOWN else str(value)
    return text


def _const(expr: list) -> Any:
    if expr[0] == "tuple":
        return tuple(_const(e) for e in expr[1])
    if expr[0] == "list":
        return [_const(e) for e in expr[1]]
    return expr[1] if expr[0] == "const" else UNKNOWN


def _truth(value: Any) -> Any:
    if value is UNKNOWN:
        return UNKNOWN
    try:
        return bool(value)
    except Exception:  # noqa: BLE001 - an odd value is not a decision
        return UNKNOWN


def _eval(expr: list, state, states=None) -> Any:  # noqa: C901 - one branch per node kind
    kind = expr[0]
    if kind == "const":
        return expr[1]
    if kind in ("tuple", "list"):
        items = [_eval(e, state, states) for e in expr[1]]
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
    if kind == "and":
        values = [_truth(_eval(e, state, states)) for e in expr[1]]
        if False in values:
            return False
        return UNKNOWN if UNKNOWN in values else True
    if kind == "or":
        values = [_truth(_eval(e, state, states)) for e in expr[1]]
        if True in values:
            return True
        return UNKNOWN if UNKNOWN in values else False
    if kind == "not":
        value = _truth(_eval(expr[1], state, states))
        return UNKNOWN if value is UNKNOWN else not value
    args = [_eval(e, state, states) for e in expr[1:] if isinstance(e, list)]
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
        if kind == "ifexp":
            return args[1] if args[0] else args[2]
    except Exception:  # noqa: BLE001 - None < 1 and the like: vLLM's own error, not this one
        return UNKNOWN
    return UNKNOWN
