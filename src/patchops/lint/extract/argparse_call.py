"""Turn one `add_argument(...)` call of vLLM's parser into a Flag.

Option names may be f-strings over a loop variable; keywords may come spread from a field's
get_kwargs() entry (`**X["f"]`), edited before the call. argparse_reader finds the calls.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from patchops.lint.facts.model import Flag
from patchops.lint.extract.hint_kwargs import TYPE_NAMES, KwargsStyle, kwargs_from_hints, sorted_values
from patchops.lint.extract.source_tree import Module, Source, last_name, str_const
from patchops.lint.extract.static_eval import UNRESOLVED, Classes, Hints, first_atom


@dataclass
class KwargsMap:
    """`X = get_kwargs(Cls)`: per-field kwargs, plus edits made to it before add_argument."""

    mod: Module
    cls: Optional[ast.ClassDef]
    edits: Dict[str, Dict[str, Any]] = field(default_factory=dict)  # field -> key -> (expr,ctx) | DELETE


@dataclass
class FieldKwargs:
    """`X["name"]` of a KwargsMap (or a copy bound to its own variable)."""

    kmap: KwargsMap
    name: str


DELETE = object()


def kwargs_holder(expr: ast.AST, env: Dict[str, Any]) -> Optional["FieldKwargs"]:
    """Return the FieldKwargs `expr` names: a variable holding one, or `kwargs_map["field"]`."""
    if isinstance(expr, ast.Name) and isinstance(env.get(expr.id), FieldKwargs):
        return env[expr.id]
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name) \
            and isinstance(env.get(expr.value.id), KwargsMap):
        fname = str_const(subscript_index(expr))
        if fname:
            return FieldKwargs(env[expr.value.id], fname)
    return None


def subscript_index(sub: ast.Subscript) -> ast.AST:
    s = sub.slice
    if isinstance(s, ast.Index):  # Python 3.8
        s = s.value  # type: ignore[attr-defined]
    return s


class ArgumentReader:
    """Read add_argument calls into Flags, noting what does not resolve in `unresolved`."""

    def __init__(self, src: Source, classes: Classes, style: KwargsStyle, unresolved: List[str]):
        self.src = src
        self.classes = classes
        self.hints = Hints(classes)
        self.style = style
        self.unresolved = unresolved
        self._field_kw_cache: Dict[Tuple[int, str], Dict[str, Any]] = {}

    def read(self, call: ast.Call, env: Dict[str, Any], mod: Module) -> Optional[Flag]:
        """Return the Flag `call` adds, or None for a positional or an unresolved option name."""
        options: List[str] = []
        for arg in call.args:
            if isinstance(arg, ast.Starred):
                continue  # extra flags from a kwargs "flags" entry: none in released vLLM
            text = self._string(arg, env, mod)
            if text is None:
                self.unresolved.append(f"{mod.rel}:{call.lineno}: option name {ast.unparse(arg)[:60]}")
                return None
            options.append(text)
        if not options or not options[0].startswith("-"):
            return None  # a positional (model_tag)
        kw: Dict[str, Any] = {}
        explicit: Dict[str, Tuple[ast.AST, Module, Dict[str, Any]]] = {}
        for keyword in call.keywords:
            if keyword.arg is None:
                self._spread(keyword.value, env, mod, kw, explicit)
            else:
                explicit[keyword.arg] = (keyword.value, mod, env)
        for key, (expr, emod, eenv) in explicit.items():
            self._explicit(key, expr, emod, eenv, kw)
        return self._make_flag(options, kw)

    def _spread(self, expr: ast.AST, env, mod, kw: Dict[str, Any], explicit) -> None:
        """Merge `**X["f"]`, `**Y` or `**{**X["f"], "k": v}` into the kwargs."""
        if isinstance(expr, ast.Dict):
            for k, v in zip(expr.keys, expr.values):
                if k is None:
                    self._spread(v, env, mod, kw, explicit)
                else:
                    key = str_const(k)
                    if key:
                        explicit.pop(key, None)
                        self._explicit(key, v, mod, env, kw)
            return
        holder = kwargs_holder(expr, env)
        if holder is None:
            self.unresolved.append(f"{mod.rel}: **{ast.unparse(expr)[:60]}")
            return
        kw.update(self._field_kwargs(holder))

    def _field_kwargs(self, holder: FieldKwargs) -> Dict[str, Any]:
        kmap = holder.kmap
        key = (id(kmap.cls), holder.name)
        if key not in self._field_kw_cache:
            base: Dict[str, Any] = {}
            info = self.classes.fields(kmap.mod, kmap.cls).get(holder.name) if kmap.cls else None
            if info is not None:
                atoms = self.hints.atoms(info.annotation, info.mod)
                base = kwargs_from_hints(atoms, holder.name, self.style)
                base["default"] = self.classes.default_of(info.value, info.mod, info.cls) \
                    if info.value is not None else UNRESOLVED
            self._field_kw_cache[key] = base
        out = dict(self._field_kw_cache[key])
        for k, edit in kmap.edits.get(holder.name, {}).items():
            if edit is DELETE:
                out.pop(k, None)
            else:
                expr, emod, eenv = edit
                self._explicit(k, expr, emod, eenv, out)
        return out

    def _explicit(self, key: str, expr: ast.AST, mod: Module, env: Dict[str, Any],
                  kw: Dict[str, Any]) -> None:
        """Convert one `key=expr` argparse keyword into the Flag vocabulary."""
        if isinstance(expr, ast.Name) and isinstance(env.get(expr.id), ast.AST):
            expr = env[expr.id]  # a loop variable
        if key == "action":
            kw["action"] = _action_name(expr)
        elif key == "type":
            name, optional = _type_name(expr)
            kw["type"] = name
            if optional:
                kw["optional"] = True
        elif key == "nargs":
            value = self.classes.evaluate(expr, mod)
            kw["nargs"] = None if value is UNRESOLVED or value is None else str(value)
        elif key == "choices":
            kw["choices"] = self._choices(expr, mod)
        elif key == "default":
            kw["default"] = self._default(expr, mod, env)
        elif key == "dest":
            kw["dest"] = str_const(expr)
        elif key == "deprecated":
            kw["deprecated"] = self.classes.evaluate(expr, mod) is True
        elif key == "const":
            kw["const"] = self.classes.evaluate(expr, mod)

    def _default(self, expr: ast.AST, mod: Module, env: Dict[str, Any]) -> Any:
        # model_kwargs["hf_token"]["default"] (0.9.2) reads a field's kwargs
        if isinstance(expr, ast.Subscript) and str_const(subscript_index(expr)) == "default":
            inner = expr.value
            if isinstance(inner, ast.Subscript) and isinstance(inner.value, ast.Name) \
                    and isinstance(env.get(inner.value.id), KwargsMap):
                fname = str_const(subscript_index(inner))
                if fname:
                    return self._field_kwargs(FieldKwargs(env[inner.value.id], fname)).get(
                        "default", UNRESOLVED)
        return self.classes.evaluate(expr, mod)

    def _choices(self, expr: ast.AST, mod: Module) -> Optional[Tuple[Any, ...]]:
        # get_args(TaskOption): a Literal alias
        if isinstance(expr, ast.Call) and last_name(expr.func) == "get_args" and expr.args:
            atoms = self.hints.atoms(expr.args[0], mod)
            lit = first_atom(atoms, "literal")
            return tuple(lit[1]) if lit else None
        # [f.value for f in LoadFormat]: an enum's values
        if isinstance(expr, ast.ListComp) and len(expr.generators) == 1 \
                and isinstance(expr.elt, ast.Attribute) and expr.elt.attr in ("value", "name"):
            found = self.src.entity(expr.generators[0].iter, mod)
            if found and found[0] == "class":
                members = self.classes.enum_members(found[1], found[2])
                if expr.elt.attr == "name":
                    return tuple(name for name, _ in members)
                values = [self.classes.evaluate(v, found[1], found[2]) for _, v in members]
                if members and all(v is not UNRESOLVED for v in values):
                    return tuple(values)
            return None
        value = self.classes.evaluate(expr, mod)
        if isinstance(value, dict):
            value = list(value)
        if isinstance(value, (list, tuple)) and value:
            return tuple(value)
        # Empty means a registry filled at import time, e.g.
        # list(ReasoningParserManager.reasoning_parsers) (0.8.5): unknown, not "nothing".
        return None

    def _string(self, expr: ast.AST, env: Dict[str, Any], mod: Module) -> Optional[str]:
        if isinstance(expr, ast.Name) and isinstance(env.get(expr.id), ast.AST):
            return self._string(env[expr.id], env, mod)
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return expr.value
        if isinstance(expr, ast.JoinedStr):
            parts = []
            for value in expr.values:
                if isinstance(value, ast.Constant):
                    parts.append(str(value.value))
                elif isinstance(value, ast.FormattedValue):
                    got = self._fstring_part(value.value, env, mod)
                    if got is None:
                        return None
                    parts.append(got)
            return "".join(parts)
        return None

    def _fstring_part(self, expr: ast.AST, env, mod) -> Optional[str]:
        # f"--{key.replace('_', '-')}" in the FrontendArgs loop (0.10+)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) \
                and expr.func.attr == "replace" and len(expr.args) == 2:
            base = self._string(expr.func.value, env, mod)
            old, new = str_const(expr.args[0]), str_const(expr.args[1])
            if base is not None and old is not None and new is not None:
                return base.replace(old, new)
            return None
        return self._string(expr, env, mod)

    def _make_flag(self, options: List[str], kw: Dict[str, Any]) -> Flag:
        longs = [o for o in options if o.startswith("--")]
        main = longs[0] if longs else options[0]
        dest = kw.get("dest") or main.lstrip("-").replace("-", "_")
        action = kw.get("action") or "store"
        default = kw.get("default", UNRESOLVED)
        if default is UNRESOLVED:
            default = {"store_true": False, "store_false": True}.get(action)
        choices = kw.get("choices")
        known = kw.get("known_values")
        chance = kw.get("chance_choices")
        type_name = kw.get("type")
        if action in ("store", "append") and type_name is None:
            type_name = "str"  # argparse hands the raw string over
        return Flag(
            name=main.lstrip("-"),
            dest=dest,
            action=action,
            nargs=kw.get("nargs"),
            type=None if action in ("store_true", "store_false", "boolean_optional",
                                    "store_const", "count") else type_name,
            default=jsonable(default),
            choices=tuple(jsonable(list(choices))) if choices is not None else None,
            aliases=tuple(o for o in options if o != main),
            optional=bool(kw.get("optional")),
            deprecated=bool(kw.get("deprecated")),
            known_values=tuple(jsonable(list(known))) if known is not None else None,
            chance_choices=tuple(jsonable(list(chance))) if chance is not None else None,
        )


def _action_name(expr: ast.AST) -> str:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    name = last_name(expr) or "other"
    # argparse.BooleanOptionalAction adds --no-X (0.8.5+); StoreBoolean takes "true"/"false"
    # (engine/arg_utils.py, 0.6.3-0.7.3)
    return {"BooleanOptionalAction": "boolean_optional", "StoreBoolean": "store_boolean"}.get(name, name)


def _type_name(expr: ast.AST) -> Tuple[Optional[str], bool]:
    """Name a `type=` callable; the bool says whether it maps "None" to None."""
    if isinstance(expr, ast.Call):
        fname = last_name(expr.func)
        if fname == "optional_type" and expr.args:
            return _type_name(expr.args[0])[0], True
        if fname == "parse_type" and expr.args:
            return _type_name(expr.args[0])
        return fname, False
    if isinstance(expr, ast.Lambda):
        # lambda s: s.lower().replace("-", "_") normalises before the choices check (0.33
        # --moe-backend, --linear-backend)
        lowers = any(isinstance(n, ast.Attribute) and n.attr == "lower" for n in ast.walk(expr.body))
        return ("lowercase_str" if lowers else "lambda"), False
    name = last_name(expr)
    if name is None:
        return None, False
    return TYPE_NAMES.get(name, name), name in ("nullable_str", "nullable_kvs")


def jsonable(value: Any) -> Any:
    """Make a resolved literal survive a JSON round trip unchanged (tuples become lists)."""
    if value is UNRESOLVED:
        return None
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, set):
        return [jsonable(v) for v in sorted_values(list(value))]
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {k: jsonable(v) for k, v in value.items()}
        return None
    if isinstance(value, float) and value != value:
        return None
    return value
