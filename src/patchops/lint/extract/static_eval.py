"""Evaluate expressions of a vLLM copy to literals, statically: defaults, enums, type hints.

What resolves to a literal (a constant, a dataclass field's default, an enum member, a
Literal alias) is evaluated; anything else is UNRESOLVED, never guessed.

Over 400 lines because Classes and Hints call each other (a default can be `get_args()` of a
Literal alias, a hint can name a dataclass): apart, they would import each other.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Set, Tuple

from patchops.lint.extract.source_tree import MAX_DEPTH, Module, Source, last_name, str_const

_BUILTIN_TYPES = {"int", "float", "str", "bool", "dict", "list", "tuple", "set", "bytes"}
_ENUM_BASES = {"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"}


class _Unresolved:
    """Marker for a value that does not resolve to a literal.

    Not checks.ir's UNKNOWN: this says the extractor found no literal to ship (a default, an
    enum member), so the fact is left out; UNKNOWN is a value a check's program holds and
    carries into the facts, for lint to run three-valued.
    """

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNRESOLVED"


UNRESOLVED: Any = _Unresolved()


@dataclass
class FieldInfo:
    name: str
    annotation: ast.AST
    value: Optional[ast.AST]
    mod: Module
    cls: ast.ClassDef


class Classes:
    """Dataclass fields, enum members and literal evaluation over a `Source`."""

    def __init__(self, src: Source):
        self.src = src
        self._fields: Dict[int, Dict[str, FieldInfo]] = {}

    def bases(self, mod: Module, cls: ast.ClassDef) -> Iterator[Tuple[Module, ast.ClassDef]]:
        for base in cls.bases:
            found = self.src.entity(base, mod)
            if found and found[0] == "class":
                yield found[1], found[2]

    def base_names(self, mod: Module, cls: ast.ClassDef, depth: int = 0) -> Set[str]:
        """Return the last names of all bases, transitively (resolvable ones followed)."""
        # `class MultiModalDummyOptions(dict[str, BaseDummyOptions])` (0.32): the base is `dict`
        names = {n for n in (last_name(b.value if isinstance(b, ast.Subscript) else b)
                             for b in cls.bases) if n}
        if depth < 8:
            for bmod, bcls in self.bases(mod, cls):
                names |= self.base_names(bmod, bcls, depth + 1)
        return names

    def is_enum(self, mod: Module, cls: ast.ClassDef) -> bool:
        return bool(self.base_names(mod, cls) & _ENUM_BASES)

    def is_dataclass(self, mod: Module, cls: ast.ClassDef) -> bool:
        # vLLM decorates configs with @dataclass, @pydantic.dataclasses.dataclass or @config
        # (vllm/config/utils.py, which applies a pydantic dataclass from 0.12).
        for deco in cls.decorator_list:
            if last_name(deco) in ("dataclass", "config"):
                return True
        return False

    def fields(self, mod: Module, cls: ast.ClassDef, depth: int = 0) -> Dict[str, FieldInfo]:
        """Return dataclass fields in definition order, inherited ones first."""
        key = id(cls)
        if key in self._fields:
            return self._fields[key]
        out: Dict[str, FieldInfo] = {}
        if depth < 8:
            for bmod, bcls in reversed(list(self.bases(mod, cls))):
                out.update(self.fields(bmod, bcls, depth + 1))
        for stmt in cls.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            ann = stmt.annotation
            head = ann.value if isinstance(ann, ast.Subscript) else ann
            if last_name(head) in ("ClassVar", "InitVar", "KW_ONLY"):
                continue
            if isinstance(ann, ast.Constant) and isinstance(ann.value, str) and \
                    ann.value.split("[")[0].split(".")[-1] in ("ClassVar", "InitVar"):
                continue
            out[stmt.target.id] = FieldInfo(stmt.target.id, ann, stmt.value, mod, cls)
        self._fields[key] = out
        return out

    def class_constant(self, cls: ast.ClassDef, name: str) -> Optional[ast.AST]:
        """Return the value expression of a class-level assignment `name = ...`."""
        for stmt in cls.body:
            if isinstance(stmt, ast.Assign):
                if any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
                    return stmt.value
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) \
                    and stmt.target.id == name and stmt.value is not None:
                return stmt.value
        return None

    def enum_members(self, mod: Module, cls: ast.ClassDef) -> List[Tuple[str, ast.AST]]:
        out = []
        for stmt in cls.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                    and isinstance(stmt.targets[0], ast.Name):
                name = stmt.targets[0].id
                if not name.startswith("_"):
                    out.append((name, stmt.value))
        return out

    # -- defaults -------------------------------------------------------------------------

    def field_default(self, mod: Module, cls: ast.ClassDef, name: str, depth: int = 0) -> Any:
        """Resolve the default of dataclass field `name` (unwrapping field()/Field())."""
        info = self.fields(mod, cls).get(name)
        if info is None:
            # Not a field: maybe a class constant (ClassVar) or an enum member.
            value = self.class_constant(cls, name)
            if value is None:
                for bmod, bcls in self.bases(mod, cls):
                    got = self.field_default(bmod, bcls, name, depth + 1)
                    if got is not UNRESOLVED:
                        return got
                return UNRESOLVED
            return self.evaluate(value, mod, cls, depth + 1)
        if info.value is None:
            return UNRESOLVED  # a required field
        return self.default_of(info.value, info.mod, info.cls, depth + 1)

    def default_of(self, value: ast.AST, mod: Module, cls: Optional[ast.ClassDef],
                   depth: int = 0) -> Any:
        """Evaluate a field's right-hand side, unwrapping dataclasses.field / pydantic Field."""
        if isinstance(value, ast.Call) and last_name(value.func) in ("field", "Field"):
            kwargs = {k.arg: k.value for k in value.keywords if k.arg}
            if "default" in kwargs:
                return self.evaluate(kwargs["default"], mod, cls, depth + 1)
            if "default_factory" in kwargs:
                return self.factory(kwargs["default_factory"], mod, cls, depth + 1)
            if value.args and last_name(value.func) == "Field":
                first = value.args[0]
                if isinstance(first, ast.Constant) and first.value is Ellipsis:
                    return UNRESOLVED
                return self.evaluate(first, mod, cls, depth + 1)
            return UNRESOLVED
        return self.evaluate(value, mod, cls, depth + 1)

    def factory(self, expr: ast.AST, mod: Module, cls: Optional[ast.ClassDef], depth: int) -> Any:
        """Evaluate `default_factory=` to the value it would produce, when literal."""
        if isinstance(expr, ast.Name) and expr.id in ("list", "dict", "set", "tuple"):
            return {"list": [], "dict": {}, "set": [], "tuple": []}[expr.id]
        if isinstance(expr, ast.Lambda) and not expr.args.args:
            return self.evaluate(expr.body, mod, cls, depth + 1)
        return UNRESOLVED  # a nested config class or a function

    def evaluate(self, expr: ast.AST, mod: Module, cls: Optional[ast.ClassDef] = None,
                 depth: int = 0, env: Optional[Dict[str, ast.AST]] = None) -> Any:
        """Evaluate `expr` to a literal, following names, `Cls.attr` and `get_field()`."""
        if depth > MAX_DEPTH:
            return UNRESOLVED
        ev = lambda e: self.evaluate(e, mod, cls, depth + 1, env)  # noqa: E731
        if isinstance(expr, ast.Constant):
            if isinstance(expr.value, bytes) or expr.value is Ellipsis:
                return UNRESOLVED
            return expr.value
        if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
            items: List[Any] = []
            for elt in expr.elts:
                if isinstance(elt, ast.Starred):
                    inner = ev(elt.value)
                    if inner is UNRESOLVED:
                        inner = self._dict_keys(elt.value, mod, depth + 1)
                    if isinstance(inner, (list, tuple, dict)):
                        items.extend(list(inner))
                        continue
                    return UNRESOLVED
                got = ev(elt)
                if got is UNRESOLVED:
                    return UNRESOLVED
                items.append(got)
            return tuple(items) if isinstance(expr, ast.Tuple) else items
        if isinstance(expr, ast.Dict):
            out = {}
            for k, v in zip(expr.keys, expr.values):
                if k is None:
                    inner = ev(v)
                    if not isinstance(inner, dict):
                        return UNRESOLVED
                    out.update(inner)
                    continue
                key, val = ev(k), ev(v)
                if key is UNRESOLVED or val is UNRESOLVED:
                    return UNRESOLVED
                out[key] = val
            return out
        if isinstance(expr, ast.UnaryOp):
            operand = ev(expr.operand)
            if operand is UNRESOLVED:
                return UNRESOLVED
            try:
                if isinstance(expr.op, ast.USub):
                    return -operand
                if isinstance(expr.op, ast.UAdd):
                    return +operand
                if isinstance(expr.op, ast.Not):
                    return not operand
            except TypeError:
                return UNRESOLVED
            return UNRESOLVED
        if isinstance(expr, ast.BinOp):
            left, right = ev(expr.left), ev(expr.right)
            if left is UNRESOLVED or right is UNRESOLVED:
                return UNRESOLVED
            ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
                   ast.Mult: lambda a, b: a * b, ast.FloorDiv: lambda a, b: a // b,
                   ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a ** b,
                   ast.LShift: lambda a, b: a << b, ast.Mod: lambda a, b: a % b}
            op = ops.get(type(expr.op))
            if op is None:
                return UNRESOLVED
            try:
                if isinstance(expr.op, ast.Pow) and abs(right) > 256:
                    return UNRESOLVED
                return op(left, right)
            except Exception:
                return UNRESOLVED
        if isinstance(expr, ast.Name):
            if env and expr.id in env:
                return ev(env[expr.id])
            if cls is not None:
                value = self.class_constant(cls, expr.id)
                if value is not None:
                    return self.evaluate(value, mod, cls, depth + 1)
            found = self.src.resolve(mod, expr.id)
            return self._value_of(found, depth)
        if isinstance(expr, ast.Attribute):
            if expr.attr in ("value", "name") and isinstance(expr.value, ast.Attribute):
                # LoadFormat.AUTO.value (0.8.5 LoadConfig.load_format)
                member = self.src.entity(expr.value, mod)
                if member and member[0] == "attr" and self.is_enum(member[1], member[2]):
                    if expr.attr == "name":
                        return member[3]
                    return self._value_of(member, depth)
            return self._value_of(self.src.entity(expr, mod), depth)
        if isinstance(expr, ast.Call):
            fname = last_name(expr.func)
            if fname == "get_field" and len(expr.args) == 2:
                owner = self.src.entity(expr.args[0], mod)
                attr = str_const(expr.args[1])
                if owner and owner[0] == "class" and attr:
                    return self.field_default(owner[1], owner[2], attr, depth + 1)
                return UNRESOLVED
            if fname in ("field", "Field"):
                return self.default_of(expr, mod, cls, depth + 1)
            if fname == "get_args" and len(expr.args) == 1:
                # get_args(QuantizationMethods): the values of a Literal alias (0.8.5+)
                lit = first_atom(Hints(self).atoms(expr.args[0], mod), "literal")
                return list(lit[1]) if lit else UNRESOLVED
            if isinstance(expr.func, ast.Name) and expr.func.id in ("int", "float", "str", "bool") \
                    and len(expr.args) == 1 and not expr.keywords:
                arg = ev(expr.args[0])
                if isinstance(arg, (int, float, str, bool)):
                    try:
                        return {"int": int, "float": float, "str": str, "bool": bool}[expr.func.id](arg)
                    except (ValueError, OverflowError):
                        return UNRESOLVED
                return UNRESOLVED
            if isinstance(expr.func, ast.Name) and expr.func.id in ("list", "dict", "set", "tuple") \
                    and not expr.keywords:
                if not expr.args:
                    return {} if expr.func.id == "dict" else []
                arg = ev(expr.args[0])
                if isinstance(arg, (list, tuple, dict)):
                    return dict(arg) if expr.func.id == "dict" else list(arg)
            return UNRESOLVED
        return UNRESOLVED

    def _dict_keys(self, expr: ast.AST, mod: Module, depth: int) -> Any:
        """Keys of a dict whose values are classes: `[*QUANTIZATION_METHODS, None]` (0.6.3)."""
        found = self.src.entity(expr, mod) if isinstance(expr, (ast.Name, ast.Attribute)) else None
        if found and found[0] == "value" and isinstance(found[2], ast.Dict):
            keys = [self.evaluate(k, found[1], None, depth + 1) for k in found[2].keys if k is not None]
            if all(k is not UNRESOLVED for k in keys):
                return keys
        return UNRESOLVED

    def _value_of(self, found: Optional[tuple], depth: int) -> Any:
        if not found:
            return UNRESOLVED
        if found[0] == "value":
            return self.evaluate(found[2], found[1], None, depth + 1)
        if found[0] == "attr":
            _, mod, cls, attr = found
            if self.is_enum(mod, cls):
                for name, value in self.enum_members(mod, cls):
                    if name == attr:
                        return self.evaluate(value, mod, cls, depth + 1)
                return UNRESOLVED
            return self.field_default(mod, cls, attr, depth + 1)
        return UNRESOLVED


