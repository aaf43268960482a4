"""vLLM's config checks as small frozen records: expressions, message pieces and statements.

Over 400 lines because the records and both directions of their JSON must change together:
a record, its reader and its writer, one place apart, keep the packs byte-identical.

The extractor reads a config class's checking methods into these and the facts hold them as
JSON lists (`to_json`, `parse`, exactly the lists the packs ship); the interpreter runs them.
`UNKNOWN` is the one unknown of both sides: an expression the reader could not read, and the
value of whatever the launch does not decide. The JSON forms, by record:

* names: `Name` `["field", x]` (`self.x` of the config class; `"dest"`: an EngineArgs flag,
  `"param"` an `__init__` parameter, `"local"`, `"env"` `envs.X`, `"model"` a path into the
  checkpoint's ModelConfig, `"host"` a platform question), `Other` `["other", Cls, x]`,
  `Has` `["has", x]` (`hasattr(self, "x")`);
* values: `Const` `["const", v]`, `Items` `["tuple" | "list" | "set", [...]]`;
* operations: `Logic` `["and" | "or", [...]]`, `Not`, `Neg`, `Compare` `["cmp", op, a, b]`,
  `Binary` `["bin", op, a, b]`, `IfExp`, `Index`, `Slice`, `Attr` (a key of a config given as
  a mapping), `IsInstance` `["isinstance", e, [type names]]`, `Call` `["call", fn, [args]]` (a
  pure builtin), `Method` `["method", e, name, [args]]`, `Comp` `["comp", shape, var, it,
  [conds], element]`, `Some` `["any", var, it, test]` (a loop of guards: some item passes);
* message pieces: `Text` `["text", s]`, `Hole` `["expr", e, conversion]`;
* a class's program (config_checks): `Assign` `["assign", cond, target, e]` (target a `Name`
  or `ALL`, `["all"]`: every field), `Guard` `["guard", cond, test, message, exception]`,
  `Build` `["build", cond, Cls, {keyword: e}]` (where EngineArgs' own program builds a class);
* a nested config's program (nested_values): `Let` `["let", n, e]`, `FieldGuard` `["guard",
  test, message, exception, fields]`, `Each` `["each", var, it, test, message, exception,
  fields]`, `MaybeAdd` `["maybe_add", field, v]`, `Forget` `["forget", name]`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Iterator, List, Tuple, Union


class Expr:
    """An expression of a check."""

    def children(self) -> Iterator["Expr"]:
        """Yield the expressions directly inside this one."""
        for f in fields(self):     # type: ignore[arg-type]
            got = getattr(self, f.name)
            if isinstance(got, Expr):
                yield got
            elif isinstance(got, tuple):
                yield from (g for g in got if isinstance(g, Expr))


@dataclass(frozen=True)
class Unknown(Expr):
    """What the reader could not read, and what a launch does not decide."""

    def __repr__(self) -> str:
        return "…"


UNKNOWN = Unknown()
ALL_NAME_KINDS = ("field", "dest", "param", "local", "env", "model", "host")


@dataclass(frozen=True)
class Name(Expr):
    kind: str
    name: str


@dataclass(frozen=True)
class All(Expr):
    """Every field of the class (a call lint does not follow may set any)."""


ALL = All()


@dataclass(frozen=True)
class Other(Expr):
    config_class: str
    name: str


@dataclass(frozen=True)
class Has(Expr):
    name: str


@dataclass(frozen=True)
class Const(Expr):
    value: Any


@dataclass(frozen=True)
class Items(Expr):
    shape: str
    items: Tuple[Expr, ...]


@dataclass(frozen=True)
class Logic(Expr):
    op: str
    parts: Tuple[Expr, ...]


@dataclass(frozen=True)
class Not(Expr):
    operand: Expr


@dataclass(frozen=True)
class Neg(Expr):
    operand: Expr


@dataclass(frozen=True)
class Compare(Expr):
    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Binary(Expr):
    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class IfExp(Expr):
    test: Expr
    body: Expr
    orelse: Expr


@dataclass(frozen=True)
class Index(Expr):
    value: Expr
    index: Expr


@dataclass(frozen=True)
class Slice(Expr):
    value: Expr
    lower: Expr
    upper: Expr


@dataclass(frozen=True)
class Attr(Expr):
    value: Expr
    name: str


@dataclass(frozen=True)
class IsInstance(Expr):
    value: Expr
    types: Tuple[str, ...]


@dataclass(frozen=True)
class Call(Expr):
    function: str
    args: Tuple[Expr, ...]


@dataclass(frozen=True)
class Method(Expr):
    receiver: Expr
    name: str
    args: Tuple[Expr, ...]


@dataclass(frozen=True)
class Comp(Expr):
    shape: str
    var: str
    iterable: Expr
    conds: Tuple[Expr, ...]
    element: Expr


@dataclass(frozen=True)
class Some(Expr):
    var: str
    iterable: Expr
    test: Expr


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Hole:
    expr: Expr
    conversion: str


Piece = Union[Text, Hole]
Message = Tuple[Piece, ...]


@dataclass(frozen=True)
class Assign:
    cond: Expr
    target: Expr
    value: Expr


@dataclass(frozen=True)
class Guard:
    cond: Expr
    test: Expr
    message: Message
    exception: str


@dataclass(frozen=True)
class Build:
    cond: Expr
    config_class: str
    args: Tuple[Tuple[str, Expr], ...]


@dataclass(frozen=True)
class Let:
    name: str
    value: Expr


@dataclass(frozen=True)
class FieldGuard:
    test: Expr
    message: Message
    exception: str
    fields: Tuple[str, ...]


@dataclass(frozen=True)
class Each:
    var: str
    iterable: Expr
    test: Expr
    message: Message
    exception: str
    fields: Tuple[str, ...]


@dataclass(frozen=True)
class MaybeAdd:
    field: str
    value: Any


@dataclass(frozen=True)
class Forget:
    target: Name


def message_text(message: Message) -> str:
    """Return a message's text without its values (what a rule's `explains` fragments match)."""
    return "".join(piece.text for piece in message if isinstance(piece, Text))


def statement_exprs(statement: Any) -> Iterator[Expr]:
    """Yield the expressions a statement holds, its message's holes and keywords too."""
    for f in fields(statement):
        got = getattr(statement, f.name)
        if isinstance(got, Expr):
            yield got
        elif isinstance(got, tuple):
            for item in got:
                if isinstance(item, Hole):
                    yield item.expr
                elif isinstance(item, tuple) and isinstance(item[-1], Expr):
                    yield item[-1]


