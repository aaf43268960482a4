"""The checks a nested config class runs on its own fields' values, read with `ast`.

`--compilation-config '{"custom_ops": ["all", "none"]}'` is refused at parse time by the
class's own post-init, in a different shape per release: `assert count_none + count_all <= 1`
over `self.custom_ops.count("none")` (0.8.5 `model_post_init`, 0.10 `__post_init__`); a loop
`for op in self.custom_ops: if op not in {"all", "none"} and (len(op) < 2 or op[0] not in
{"+", "-"}): raise` (0.11+), a comprehension `len([op for op in ... if op in {...}]) > 1` and
a set intersection of `op[1:]` (0.32 has all of them but the assert). Those are expressions over the JSON value the user wrote, so
this module reads the post-init of each nested config that EngineArgs builds at parse time
(its field is annotated with the class) into a flat program lint runs on that value:

* `ir.Let(name, expr)`: a local set at the method's top level;
* `ir.FieldGuard(test, message, exception, fields)`: `if test: raise E(message)`, or `assert
  t, m` (a guard on `not t`); `fields` are the class's fields it reads (through the lets);
* `ir.Each(var, iterable, test, message, exception, fields)`: `for var in it: if test: raise`;
* `ir.MaybeAdd(field, value)`: `if ...: self.f.append(const)` (the condition is not read: lint
  runs the checks with and without it, and counts a refusal only when both refuse);
* `ir.Forget(name)`: anything else that changes a field or local.

Expressions are read by expressions.py (shared with guard_programs), where `self.x` is a field
only for the class's own fields and only the names this method sets are locals. What cannot be
read is `ir.UNKNOWN`: it can hide a check, never invent one. Cross-field checks against other
configs stay with guard_programs.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Set, Tuple

from patchops.lint.checks import ir
from patchops.lint.checks.ir import UNKNOWN
from patchops.lint.extract import expressions
from patchops.lint.extract.expressions import PURE_BUILTINS, PURE_METHODS, Context
from patchops.lint.extract.source_tree import Module, last_name
from patchops.lint.extract.static_eval import UNRESOLVED, Classes

ENTRY_METHODS = ("model_post_init", "__post_init__")
MUTATING_METHODS = frozenset({"append", "extend", "insert", "remove", "pop", "clear", "sort",
                              "reverse", "update", "add", "discard", "setdefault"})


def parse_time_classes(classes: Classes, engine: Optional[Tuple[Module, ast.ClassDef]],
                       names: Set[str]) -> Set[str]:
    """Return the classes among `names` an EngineArgs field is annotated with (built at parse)."""
    out: Set[str] = set()
    if engine is None:
        return out
    for info in classes.fields(*engine).values():
        for node in ast.walk(info.annotation):
            if isinstance(node, (ast.Name, ast.Attribute)) and last_name(node) in names:
                out.add(last_name(node))
    return out


def value_checks(classes: Classes, mod: Module, cls: ast.ClassDef) -> Dict[str, Any]:
    """Return {"program": [...], "defaults": {field: literal}} of one class, or {} without checks."""
    fields = set(classes.fields(mod, cls))
    methods = {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)}
    reader = _Reader(fields, methods)
    for name in ENTRY_METHODS:
        if name in methods:
            reader.block(methods[name].body)
    checks = [i for i, item in enumerate(reader.items) if isinstance(item, (ir.FieldGuard, ir.Each))]
    if not checks:
        return {}
    program: List[ir.NestedStatement] = []
    for item in reader.items[:checks[-1] + 1]:      # what follows the last check changes nothing
        if item not in program or not isinstance(item, (ir.Forget, ir.MaybeAdd)):
            program.append(item)
    read = {f for item in program if isinstance(item, (ir.FieldGuard, ir.Each)) for f in item.fields}
    defaults = {}
    for name in sorted(read):
        value = classes.field_default(mod, cls, name)
        if value is not UNRESOLVED and _plain(value):
            defaults[name] = value
    return {"program": ir.nested_json(tuple(program)), "defaults": defaults, "validated": sorted(read & _validated(cls))}


def _validated(cls: ast.ClassDef) -> Set[str]:
    """Return the fields a `field_validator` converts first: their post-init value is not the JSON."""
    return {a.value for stmt in cls.body if isinstance(stmt, ast.FunctionDef)
            for deco in stmt.decorator_list
            if isinstance(deco, ast.Call) and last_name(deco.func) == "field_validator"
            for a in deco.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}


def _plain(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return value is None or isinstance(value, (bool, int, float, str))


class _Reader:
    """Flatten a post-init's top-level statements into let/guard/each/maybe_add/forget items."""

    def __init__(self, fields: Set[str], methods: Dict[str, ast.FunctionDef]):
        self.fields = fields
        self.methods = methods
        self.items: List[ir.NestedStatement] = []
        self.locals: Dict[str, Set[str]] = {}     # local -> the fields its value was read from

    def block(self, body: List[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.Return):
                return
            if isinstance(stmt, ast.Assert):
                test = self.expr(stmt.test)
                self.guard(ir.Not(test), stmt.test, stmt.msg, "AssertionError")
            elif isinstance(stmt, ast.If) and _only_raises(stmt.body) and not stmt.orelse:
                exc = stmt.body[0].exc
                kind = last_name(exc.func if isinstance(exc, ast.Call) else exc) or "Exception"
                msg = exc.args[0] if isinstance(exc, ast.Call) and exc.args else None
                self.guard(self.expr(stmt.test), stmt.test, msg, kind)
                self.forget(stmt.test)
            elif isinstance(stmt, ast.If) and self.maybe_add(stmt):
                pass
            elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], ast.Name):
                self.forget(stmt.value)
                name = stmt.targets[0].id
                value = self.expr(stmt.value)
                self.items.append(ir.Let(name, value))
                self.locals[name] = self.reads(stmt.value) if value is not UNKNOWN else set()
            elif isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name) and not stmt.orelse \
                    and len(stmt.body) == 1 and isinstance(stmt.body[0], ast.If) \
                    and _only_raises(stmt.body[0].body) and not stmt.body[0].orelse:
                self.each(stmt)
            else:
                self.forget(stmt)

    def guard(self, test: ir.Expr, node: ast.AST, msg: Optional[ast.AST], kind: str) -> None:
        fields = sorted(self.reads(node))
        if test is not UNKNOWN and fields:      # one on no field never sees the user's value
            self.items.append(ir.FieldGuard(test, self.message(msg), kind, tuple(fields)))

    def each(self, stmt: ast.For) -> None:
        var = stmt.target.id
        inner = stmt.body[0]
        exc = inner.body[0].exc
        kind = last_name(exc.func if isinstance(exc, ast.Call) else exc) or "Exception"
        msg = exc.args[0] if isinstance(exc, ast.Call) and exc.args else None
        saved = self.locals.get(var)
        self.locals[var] = self.reads(stmt.iter)
        iterable, test = self.expr(stmt.iter), self.expr(inner.test)
        fields = sorted(self.reads(stmt.iter) | self.reads(inner.test))
        if UNKNOWN not in (iterable, test) and fields:
            self.items.append(ir.Each(var, iterable, test, self.message(msg), kind, tuple(fields)))
        self.forget(stmt)
        if saved is None:
            self.locals.pop(var, None)
        else:
            self.locals[var] = saved

    def maybe_add(self, stmt: ast.If) -> bool:
        """Read `if ...: self.f.append(const)` (0.32 adds "+rotary_embedding" under pass flags)."""
        if stmt.orelse or len(stmt.body) != 1 or not isinstance(stmt.body[0], ast.Expr):
            return False
        call = stmt.body[0].value
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "append" and len(call.args) == 1
                and isinstance(call.args[0], ast.Constant) and _self_field(call.func.value) in self.fields):
            return False
        self.forget(stmt.test)
        self.items.append(ir.MaybeAdd(_self_field(call.func.value), call.args[0].value))
        return True

    def forget(self, node: ast.AST, seen: Optional[Set[str]] = None) -> None:
        """Mark what `node` may change as unknown: assigned or mutated fields and locals."""
        seen = set() if seen is None else seen
        for sub in ast.walk(node):
            targets: List[ast.AST] = []
            if isinstance(sub, ast.Assign):
                targets = sub.targets
            elif isinstance(sub, (ast.AugAssign, ast.AnnAssign, ast.For, ast.comprehension)):
                targets = [sub.target] if not isinstance(sub, ast.comprehension) else []
            elif isinstance(sub, (ast.With,)):
                targets = [i.optional_vars for i in sub.items if i.optional_vars is not None]
            elif isinstance(sub, ast.NamedExpr):
                targets = [sub.target]
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute):
                owner = sub.func.value
                if _self_field(owner) is None and isinstance(owner, ast.Name) and owner.id == "self":
                    self.forget_method(sub.func.attr, seen)
                elif sub.func.attr in MUTATING_METHODS:
                    targets = [owner]
            if isinstance(sub, ast.Call) and not (isinstance(sub.func, ast.Name) and sub.func.id in PURE_BUILTINS) \
                    and not (isinstance(sub.func, ast.Attribute) and sub.func.attr in PURE_METHODS) \
                    and last_name(getattr(sub.func, "value", None)) not in ("logger", "warnings"):
                targets = targets + list(sub.args)      # a function handed a list may change it
            for target in targets:
                for t in ast.walk(target):
                    field = _self_field(t)
                    if field in self.fields:
                        self.items.append(ir.Forget(ir.Name("field", field)))
                    elif isinstance(t, ast.Name) and t.id in self.locals:
                        self.items.append(ir.Forget(ir.Name("local", t.id)))
                        self.locals[t.id] = set()

    def forget_method(self, name: str, seen: Set[str]) -> None:
        if name in seen:
            return
        seen.add(name)
        method = self.methods.get(name)
        if method is None:       # inherited or dynamic: it may change any field
            for field in sorted(self.fields):
                self.items.append(ir.Forget(ir.Name("field", field)))
            return
        for sub in ast.walk(method):
            if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store) and sub.attr in self.fields \
                    and isinstance(sub.value, ast.Name) and sub.value.id == "self":
                self.items.append(ir.Forget(ir.Name("field", sub.attr)))
        self.forget(method, seen)

    def reads(self, node: ast.AST) -> Set[str]:
        out: Set[str] = set()
        for sub in ast.walk(node):
            field = _self_field(sub)
            if field in self.fields:
                out.add(field)
            elif isinstance(sub, ast.Name) and sub.id in self.locals:
                out |= self.locals[sub.id]
        return out

    def message(self, node: Optional[ast.AST]) -> ir.Message:
        return expressions.message(node, self.context())

    def expr(self, node: ast.AST) -> ir.Expr:
        return expressions.expression(node, self.context())

    def context(self) -> Context:
        """`self.x` is a field only for the class's fields, and only names set here are locals."""
        return Context(fields=frozenset(self.fields), locals=frozenset(self.locals))


def _self_field(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _only_raises(body: List[ast.stmt]) -> bool:
    return len(body) == 1 and isinstance(body[0], ast.Raise) and body[0].exc is not None