# Type hints, flattened. An "atom" is one member of the flattened set of type hints get_type_hints() returns:
#   ("none",) ("bool",) ("int",) ("float",) ("str",) ("dict",) ("literal", values)
#   ("list"|"set", inner_atoms) ("tuple", inner_atoms, has_ellipsis, length)
#   ("dataclass", name) ("class", name)


class Hints:
    """Flatten a type hint into atoms, following aliases and Literal values across modules."""

    def __init__(self, classes: Classes):
        self.classes = classes
        self.src = classes.src

    def atoms(self, expr: Optional[ast.AST], mod: Module, depth: int = 0) -> Set[tuple]:
        if expr is None or depth > MAX_DEPTH:
            return {("class", "?")}
        rec = lambda e: self.atoms(e, mod, depth + 1)  # noqa: E731
        if isinstance(expr, ast.Constant):
            if expr.value is None:
                return {("none",)}
            if isinstance(expr.value, str):  # a forward reference
                try:
                    return rec(ast.parse(expr.value, mode="eval").body)
                except SyntaxError:
                    return {("class", expr.value)}
            return {("class", "?")}
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr):
            return rec(expr.left) | rec(expr.right)
        if isinstance(expr, ast.Subscript):
            head = last_name(expr.value)
            args = expr.slice
            if isinstance(args, ast.Index):  # Python 3.8 wraps the slice
                args = args.value  # type: ignore[attr-defined]
            elts = list(args.elts) if isinstance(args, ast.Tuple) else [args]
            if head == "Optional":
                return rec(elts[0]) | {("none",)}
            if head == "Union":
                out: Set[tuple] = set()
                for elt in elts:
                    out |= rec(elt)
                return out
            if head in ("Annotated", "SkipValidation", "Final", "Required", "NotRequired"):
                # pydantic's SkipValidation[X] is Annotated[X, SkipValidation()] (0.9.2+ configs)
                return rec(elts[0])
            if head == "Literal":
                values: List[Any] = []
                for elt in elts:
                    got = self.literal_values(elt, mod, depth + 1)
                    if got is None:
                        return {("class", "Literal")}
                    values.extend(got)
                return {("literal", tuple(values))}
            if head in ("list", "List"):
                return {("list", frozenset(rec(elts[0])))}
            if head in ("set", "Set"):
                return {("set", frozenset(rec(elts[0])))}
            if head in ("tuple", "Tuple"):
                ellipsis = any(isinstance(e, ast.Constant) and e.value is Ellipsis for e in elts)
                inner: Set[tuple] = set()
                for elt in elts:
                    if not (isinstance(elt, ast.Constant) and elt.value is Ellipsis):
                        inner |= rec(elt)
                return {("tuple", frozenset(inner), ellipsis, len(elts))}
            if head in ("dict", "Dict"):
                return {("dict",)}
            return {("class", head or "?")}
        if isinstance(expr, (ast.Name, ast.Attribute)):
            name = last_name(expr)
            if isinstance(expr, ast.Name) and name in _BUILTIN_TYPES:
                return {(name,)} if name in ("int", "float", "str", "bool", "dict") else \
                    {("list", frozenset({("class", "?")}))} if name == "list" else {("class", name)}
            found = self.src.entity(expr, mod)
            if found is None or found[0] == "external":
                return {("class", name or "?")}
            if found[0] == "value":
                return self.atoms(found[2], found[1], depth + 1)
            if found[0] == "class":
                fmod, fcls = found[1], found[2]
                if self.classes.is_dataclass(fmod, fcls):
                    return {("dataclass", fcls.name)}
                bases = self.classes.base_names(fmod, fcls)
                if "dict" in bases or "Dict" in bases:
                    return {("dictsub", fcls.name)}
                return {("class", fcls.name)}
            return {("class", name or "?")}
        return {("class", "?")}

    def literal_values(self, expr: ast.AST, mod: Module, depth: int) -> Optional[List[Any]]:
        """Values of one Literal[...] argument: a constant or a nested Literal alias."""
        if isinstance(expr, ast.Constant):
            return [expr.value]
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub) \
                and isinstance(expr.operand, ast.Constant):
            return [-expr.operand.value]
        if isinstance(expr, (ast.Name, ast.Attribute)):
            atoms = self.atoms(expr, mod, depth + 1)
            if len(atoms) == 1:
                atom = next(iter(atoms))
                if atom[0] == "literal":
                    return list(atom[1])
        return None


def first_atom(atoms: Set[tuple], kind: str) -> Optional[tuple]:
    return next((a for a in atoms if a[0] == kind), None)