def walk(expr: Expr) -> Iterator[Expr]:
    """Yield `expr` and every expression inside it, outermost first."""
    yield expr
    for child in expr.children():
        yield from walk(child)


# -- JSON --------------------------------------------------------------------------------------

_CONTAINERS = ("tuple", "list", "set")
_PAIRS = {"cmp": Compare, "bin": Binary}


def parse(data: list) -> Expr:  # noqa: C901 - one branch per node kind
    """Return the expression a JSON list states."""
    kind = data[0]
    if kind == "unknown":
        return UNKNOWN
    if kind == "all":
        return ALL
    if kind in ALL_NAME_KINDS:
        return Name(kind, data[1])
    if kind == "other":
        return Other(data[1], data[2])
    if kind == "has":
        return Has(data[1])
    if kind == "const":
        return Const(data[1])
    if kind in _CONTAINERS:
        return Items(kind, _many(data[1]))
    if kind in ("and", "or"):
        return Logic(kind, _many(data[1]))
    if kind == "not":
        return Not(parse(data[1]))
    if kind == "neg":
        return Neg(parse(data[1]))
    if kind in _PAIRS:
        return _PAIRS[kind](data[1], parse(data[2]), parse(data[3]))
    if kind == "ifexp":
        return IfExp(parse(data[1]), parse(data[2]), parse(data[3]))
    if kind == "index":
        return Index(parse(data[1]), parse(data[2]))
    if kind == "slice":
        return Slice(parse(data[1]), parse(data[2]), parse(data[3]))
    if kind == "attr":
        return Attr(parse(data[1]), data[2])
    if kind == "isinstance":
        return IsInstance(parse(data[1]), tuple(data[2]))
    if kind == "call":
        return Call(data[1], _many(data[2]))
    if kind == "method":
        return Method(parse(data[1]), data[2], _many(data[3]))
    if kind == "comp":
        return Comp(data[1], data[2], parse(data[3]), _many(data[4]), parse(data[5]))
    if kind == "any":
        return Some(data[1], parse(data[2]), parse(data[3]))
    raise ValueError(f"not an expression of a check: {data!r}")


def _many(items: List[list]) -> Tuple[Expr, ...]:
    return tuple(parse(item) for item in items)


def to_json(expr: Expr) -> list:  # noqa: C901 - one branch per node kind
    """Return the JSON list of an expression (`parse`'s inverse)."""
    if isinstance(expr, Unknown):
        return ["unknown"]
    if isinstance(expr, All):
        return ["all"]
    if isinstance(expr, (Name, Has)):
        return [expr.kind if isinstance(expr, Name) else "has", expr.name]
    if isinstance(expr, Other):
        return ["other", expr.config_class, expr.name]
    if isinstance(expr, Const):
        return ["const", expr.value]
    if isinstance(expr, Items):
        return [expr.shape, [to_json(e) for e in expr.items]]
    if isinstance(expr, Logic):
        return [expr.op, [to_json(e) for e in expr.parts]]
    if isinstance(expr, (Not, Neg)):
        return ["not" if isinstance(expr, Not) else "neg", to_json(expr.operand)]
    if isinstance(expr, (Compare, Binary)):
        return ["cmp" if isinstance(expr, Compare) else "bin", expr.op, to_json(expr.left), to_json(expr.right)]
    if isinstance(expr, IfExp):
        return ["ifexp", to_json(expr.test), to_json(expr.body), to_json(expr.orelse)]
    if isinstance(expr, Index):
        return ["index", to_json(expr.value), to_json(expr.index)]
    if isinstance(expr, Slice):
        return ["slice", to_json(expr.value), to_json(expr.lower), to_json(expr.upper)]
    if isinstance(expr, Attr):
        return ["attr", to_json(expr.value), expr.name]
    if isinstance(expr, IsInstance):
        return ["isinstance", to_json(expr.value), list(expr.types)]
    if isinstance(expr, Call):
        return ["call", expr.function, [to_json(a) for a in expr.args]]
    if isinstance(expr, Method):
        return ["method", to_json(expr.receiver), expr.name, [to_json(a) for a in expr.args]]
    if isinstance(expr, Comp):
        return ["comp", expr.shape, expr.var, to_json(expr.iterable), [to_json(c) for c in expr.conds],
                to_json(expr.element)]
    if isinstance(expr, Some):
        return ["any", expr.var, to_json(expr.iterable), to_json(expr.test)]
    raise TypeError(f"not an expression of a check: {expr!r}")


def parse_message(data: List[list]) -> Message:
    return tuple(Text(p[1]) if p[0] == "text" else Hole(parse(p[1]), p[2]) for p in data)


def message_json(message: Message) -> List[list]:
    return [["text", p.text] if isinstance(p, Text) else ["expr", to_json(p.expr), p.conversion] for p in message]


Statement = Union[Assign, Guard, Build]
NestedStatement = Union[Let, FieldGuard, Each, MaybeAdd, Forget]


def parse_program(items: List[list]) -> Tuple[Statement, ...]:
    """Return a config class's program (facts `config_checks`) as records."""
    out: List[Statement] = []
    for item in items:
        if item[0] == "assign":
            out.append(Assign(parse(item[1]), parse(item[2]), parse(item[3])))
        elif item[0] == "guard":
            out.append(Guard(parse(item[1]), parse(item[2]), parse_message(item[3]), item[4]))
        elif item[0] == "build":
            out.append(Build(parse(item[1]), item[2], tuple((k, parse(v)) for k, v in item[3].items())))
        else:
            raise ValueError(f"not a statement of a check: {item!r}")
    return tuple(out)


def program_json(program: Tuple[Statement, ...]) -> List[list]:
    out: List[list] = []
    for item in program:
        if isinstance(item, Assign):
            out.append(["assign", to_json(item.cond), to_json(item.target), to_json(item.value)])
        elif isinstance(item, Guard):
            out.append(["guard", to_json(item.cond), to_json(item.test), message_json(item.message), item.exception])
        else:
            out.append(["build", to_json(item.cond), item.config_class, {k: to_json(v) for k, v in item.args}])
    return out


def parse_nested(items: List[list]) -> Tuple[NestedStatement, ...]:
    """Return a nested config's post-init program (facts `nested_configs`' checks) as records."""
    out: List[NestedStatement] = []
    for item in items:
        kind = item[0]
        if kind == "let":
            out.append(Let(item[1], parse(item[2])))
        elif kind == "guard":
            out.append(FieldGuard(parse(item[1]), parse_message(item[2]), item[3], tuple(item[4])))
        elif kind == "each":
            out.append(Each(item[1], parse(item[2]), parse(item[3]), parse_message(item[4]), item[5],
                            tuple(item[6])))
        elif kind == "maybe_add":
            out.append(MaybeAdd(item[1], item[2]))
        elif kind == "forget":
            target = parse(item[1])
            if not isinstance(target, Name):
                raise ValueError(f"not a name to forget: {item!r}")
            out.append(Forget(target))
        else:
            raise ValueError(f"not a statement of a nested check: {item!r}")
    return tuple(out)


def nested_json(program: Tuple[NestedStatement, ...]) -> List[list]:
    out: List[list] = []
    for item in program:
        if isinstance(item, Let):
            out.append(["let", item.name, to_json(item.value)])
        elif isinstance(item, FieldGuard):
            out.append(["guard", to_json(item.test), message_json(item.message), item.exception, list(item.fields)])
        elif isinstance(item, Each):
            out.append(["each", item.var, to_json(item.iterable), to_json(item.test), message_json(item.message),
                        item.exception, list(item.fields)])
        elif isinstance(item, MaybeAdd):
            out.append(["maybe_add", item.field, item.value])
        else:
            out.append(["forget", to_json(item.target)])
    return out

